// What the last pass over each distribution found, per namespace: the ground a pass of a few
// namespaces stands on (see pass-scopes.ts). It holds only while the distribution's spec and
// template are those that pass planned with; strict distributions always plan every target (one
// conflict anywhere holds every write back).
import type { PassOutcomes } from '../domain/status.js';
import type { Action, Outcome, ResolvedDistribution } from '../domain/types.js';

interface LastPass {
  key: string;
  /** No write failed: a pass that had failures is followed by a full one (it retries). */
  clean: boolean;
  /** Where the copy is in sync (or was just written): a name each, the common case kept small. */
  inSync: Set<string>;
  /** Every other outcome by namespace; a failed delete of a stray (a copy under an earlier name) by namespace and name. */
  others: Map<string, Outcome>;
}

/**
 * What a status needs of an outcome: a copy written is kept as one in sync, without the copy
 * itself (10,000 rendered copies of a large template must not outlive their pass).
 */
function slim(outcome: Outcome): Outcome {
  const { action } = outcome;
  if (action.type !== 'create' && action.type !== 'update' && action.type !== 'recreate') return outcome;
  const bare: Action = { type: 'in-sync', namespace: action.namespace };
  return outcome.ok ? { action: bare, ok: true } : { ...outcome, action: bare };
}

/** A copy deleted from, or left to, a namespace no longer targeted. */
const LEFT: ReadonlySet<Action['type']> = new Set(['delete', 'release']);

function keyOf(outcome: Outcome): string {
  const { action } = outcome;
  return action.type === 'delete' ? `${action.namespace}/${action.name}` : action.namespace;
}

/** What the plan of every target depends on, besides the namespaces and their copies. */
function passKey(rd: ResolvedDistribution, hash: string): string {
  return `${rd.metadata.uid ?? ''}/${rd.metadata.generation ?? ''}/${hash}`;
}

/** Forgets what is known of the namespaces `within`: which were in sync, and whether any had another outcome. */
function dropWithin(last: LastPass, within: ReadonlySet<string> | undefined): { wasInSync: Set<string>; othersDropped: boolean } {
  const wasInSync = new Set<string>();
  let othersDropped = false;
  for (const namespace of within ?? []) {
    if (last.inSync.delete(namespace)) wasInSync.add(namespace);
    else if (last.others.delete(namespace)) othersDropped = true;
  }
  return { wasInSync, othersDropped };
}

export class LastPasses {
  private readonly passes = new Map<string, LastPass>();

  /** Whether a pass over a few namespaces of `rd` can stand on the last one. */
  holds(rd: ResolvedDistribution, hash: string): boolean {
    const last = this.passes.get(rd.metadata.name);
    return rd.spec.writePolicy !== 'strict' && last?.clean === true && last.key === passKey(rd, hash);
  }

  /**
   * Records a pass's outcomes: those of a full pass (`within` undefined) replace what was known;
   * those of a pass within some namespaces replace what was known there. Returns whether what is
   * known changed (a full pass always counts as a change): when not, the status it gives is the
   * one the last pass gave.
   */
  record(rd: ResolvedDistribution, hash: string, outcomes: readonly Outcome[], within?: ReadonlySet<string>): boolean {
    let last = within === undefined ? undefined : this.passes.get(rd.metadata.name);
    if (last === undefined) {
      last = { key: passKey(rd, hash), clean: true, inSync: new Set(), others: new Map() };
      this.passes.set(rd.metadata.name, last);
    }
    last.clean &&= outcomes.every((outcome) => outcome.ok);
    // Unchanged: the namespaces within were in sync, and are so again (and no other is).
    const { wasInSync, othersDropped } = dropWithin(last, within);
    let unchanged = within !== undefined && !othersDropped;
    let kept = 0;
    for (const outcome of outcomes) {
      // Deletes and releases done count in no status.
      if (outcome.ok && LEFT.has(outcome.action.type)) continue;
      const slimmed = slim(outcome);
      if (slimmed.ok && slimmed.action.type === 'in-sync') {
        last.inSync.add(slimmed.action.namespace);
        if (wasInSync.has(slimmed.action.namespace)) kept += 1;
        else unchanged = false;
      } else {
        last.others.set(keyOf(slimmed), slimmed);
        unchanged = false;
      }
    }
    return !unchanged || kept !== wasInSync.size;
  }

  /** What the passes recorded so far found of every target: the namespaces in sync by name, the other outcomes whole. */
  found(name: string): PassOutcomes {
    const last = this.passes.get(name);
    if (last === undefined) return { outcomes: [] };
    return { outcomes: [...last.others.values()], inSync: last.inSync };
  }

  /** Drops what is known of namespaces other than `namespaces` (a sliced full pass did not find them). */
  retain(name: string, namespaces: ReadonlySet<string>): void {
    const last = this.passes.get(name);
    if (last === undefined) return;
    for (const namespace of last.inSync) if (!namespaces.has(namespace)) last.inSync.delete(namespace);
    for (const [key, outcome] of last.others) if (!namespaces.has(outcome.action.namespace)) last.others.delete(key);
  }

  forget(name: string): void {
    this.passes.delete(name);
  }
}
