// What the soak did and saw, kept as it goes: the operations that took effect (for the checker's
// expectations), every value it wrote (for the leak check), counts for the report.
import type { AdoptableObject, Expectations, ForeignObject } from './expectations.js';
import type { Model } from './model.js';
import { isByHand, type Operation, type OperationKind } from './operations.js';
import type { Refusal } from './check-refusals.js';
import type { Outcome } from './soak-kube.js';
import { violationKey, type Violation } from './violation.js';

export interface Tally {
  ok: number;
  failed: number;
  skipped: number;
}

export interface Found extends Violation {
  round: number;
  step: number;
  /** Quiet periods in which it was still there. */
  seen: number;
}

export class Ledger {
  readonly operations = new Map<OperationKind, Tally>();
  readonly failures: { step: number; op: OperationKind; message: string }[] = [];
  readonly values: string[] = [];
  readonly violations = new Map<string, Found>();
  private readonly orphaned = new Set<string>();
  private readonly foreign: ForeignObject[] = [];
  /** Copy names whose distribution was meant to be, or may be, under writePolicy overwrite. */
  private readonly mayOverwrite = new Set<string>();
  private readonly authored = new Set<string>();
  private adoptable: AdoptableObject[] = [];
  /** This round's operations refused by admission, to be judged against the round's fault. */
  refusals: Refusal[] = [];

  constructor(private readonly ownNamespace: string) {}

  /** Before the operation runs: what its intent allows the product to do. */
  intend(operation: Operation, model: Model): void {
    if (operation.op === 'distribution-create' && operation.distribution.writePolicy === 'overwrite') this.mayOverwrite.add(operation.distribution.copyName);
    if (operation.op === 'distribution-write-policy') {
      // A policy change that fails may still have been made: count it as possibly overwrite too.
      const rd = model.distributions.get(operation.name);
      if (rd) this.mayOverwrite.add(rd.copyName);
    }
    if (operation.op === 'distribution-delete' && operation.orphan) this.orphaned.add(operation.name);
    if (operation.op === 'distribution-create' && operation.distribution.byAuthor) this.authored.add(operation.distribution.name);
    this.forgetAdoptable(operation);
  }

  /** What may legitimately replace an object made for adoption: its distribution changed, its namespace relabelled, a by-hand change. */
  private forgetAdoptable(operation: Operation): void {
    const touches = (a: AdoptableObject): boolean => {
      if (isByHand(operation)) return a.kind === operation.kind && a.namespace === operation.namespace && a.name === operation.name;
      if (operation.op.startsWith('distribution-')) return 'name' in operation && operation.name === a.distribution;
      if (operation.op === 'namespace-relabel' || operation.op === 'namespace-delete') return 'name' in operation && operation.name === a.namespace;
      return false;
    };
    this.adoptable = this.adoptable.filter((a) => !touches(a));
  }

  record(step: number, operation: Operation, outcome: Outcome, timing: { startedAt: number; endedAt: number }): void {
    const tally = this.operations.get(operation.op) ?? { ok: 0, failed: 0, skipped: 0 };
    tally[outcome.result] += 1;
    this.operations.set(operation.op, tally);
    if (outcome.result === 'failed') {
      this.failures.push({ step, op: operation.op, message: outcome.message });
      this.refusals.push({ step, op: operation.op, asAuthor: 'asAuthor' in operation && operation.asAuthor === true, message: outcome.message, ...timing });
    }
    this.forgetEditedForeign(operation, outcome);
    if (outcome.result !== 'ok' || !outcome.uid) return;
    if (operation.op === 'foreign-create') {
      const { kind, namespace, name, data } = operation;
      this.foreign.push({ kind, namespace, name, uid: outcome.uid, data, labels: { 'soak.example/foreign': 'yes' }, mayBeTakenOver: false });
    }
    if (operation.op === 'foreign-adopt') {
      const { kind, namespace, name, distribution } = operation;
      this.adoptable.push({ kind, namespace, name, uid: outcome.uid, distribution });
    }
  }

  /**
   * A by-hand edit or delete may hit an object the soak made itself (it edits whatever holds the
   * copy's name): from then on, what is there is no longer what the soak recorded. An object that
   * is not ours edited by hand holds the new data.
   */
  private forgetEditedForeign(operation: Operation, outcome: Outcome): void {
    if (!isByHand(operation)) return;
    const at = this.foreign.findIndex((f) => f.kind === operation.kind && f.namespace === operation.namespace && f.name === operation.name);
    if (at < 0) return;
    const edited = this.foreign[at];
    // An edit that failed may or may not have been made: then what is there is unknown.
    if (operation.op === 'foreign-edit' && edited && outcome.result !== 'failed') {
      if (outcome.result === 'ok') edited.data = operation.data;
      return;
    }
    this.foreign.splice(at, 1);
  }

  expectations(): Expectations {
    return {
      ownNamespace: this.ownNamespace,
      orphaned: this.orphaned,
      foreign: this.foreign.map((f) => ({ ...f, mayBeTakenOver: this.mayOverwrite.has(f.name) })),
      adoptable: this.adoptable,
      authored: this.authored,
    };
  }

  /** After the round's quiet period: adoption is checked once; refusals were judged. */
  endRound(): void {
    this.adoptable = [];
    this.refusals = [];
  }

  report(found: readonly Violation[], round: number, step: number): void {
    for (const v of found) {
      const key = violationKey(v);
      const known = this.violations.get(key);
      if (known) known.seen += 1;
      else this.violations.set(key, { ...v, round, step, seen: 1 });
    }
  }
}
