import { describe, expect, it } from 'vitest';
import { copyOf, distribution, failed, ok, seedSample, T0, T1 } from '../../test/unit/builders.js';
import { computeStatus, MAX_FAILED_NAMESPACES, statusEquals } from './status.js';
import { CONDITION_TYPES, isSummaryCondition, type Action, type ConditionType, type DistributionStatus, type Outcome } from './types.js';

const rd = seedSample().generation(3).build();
const create = (namespace: string): Action => ({ type: 'create', namespace, object: copyOf(rd, namespace).build() });
const update = (namespace: string): Action => ({ type: 'update', namespace, object: copyOf(rd, namespace).build() });
const recreate = (namespace: string): Action => ({ type: 'recreate', namespace, object: copyOf(rd, namespace).build(), existingUid: 'u' });
const inSync = (namespace: string): Action => ({ type: 'in-sync', namespace });
const missing = (namespace: string): Action => ({ type: 'namespace-missing', namespace });
const remove = (namespace: string): Action => ({ type: 'delete', namespace, name: 'game-demo', uid: 'u' });
const conflict = (namespace: string, reason: 'foreign-object' | 'strict-blocked' = 'foreign-object'): Action => ({
  type: 'conflict',
  namespace,
  reason,
});

/** The failure conditions that are True, with their namespaces (Ready and Stalled have tables of their own). */
function trueConditions(status: DistributionStatus): Partial<Record<ConditionType, string[]>> {
  return Object.fromEntries(status.conditions.filter((c) => c.status === 'True' && !isSummaryCondition(c.type)).map((c) => [c.type, c.failedNamespace ?? []]));
}

describe('computeStatus', () => {
  it('seed example: ns-1 and ns-4 missing -> NamespaceNotExists True listing both, the other five False/Succeeded', () => {
    const outcomes = [ok(missing('ns-4')), ok(create('ns-2')), ok(missing('ns-1')), ok(create('ns-5'))];
    const status = computeStatus({ distribution: rd, outcomes, now: T0 });
    expect(status).toMatchObject({ desired: 4, succeeded: 2, failed: 2, observedGeneration: 3 });
    expect(status.conditions.map((c) => c.type)).toEqual([...CONDITION_TYPES, 'Ready', 'Stalled']);
    const notExists = status.conditions[5];
    expect(notExists).toEqual({
      type: 'NamespaceNotExists',
      status: 'True',
      reason: 'NamespaceNotFound',
      message: 'namespace not found: ns-1, ns-4',
      lastTransitionTime: '2024-05-01T10:00:00Z',
      failedNamespace: ['ns-1', 'ns-4'],
    });
    for (const condition of status.conditions.slice(0, 5)) {
      expect(condition).toEqual({ type: condition.type, status: 'False', reason: 'Succeeded', lastTransitionTime: '2024-05-01T10:00:00Z' });
    }
  });

  const COUNTED: [string, Outcome[], { desired: number; succeeded: number; failed: number }, Partial<Record<ConditionType, string[]>>][] = [
    ['nothing to do', [], { desired: 0, succeeded: 0, failed: 0 }, {}],
    ['all in sync', [ok(inSync('a')), ok(inSync('b'))], { desired: 2, succeeded: 2, failed: 0 }, {}],
    ['writes that worked', [ok(create('a')), ok(update('b')), ok(recreate('c'))], { desired: 3, succeeded: 3, failed: 0 }, {}],
    [
      'failures by verb',
      [failed(create('a'), 'create'), failed(update('b'), 'update'), failed(inSync('c'), 'get'), ok(create('d'))],
      { desired: 4, succeeded: 1, failed: 3 },
      { GetResourceFailed: ['c'], CreateResourceFailed: ['a'], UpdateResourceFailed: ['b'] },
    ],
    [
      'a recreate reports the verb that failed',
      [failed(recreate('a'), 'delete'), failed(recreate('b'), 'create')],
      { desired: 2, succeeded: 0, failed: 2 },
      { CreateResourceFailed: ['b'], DeleteResourceFailed: ['a'] },
    ],
    [
      'conflicts',
      [ok(conflict('b')), ok(conflict('a', 'strict-blocked')), ok(inSync('c'))],
      { desired: 3, succeeded: 1, failed: 2 },
      { ConflictOccurred: ['a', 'b'] },
    ],
    [
      'deletes count in no total but report their failures',
      [ok(remove('gone')), failed(remove('stuck'), 'delete'), ok(inSync('a'))],
      { desired: 1, succeeded: 1, failed: 0 },
      { DeleteResourceFailed: ['stuck'] },
    ],
    [
      'a copy in sync whose stray under an earlier name could not be deleted',
      [ok(inSync('a')), failed(remove('a'), 'delete'), ok(inSync('b'))],
      { desired: 2, succeeded: 1, failed: 1 },
      { DeleteResourceFailed: ['a'] },
    ],
  ];

  it.each(COUNTED)('%s', (_name, outcomes, counts, trueOnes) => {
    const status = computeStatus({ distribution: rd, outcomes, now: T0 });
    expect(status).toMatchObject(counts);
    expect(status.failed).toBe(status.desired - status.succeeded);
    expect(trueConditions(status)).toEqual(trueOnes);
  });

  it.each(COUNTED)('%s: the same with the namespaces in sync given by name', (_name, outcomes) => {
    const named = new Set(outcomes.filter((o) => o.ok && o.action.type === 'in-sync').map((o) => o.action.namespace));
    const others = outcomes.filter((o) => !(o.ok && o.action.type === 'in-sync'));
    expect(computeStatus({ distribution: rd, outcomes: others, inSync: named, now: T0 })).toEqual(computeStatus({ distribution: rd, outcomes, now: T0 }));
  });

  it('conflict messages list reasons briefly, without data', () => {
    const status = computeStatus({
      distribution: rd,
      outcomes: [ok(conflict('b')), ok(conflict('a', 'strict-blocked')), ok(conflict('c'))],
      now: T0,
    });
    expect(status.conditions[4]).toMatchObject({
      reason: 'ResourceConflict',
      message:
        'foreign-object (an object someone else made; annotate it resource-distributor.io/adopt=' + rd.metadata.name + ' to hand it over, or use writePolicy overwrite): b, c; ' +
        'strict-blocked (not written: writePolicy strict holds every write while another target conflicts): a',
    });
  });

  it.each([
    ['foreign-object', 'an object someone else made'],
    ['from-changed', 'its kruise.io/resourcedistribution.resource.from annotation names another distribution'],
    ['owned-by-other', 'its controller reference names another owner'],
    ['forbidden-type', 'a Secret of a type never written over'],
    ['strict-blocked', 'writePolicy strict holds every write'],
  ] as const)('a %s conflict says what it means', (reason, meaning) => {
    const action: Action = { type: 'conflict', namespace: 'a', reason };
    const status = computeStatus({ distribution: rd, outcomes: [ok(action)], now: T0 });
    expect(status.conditions[4]?.message).toContain(`${reason} (`);
    expect(status.conditions[4]?.message).toContain(meaning);
  });

  const objectSync = { ...rd, metadata: { ...rd.metadata, name: 'objectsync-0123' }, origin: { apiVersion: 'sync.rustrial.org/v1alpha1', kind: 'ObjectSync', namespace: 'team-a', name: 'registry', uid: 'u' } };
  it.each([
    ['a ResourceDistribution', rd, [`adopt=${rd.metadata.name} `, 'writePolicy overwrite'], ['<distribution>', 'label it']],
    ['an ObjectSync', objectSync, ['adopt=team-a/registry ', 'ObjectSync team-a/registry'], ['<distribution>', 'writePolicy', 'objectsync-0123']],
  ])('a foreign object under %s: the advice names it and fits its API', (_api, distribution, says, never) => {
    const message = computeStatus({ distribution, outcomes: [ok(conflict('a'))], now: T0 }).conditions[4]?.message ?? '';
    for (const words of says) expect(message).toContain(words);
    for (const words of never) expect(message).not.toContain(words);
  });

  it('failure messages name namespace and error, and stay short for many namespaces', () => {
    const outcomes = Array.from({ length: 13 }, (_, i) => failed(create(`ns-${String(i).padStart(2, '0')}`), 'create', 'forbidden'));
    const condition = computeStatus({ distribution: rd, outcomes, now: T0 }).conditions[1];
    expect(condition?.failedNamespace).toHaveLength(13);
    expect(condition?.message).toMatch(/^ns-00: forbidden; ns-01: forbidden; .*ns-09: forbidden; and 3 more$/);
  });

  it('failedNamespace lists the first 100 namespaces by name, the message and counts tell the whole', () => {
    const outcomes = Array.from({ length: 10_000 }, (_, i) => ok(missing(`ns-${String(9_999 - i).padStart(5, '0')}`)));
    const status = computeStatus({ distribution: rd, outcomes, now: T0 });
    const condition = status.conditions[5];
    expect(condition?.failedNamespace).toHaveLength(MAX_FAILED_NAMESPACES);
    expect(condition?.failedNamespace?.[0]).toBe('ns-00000');
    expect(condition?.failedNamespace?.at(-1)).toBe('ns-00099');
    expect(condition?.message).toMatch(/and 9990 more$/);
    expect(status).toMatchObject({ desired: 10_000, failed: 10_000 });
    expect(JSON.stringify(status).length).toBeLessThan(16_384);
  });

  it('lastTransitionTime is kept while a condition keeps its status, and moves when it flips', () => {
    const first = computeStatus({ distribution: rd, outcomes: [ok(missing('ns-1')), ok(create('ns-2'))], now: T0 });
    const withPrevious = seedSample().generation(3).status(first).build();
    const second = computeStatus({ distribution: withPrevious, outcomes: [ok(inSync('ns-1')), failed(update('ns-2'), 'update')], now: T1 });
    const time = (s: DistributionStatus, type: ConditionType): string | undefined => s.conditions.find((c) => c.type === type)?.lastTransitionTime;
    expect(time(second, 'GetResourceFailed')).toBe('2024-05-01T10:00:00Z');
    expect(time(second, 'UpdateResourceFailed')).toBe('2024-05-01T11:30:00Z');
    expect(time(second, 'NamespaceNotExists')).toBe('2024-05-01T11:30:00Z');
    expect(second.conditions.find((c) => c.type === 'NamespaceNotExists')).not.toHaveProperty('failedNamespace');
  });

  it('observedGeneration is omitted when the distribution has no generation', () => {
    const bare = distribution('x').build();
    delete bare.metadata.generation;
    expect(computeStatus({ distribution: bare, outcomes: [], now: T0 })).not.toHaveProperty('observedGeneration');
  });
});

describe('computeStatus: targets the recorded author may not write in', () => {
  const denied = (namespace: string, words = 'author "alice" may not create configmaps'): Outcome => ({ action: create(namespace), ok: false, verb: 'create', message: words, transient: false, denied: true });
  const authorCondition = (status: DistributionStatus) => status.conditions.find((c) => c.type === 'AuthorAccessDenied');

  it('counts them failed under AuthorAccessDenied, after the six, naming the author, verb, resource and namespaces', () => {
    const status = computeStatus({ distribution: rd, outcomes: [ok(create('mine')), denied('theirs-b'), denied('theirs-a')], now: T0 });
    expect(status).toMatchObject({ desired: 3, succeeded: 1, failed: 2 });
    expect(status.conditions.map((c) => c.type)).toEqual([...CONDITION_TYPES, 'AuthorAccessDenied', 'Ready', 'Stalled']);
    // Waits on someone: the author's rights.
    expect(status.conditions.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True' });
    expect(authorCondition(status)).toEqual({
      type: 'AuthorAccessDenied',
      status: 'True',
      reason: 'AuthorLacksAccess',
      message: 'author "alice" may not create configmaps in namespaces theirs-a, theirs-b: no copy is written there until the author may',
      lastTransitionTime: '2024-05-01T10:00:00Z',
      failedNamespace: ['theirs-a', 'theirs-b'],
    });
    expect(trueConditions(status)).toEqual({ AuthorAccessDenied: ['theirs-a', 'theirs-b'] });
  });

  it('groups namespaces by what the author may not do', () => {
    const status = computeStatus({ distribution: rd, outcomes: [denied('b'), denied('a', 'author "alice" may not update configmaps')], now: T0 });
    expect(authorCondition(status)?.message).toBe('author "alice" may not create configmaps in namespace b; author "alice" may not update configmaps in namespace a: no copy is written there until the author may');
  });

  it('keeps its transition time while it holds, and is gone once the author may write again', () => {
    const first = computeStatus({ distribution: rd, outcomes: [denied('theirs')], now: T0 });
    const previous = seedSample().generation(3).status(first).build();
    expect(authorCondition(computeStatus({ distribution: previous, outcomes: [denied('theirs')], now: T1 }))?.lastTransitionTime).toBe('2024-05-01T10:00:00Z');
    const allowed = computeStatus({ distribution: previous, outcomes: [ok(create('theirs'))], now: T1 });
    expect(authorCondition(allowed)).toBeUndefined();
    expect(allowed).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
  });
});

describe('statusEquals', () => {
  const outcomes = [ok(create('a')), ok(missing('b'))];
  const status = computeStatus({ distribution: rd, outcomes, now: T0 });

  it.each<[string, DistributionStatus | undefined, boolean]>([
    ['no previous status', undefined, false],
    ['the same status', structuredClone(status), true],
    ['keys in another order', JSON.parse(JSON.stringify({ conditions: status.conditions, failed: 1, succeeded: 1, desired: 2, observedGeneration: 3 })) as DistributionStatus, true],
    ['a different count', { ...status, succeeded: 2, failed: 0 }, false],
  ])('%s -> %s', (_name, previous, expected) => {
    expect(statusEquals(previous, status)).toBe(expected);
  });

  it('a recomputation over an unchanged world at a later time is equal (nothing to write)', () => {
    const previous = seedSample().generation(3).status(status).build();
    expect(statusEquals(status, computeStatus({ distribution: previous, outcomes, now: T1 }))).toBe(true);
  });
});
