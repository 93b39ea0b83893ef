// What the last pass over each distribution found, per namespace: the ground a pass of a few
// namespaces stands on (see pass-scopes.ts). It holds only while the distribution's spec and
// template are those that pass planned with; strict distributions always plan every target (one
// conflict anywhere holds every write back).
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

function keyOf(outcome: Outcome): string {
  const { action } = outcome;
  return action.type === 'delete' ? `${action.namespace}/${action.name}` : action.namespace;
}

/** What the plan of every target depends on, besides the namespaces and their copies. */
function passKey(rd: ResolvedDistribution, hash: string): string {
  return `${rd.metadata.uid ?? ''}/${rd.metadata.generation ?? ''}/${hash}`;
}

export class LastPasses {
  private readonly passes = new Map<string, LastPass>();

  /** Whether a pass over a few namespaces of `rd` can stand on the last one. */
  holds(rd: ResolvedDistribution, hash: string): boolean {
    const last = this.passes.get(rd.metadata.name);
    return rd.spec.writePolicy !== 'strict' && last?.clean === true && last.key === passKey(rd, hash);
  }

  /**
   * Records a pass's outcomes, and returns every target's: those of a full pass (`within`
   * undefined) replace what was known; those of a pass within some namespaces replace what was
   * known there.
   */
  record(rd: ResolvedDistribution, hash: string, outcomes: readonly Outcome[], within?: ReadonlySet<string>): Outcome[] {
    let last = within === undefined ? undefined : this.passes.get(rd.metadata.name);
    if (last === undefined) {
      last = { key: passKey(rd, hash), clean: true, inSync: new Set(), others: new Map() };
      this.passes.set(rd.metadata.name, last);
    }
    last.clean &&= outcomes.every((outcome) => outcome.ok);
    for (const namespace of within ?? []) {
      last.inSync.delete(namespace);
      last.others.delete(namespace);
    }
    for (const outcome of outcomes) {
      // Deletes done count in no status.
      if (outcome.ok && outcome.action.type === 'delete') continue;
      const kept = slim(outcome);
      if (kept.ok && kept.action.type === 'in-sync') last.inSync.add(kept.action.namespace);
      else last.others.set(keyOf(kept), kept);
    }
    const inSync = [...last.inSync].map((namespace): Outcome => ({ action: { type: 'in-sync', namespace }, ok: true }));
    return [...inSync, ...last.others.values()];
  }

  forget(name: string): void {
    this.passes.delete(name);
  }
}
