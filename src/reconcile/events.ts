// Which Events a status change deserves. Events repeat nothing: one is emitted when a failure
// condition turns True or the set of namespaces it names changes, not on every pass.
import { CONDITION_REASONS } from '../domain/status.js';
import type { Condition, DistributionStatus } from '../domain/types.js';

export interface PlannedEvent {
  reason: string;
  message: string;
}

function sameNamespaces(a: Condition | undefined, b: Condition): boolean {
  const left = a?.failedNamespace ?? [];
  const right = b.failedNamespace ?? [];
  return left.length === right.length && left.every((ns, i) => ns === right[i]);
}

export function eventsFor(previous: DistributionStatus | undefined, next: DistributionStatus): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  for (const condition of next.conditions) {
    if (condition.status !== 'True') continue;
    const before = previous?.conditions.find((c) => c.type === condition.type);
    if (before?.status === 'True' && sameNamespaces(before, condition)) continue;
    events.push({ reason: CONDITION_REASONS[condition.type], message: condition.message ?? condition.type });
  }
  return events;
}
