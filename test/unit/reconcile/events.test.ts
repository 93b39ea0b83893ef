import { describe, expect, it } from 'vitest';
import type { Condition, ConditionType, DistributionStatus } from '../../../src/domain/types.js';
import { eventsFor } from '../../../src/reconcile/events.js';

/** A status where only `type` fails, in `namespaces` (none: every condition False). */
function status(type: ConditionType, ...namespaces: string[]): DistributionStatus {
  const failing: Condition = {
    type,
    status: 'True',
    reason: 'x',
    message: `${type}: ${namespaces.join(', ')}`,
    lastTransitionTime: 't',
    failedNamespace: namespaces,
  };
  return { desired: 1, succeeded: 0, failed: 1, conditions: namespaces.length > 0 ? [failing] : [] };
}

describe('eventsFor', () => {
  it.each<[string, DistributionStatus | undefined, DistributionStatus, string[]]>([
    ['a first status with a failure', undefined, status('ConflictOccurred', 'a'), ['ResourceConflict']],
    ['a failure that appears', status('ConflictOccurred'), status('ConflictOccurred', 'a'), ['ResourceConflict']],
    ['the same failure again', status('ConflictOccurred', 'a'), status('ConflictOccurred', 'a'), []],
    ['a failure that spreads to another namespace', status('CreateResourceFailed', 'a'), status('CreateResourceFailed', 'a', 'b'), ['CreateFailed']],
    ['a failure that moves to another namespace', status('CreateResourceFailed', 'a'), status('CreateResourceFailed', 'b'), ['CreateFailed']],
    ['a failure that recedes', status('CreateResourceFailed', 'a', 'b'), status('CreateResourceFailed', 'b'), []],
    ['a failure that ends', status('NamespaceNotExists', 'a'), status('NamespaceNotExists'), []],
  ])('%s', (_, previous, next, reasons) => {
    expect(eventsFor(previous, next).map((event) => event.reason)).toEqual(reasons);
  });

  it('brings no Event for Ready and Stalled: they sum up the failure conditions, which have theirs', () => {
    const failing = status('ConflictOccurred', 'a');
    const summed: DistributionStatus = {
      ...failing,
      conditions: [
        ...failing.conditions,
        { type: 'Ready', status: 'False', reason: 'ResourceConflict', lastTransitionTime: 't' },
        { type: 'Stalled', status: 'True', reason: 'ResourceConflict', lastTransitionTime: 't' },
      ],
    };
    expect(eventsFor(undefined, summed).map((event) => event.reason)).toEqual(['ResourceConflict']);
  });

  it('carries the condition message (namespaces and reasons, built without object data)', () => {
    expect(eventsFor(undefined, status('NamespaceNotExists', 'later'))).toEqual([
      { reason: 'NamespaceNotFound', message: 'NamespaceNotExists: later' },
    ]);
  });
});
