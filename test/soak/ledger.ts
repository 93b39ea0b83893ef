// What the soak did and saw, kept as it goes: the operations that took effect (for the checker's
// expectations), every value it wrote (for the leak check), counts for the report.
import type { Expectations, ForeignObject } from './expectations.js';
import type { Model } from './model.js';
import type { Operation, OperationKind } from './operations.js';
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
  }

  record(step: number, operation: Operation, outcome: Outcome): void {
    const tally = this.operations.get(operation.op) ?? { ok: 0, failed: 0, skipped: 0 };
    tally[outcome.result] += 1;
    this.operations.set(operation.op, tally);
    if (outcome.result === 'failed') this.failures.push({ step, op: operation.op, message: outcome.message });
    this.forgetEditedForeign(operation);
    if (operation.op === 'foreign-create' && outcome.result === 'ok' && outcome.uid) {
      const { kind, namespace, name, data } = operation;
      this.foreign.push({ kind, namespace, name, uid: outcome.uid, data, labels: { 'soak.example/foreign': 'yes' }, mayBeTakenOver: false });
    }
  }

  /**
   * A by-hand edit or delete may hit an object the soak made itself (it edits whatever holds the
   * copy's name): from then on, what is there is no longer what the soak recorded.
   */
  private forgetEditedForeign(operation: Operation): void {
    if (operation.op !== 'copy-edit' && operation.op !== 'copy-delete' && operation.op !== 'foreign-create') return;
    const at = this.foreign.findIndex((f) => f.kind === operation.kind && f.namespace === operation.namespace && f.name === operation.name);
    if (at >= 0) this.foreign.splice(at, 1);
  }

  expectations(): Expectations {
    return {
      ownNamespace: this.ownNamespace,
      orphaned: this.orphaned,
      foreign: this.foreign.map((f) => ({ ...f, mayBeTakenOver: this.mayOverwrite.has(f.name) })),
    };
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
