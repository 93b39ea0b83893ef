// Which Events a status change deserves. Events repeat nothing: one is emitted when a failure
// condition turns True or reaches a namespace it did not name before, not on every pass, and not
// when a failure recedes (fewer namespaces is recovery, which the status already shows). Ready and
// Stalled only sum up the failure conditions: they bring no Event of their own.
import { CONDITION_REASONS } from '../domain/status.js';
import { isSummaryCondition, type Condition, type DistributionStatus } from '../domain/types.js';

export interface PlannedEvent {
  reason: string;
  message: string;
}

function reachesNewNamespaces(before: Condition, after: Condition): boolean {
  const known = new Set(before.failedNamespace ?? []);
  return (after.failedNamespace ?? []).some((ns) => !known.has(ns));
}

/** The message is the condition's: namespaces and API error reasons, never object data. */
export function eventsFor(previous: DistributionStatus | undefined, next: DistributionStatus): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  for (const condition of next.conditions) {
    if (condition.status !== 'True' || isSummaryCondition(condition.type)) continue;
    const before = previous?.conditions.find((c) => c.type === condition.type);
    if (before?.status === 'True' && !reachesNewNamespaces(before, condition)) continue;
    events.push({ reason: CONDITION_REASONS[condition.type], message: condition.message ?? condition.type });
  }
  return events;
}
