import { describe, expect, it } from 'vitest';
import { copyOf, failed, ok, seedSample, T0, T1 } from '../../test/unit/builders.js';
import { computeStatus, type SourceStatus } from './status.js';
import type { Action, Condition, DistributionStatus, Outcome } from './types.js';

const rd = seedSample().generation(3).build();
const create = (namespace: string): Action => ({ type: 'create', namespace, object: copyOf(rd, namespace).build() });
const inSync = (namespace: string): Action => ({ type: 'in-sync', namespace });
const missing = (namespace: string): Action => ({ type: 'namespace-missing', namespace });
const conflict = (namespace: string): Action => ({ type: 'conflict', namespace, reason: 'foreign-object' });
const remove = (namespace: string): Action => ({ type: 'delete', namespace, name: 'game-demo', uid: 'u' });
/** A write the API server refused (403, 422): no retry of ours mends it. */
const refused = (action: Action): Outcome => failed(action, 'create', 'Forbidden: exceeded quota', false);

function summary(status: DistributionStatus): [string, string, string][] {
  return status.conditions.slice(-2).map((c: Condition) => [c.type, c.status, c.reason]);
}

describe('Ready and Stalled', () => {
  it.each<[string, Outcome[], SourceStatus | undefined, [string, string], [string, string]]>([
    ['no target at all', [], undefined, ['True', 'Synced'], ['False', 'Succeeded']],
    ['every copy in sync or written', [ok(inSync('a')), ok(create('b'))], undefined, ['True', 'Synced'], ['False', 'Succeeded']],
    ['a write that may pass (5xx, 429, a lost connection) is retried', [ok(inSync('a')), failed(create('b'), 'create')], undefined, ['False', 'CreateFailed'], ['False', 'Retrying']],
    ['a write the API server refused waits on someone', [ok(inSync('a')), refused(create('b'))], undefined, ['False', 'CreateFailed'], ['True', 'CreateFailed']],
    ['a conflict waits on someone', [ok(inSync('a')), ok(conflict('b'))], undefined, ['False', 'ResourceConflict'], ['True', 'ResourceConflict']],
    ['a missing namespace waits on someone', [ok(inSync('a')), ok(missing('b'))], undefined, ['False', 'NamespaceNotFound'], ['True', 'NamespaceNotFound']],
    ['retried and waiting at once: Stalled names what waits', [failed(create('a'), 'create'), ok(conflict('b'))], undefined, ['False', 'CreateFailed'], ['True', 'ResourceConflict']],
    ['every target in sync but a copy where it no longer targets could not be deleted', [ok(inSync('a')), failed(remove('old'), 'delete')], undefined, ['False', 'DeleteFailed'], ['False', 'Retrying']],
    ['source missing', [], { found: false, desired: 2, message: 'source Secret a/b not found' }, ['False', 'SourceNotFound'], ['True', 'SourceNotFound']],
    ['source found, its author denied', [], { found: true, denied: { desired: 2, message: 'author "alice" may not get secrets' } }, ['False', 'AuthorLacksAccess'], ['True', 'AuthorLacksAccess']],
    ['source found, all in sync', [ok(inSync('a'))], { found: true }, ['True', 'Synced'], ['False', 'Succeeded']],
  ])('%s', (_name, outcomes, source, ready, stalled) => {
    const status = computeStatus({ distribution: rd, outcomes, now: T0, ...(source ? { source } : {}) });
    expect(summary(status)).toEqual([
      ['Ready', ...ready],
      ['Stalled', ...stalled],
    ]);
  });

  it('come after every failure condition, which keep their order', () => {
    const status = computeStatus({ distribution: rd, outcomes: [], now: T0, source: { found: true, denied: { desired: 1, message: 'no' } } });
    expect(status.conditions.map((c) => c.type)).toEqual([
      'GetResourceFailed',
      'CreateResourceFailed',
      'UpdateResourceFailed',
      'DeleteResourceFailed',
      'ConflictOccurred',
      'NamespaceNotExists',
      'SourceNotFound',
      'AuthorAccessDenied',
      'Ready',
      'Stalled',
    ]);
  });

  it('say how many targets lack a copy and what every True condition says', () => {
    const status = computeStatus({ distribution: rd, outcomes: [ok(inSync('a')), ok(missing('b')), failed(create('c'), 'create'), ok(conflict('d'))], now: T0 });
    const [ready, stalled] = status.conditions.slice(-2);
    expect(ready?.message).toBe(
      '3 of 4 targets without a correct copy; CreateResourceFailed: c: the server is unavailable; ConflictOccurred: foreign-object (an object someone else made; annotate it resource-distributor.io/adopt=sample to hand it over, or use writePolicy overwrite): d; NamespaceNotExists: namespace not found: b',
    );
    // Only what waits on someone: the create in c is retried.
    expect(stalled?.message).toBe(
      'waits on a change to the cluster or the distribution; ConflictOccurred: foreign-object (an object someone else made; annotate it resource-distributor.io/adopt=sample to hand it over, or use writePolicy overwrite): d; NamespaceNotExists: namespace not found: b',
    );
    expect(computeStatus({ distribution: rd, outcomes: [ok(inSync('a')), ok(inSync('b'))], now: T0 }).conditions.at(-2)?.message).toBe('2 of 2 targets hold a correct copy');
  });

  it('keep lastTransitionTime while their status holds, and move it when it flips', () => {
    const first = computeStatus({ distribution: rd, outcomes: [ok(missing('a'))], now: T0 });
    const still = computeStatus({ distribution: seedSample().generation(3).status(first).build(), outcomes: [ok(missing('a')), ok(missing('b'))], now: T1 });
    expect(still.conditions.slice(-2).map((c) => c.lastTransitionTime)).toEqual(['2024-05-01T10:00:00Z', '2024-05-01T10:00:00Z']);
    const mended = computeStatus({ distribution: seedSample().generation(3).status(still).build(), outcomes: [ok(create('a'))], now: T1 });
    expect(mended.conditions.slice(-2).map((c) => [c.status, c.lastTransitionTime])).toEqual([
      ['True', '2024-05-01T11:30:00Z'],
      ['False', '2024-05-01T11:30:00Z'],
    ]);
  });
});
