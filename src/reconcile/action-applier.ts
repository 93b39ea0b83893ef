// How a pass applies what it planned: every action through the shared copy writer, with bounded
// parallelism, none stopping the others, and nothing started once leadership is lost.
import type { KindKey } from '../domain/kinds.js';
import type { Action, Outcome, Resource } from '../domain/types.js';
import type { ApiErrorInfo } from '../k8s/errors.js';
import { mapBounded, mapBoundedBatches } from '../bounded.js';
import type { CopyWriter, WriteOutcome } from './copy-writer.js';

/** One action of a plan, with the kind it concerns (deletes carry no object to tell it). */
export interface Planned {
  action: Action;
  kind: KindKey;
  /** What stands for the action, not attempted (its author may not write there: see author-targets). */
  refused?: WriteOutcome;
}

export type ApplyAll = (planned: readonly Planned[], signal: AbortSignal, failures?: ReadonlyMap<string, ApiErrorInfo>) => Promise<WriteOutcome[]>;

/** ApplyAll over a plan that comes a slice at a time: a slice's writes start while the next is made. */
export type ApplyAsPlanned = (slices: AsyncIterable<readonly Planned[]>, signal: AbortSignal, failures?: ReadonlyMap<string, ApiErrorInfo>) => Promise<WriteOutcome[]>;

function getFailure(action: Action, info: ApiErrorInfo): Outcome {
  return { action, ok: false, verb: 'get', message: `${info.reason}: ${info.message}`, transient: info.transient };
}

/** An action not attempted because leadership was lost; never reported (no status is written then). */
function skipped(action: Action): WriteOutcome {
  return { action, ok: false, verb: 'get', message: 'not attempted: no longer leader', transient: true };
}

export function needsRetry(outcomes: readonly Outcome[]): boolean {
  return outcomes.some((outcome) => !outcome.ok && outcome.transient);
}

/** The delete of one copy, guarded by its uid (and resourceVersion when known). */
export function deleteOf(copy: Resource): Action {
  const { namespace = '', name = '', uid = '', resourceVersion } = copy.metadata;
  return { type: 'delete', namespace, name, uid, ...(resourceVersion === undefined ? {} : { resourceVersion }) };
}

/** What applying one action comes to: its write, or the failure that stands in for it. */
function applyOne(writer: CopyWriter, signal: AbortSignal, failures: ReadonlyMap<string, ApiErrorInfo> | undefined): (planned: Planned) => Promise<WriteOutcome> {
  return ({ action, kind, refused }) => {
    if (signal.aborted) return Promise.resolve(skipped(action));
    if (refused !== undefined) return Promise.resolve(refused);
    const failed = action.type === 'delete' ? undefined : failures?.get(action.namespace);
    return failed ? Promise.resolve(getFailure(action, failed)) : writer.apply(action, kind);
  };
}

/**
 * Applies every planned action (none stops the others), unless leadership is lost meanwhile. A
 * namespace whose read failed gets that failure instead of a write (deletes go ahead).
 */
export function createActionApplier(writer: CopyWriter, parallelism: number): { applyAll: ApplyAll; applyAsPlanned: ApplyAsPlanned } {
  return {
    applyAll: (planned, signal, failures) => mapBounded(planned, parallelism, applyOne(writer, signal, failures)),
    applyAsPlanned: (slices, signal, failures) => mapBoundedBatches(slices, parallelism, applyOne(writer, signal, failures)),
  };
}
