// A namespace or a copy that changed brings a pass over that namespace alone, standing on what the
// last pass found elsewhere. Such a pass must leave nothing a full pass would do, and report the
// status a full pass reports; anything else that changed brings a full pass.
import { afterEach, describe, expect, it } from 'vitest';
import { LABEL_DISTRIBUTION, type Outcome, type ResolvedDistribution, type Resource, type ResourceDistribution } from '../../../src/domain/types.js';
import { LastPasses } from '../../../src/reconcile/last-passes.js';
import { PassScopes } from '../../../src/reconcile/pass-scopes.js';
import { distribution } from '../builders.js';
import { FakeApiError } from './fake-cluster.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error('condition not reached');
}

const shared = () => distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).included('ns-listed');

/** Two targets, one listed namespace missing, and a converged first pass. */
async function converged(): Promise<void> {
  h = await startHarness();
  for (const name of ['ns-a', 'ns-b']) h.cluster.putNamespace(name, { team: 'a' });
  h.cluster.putDistribution(shared().build());
  await until(() => h.catalog.get('shared') !== undefined && h.caches.namespaces.size === 2);
  expect(await h.reconciler.reconcile('shared')).toBe('done');
  await until(() => h.caches.copies.countOf('shared') === 2);
}

const copyIn = (namespace: string): Resource | undefined => h.cluster.object('ConfigMap', namespace, 'settings');

/** What changed, in which namespace, and when the caches have seen it. */
type Change = [string, string, () => void, () => boolean];

const CHANGES: Change[] = [
  ['a namespace created', 'ns-c', () => h.cluster.putNamespace('ns-c', { team: 'a' }), () => h.caches.namespaces.get('ns-c') !== undefined],
  ['a listed namespace created', 'ns-listed', () => h.cluster.putNamespace('ns-listed'), () => h.caches.namespaces.get('ns-listed') !== undefined],
  ['a namespace relabelled out of the selector', 'ns-b', () => h.cluster.putNamespace('ns-b', { team: 'b' }), () => h.caches.namespaces.get('ns-b')?.info.labels.team === 'b'],
  ['a namespace terminating', 'ns-b', () => h.cluster.putNamespace('ns-b', { team: 'a' }, true), () => h.caches.namespaces.get('ns-b')?.info.terminating === true],
  [
    'a copy edited by hand',
    'ns-a',
    () => h.cluster.putObject({ ...structuredClone(copyIn('ns-a')!), data: { a: 'edited' } }),
    () => h.caches.copies.get({ kind: 'ConfigMap', namespace: 'ns-a', name: 'settings' })?.data?.a === 'edited',
  ],
  [
    'our label removed from a copy',
    'ns-a',
    () => {
      const copy = structuredClone(copyIn('ns-a')!);
      delete copy.metadata.labels?.[LABEL_DISTRIBUTION];
      h.cluster.putObject(copy);
    },
    () => h.caches.copies.get({ kind: 'ConfigMap', namespace: 'ns-a', name: 'settings' }) === undefined,
  ],
];

describe('a pass within the namespaces that changed', () => {
  it.each(CHANGES)('%s: leaves nothing for a full pass to do, and reports what it would', async (_, namespace, change, seen) => {
    await converged();
    change();
    await until(seen);

    h.scopes.note(['shared'], namespace);
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    const scoped = h.cluster.distributions.get('shared')?.status;

    h.requests.reset();
    h.scopes.note(['shared']);
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.requests.tally().writes).toBe(0);
    expect(h.cluster.distributions.get('shared')?.status).toEqual(scoped);
  });

  it('looks at nothing else: drift in another namespace waits for its own change', async () => {
    await converged();
    // Edited without a watch event reaching the pass's scope (as if it were still on its way).
    h.cluster.putObject({ ...structuredClone(copyIn('ns-a')!), data: { a: 'edited' } });
    await until(() => h.caches.copies.get({ kind: 'ConfigMap', namespace: 'ns-a', name: 'settings' })?.data?.a === 'edited');
    h.cluster.putNamespace('ns-c', { team: 'a' });
    await until(() => h.caches.namespaces.get('ns-c') !== undefined);

    h.scopes.note(['shared'], 'ns-c');
    h.requests.reset();
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.requests.tally().byRequest).toMatchObject({ 'create configmaps': 1 });
    expect(copyIn('ns-a')?.data).toEqual({ a: 'edited' });
    expect(h.cluster.distributions.get('shared')?.status).toMatchObject({ desired: 4, succeeded: 3 });

    h.scopes.note(['shared'], 'ns-a');
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(copyIn('ns-a')?.data).toEqual({ a: '1' });
  });

  it('that finds the namespace as before writes nothing, not even over a status edited by hand; a full pass does', async () => {
    await converged();
    const edited = structuredClone(h.cluster.distributions.get('shared')!);
    edited.status = { ...edited.status!, succeeded: 99 };
    h.cluster.putDistribution(edited);
    await until(() => h.catalog.get('shared')?.status?.succeeded === 99);

    h.requests.reset();
    h.scopes.note(['shared'], 'ns-a');
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.requests.tally().writes).toBe(0);

    h.scopes.note(['shared']);
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.cluster.distributions.get('shared')?.status).toMatchObject({ desired: 3, succeeded: 2 });
  });

  it('is a full pass when the distribution changed since the last one', async () => {
    await converged();
    h.cluster.putDistribution(shared().configMap('settings', { a: '2' }).generation(2).build());
    await until(() => h.catalog.get('shared')?.metadata.generation === 2);
    h.cluster.putNamespace('ns-c', { team: 'a' });
    await until(() => h.caches.namespaces.get('ns-c') !== undefined);

    h.scopes.note(['shared'], 'ns-c');
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    for (const namespace of ['ns-a', 'ns-b', 'ns-c']) expect(copyIn(namespace)?.data).toEqual({ a: '2' });
  });

  it('is followed by a full pass when a write failed', async () => {
    await converged();
    h.cluster.putNamespace('ns-c', { team: 'a' });
    await until(() => h.caches.namespaces.get('ns-c') !== undefined);
    h.cluster.failWhen((method) => (method === 'createCopy' ? new FakeApiError(503, 'ServiceUnavailable', 'etcd is busy') : undefined));

    h.scopes.note(['shared'], 'ns-c');
    expect(await h.reconciler.reconcile('shared')).toBe('retry');
    expect(h.scopes.take('shared')).toBe('all');
  });
});

describe('a full pass made in slices', () => {
  /** `count` targets (plus the listed one missing), converged by a first full pass, slices of two. */
  async function convergedOver(count: number): Promise<void> {
    h = await startHarness({ sliceSize: 2 });
    for (let i = 0; i < count; i++) h.cluster.putNamespace(`ns-${i}`, { team: 'a' });
    h.cluster.putDistribution(shared().build());
    await until(() => h.catalog.get('shared') !== undefined && h.caches.namespaces.size === count);
    // Nothing to stand on yet: one pass over everything.
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    await until(() => h.caches.copies.countOf('shared') === count);
  }

  /** Turns of the name until its pass is over, as the queue gives them. */
  async function turns(): Promise<string[]> {
    const results: string[] = [await h.reconciler.reconcile('shared')];
    while (results.at(-1) === 'continue' && results.length < 20) results.push(await h.reconciler.reconcile('shared'));
    return results;
  }

  it('plans a slice a turn, writes nothing when all is in sync, and ends with the status a full pass reports', async () => {
    await convergedOver(5);
    const full = h.cluster.distributions.get('shared')?.status;
    h.requests.reset();
    h.scopes.note(['shared']);
    // Five namespaces and the listed one missing: three slices.
    expect(await turns()).toEqual(['continue', 'continue', 'done']);
    expect(h.requests.tally().writes).toBe(0);
    expect(h.cluster.distributions.get('shared')?.status).toEqual(full);
    expect(h.scopes.slicedPass('shared')).toBeUndefined();
  });

  it('plans a namespace that changed meanwhile at the next turn, ahead of the slices left', async () => {
    await convergedOver(6);
    h.scopes.note(['shared']);
    expect(await h.reconciler.reconcile('shared')).toBe('continue');
    h.cluster.putNamespace('ns-new', { team: 'a' });
    await until(() => h.caches.namespaces.get('ns-new') !== undefined);
    h.scopes.note(['shared'], 'ns-new');
    h.requests.reset();
    expect(await h.reconciler.reconcile('shared')).toBe('continue');
    expect(copyIn('ns-new')?.data).toEqual({ a: '1' });
    expect(h.cluster.distributions.get('shared')?.status).toMatchObject({ desired: 8, succeeded: 7 });
    expect(await turns()).toEqual(['continue', 'continue', 'done']);
    expect(h.requests.tally().writes).toBe(2);
  });

  it('repairs what changes nobody noted left, as a full pass does', async () => {
    await convergedOver(5);
    h.cluster.putObject({ ...structuredClone(copyIn('ns-3')!), data: { a: 'edited' } });
    h.cluster.putNamespace('ns-4', { team: 'b' });
    h.cluster.removeObject('ConfigMap', 'ns-4', 'settings');
    await until(() => h.caches.copies.countOf('shared') === 4 && h.caches.copies.get({ kind: 'ConfigMap', namespace: 'ns-3', name: 'settings' })?.data?.a === 'edited');
    h.scopes.note(['shared']);
    expect(await turns()).toEqual(['continue', 'continue', 'done']);
    expect(copyIn('ns-3')?.data).toEqual({ a: '1' });
    // ns-4 is no longer a target: the last pass's word on it is dropped.
    expect(h.cluster.distributions.get('shared')?.status).toMatchObject({ desired: 5, succeeded: 4 });
  });

  it('gives way to a pass over everything when the distribution changes meanwhile', async () => {
    await convergedOver(5);
    h.scopes.note(['shared']);
    expect(await h.reconciler.reconcile('shared')).toBe('continue');
    h.cluster.putDistribution(shared().configMap('settings', { a: '2' }).generation(2).build());
    await until(() => h.catalog.get('shared')?.metadata.generation === 2);
    h.scopes.note(['shared']);
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    for (let i = 0; i < 5; i++) expect(copyIn(`ns-${i}`)?.data).toEqual({ a: '2' });
    expect(h.scopes.slicedPass('shared')).toBeUndefined();
  });

  it('ends when the distribution goes meanwhile', async () => {
    await convergedOver(5);
    h.scopes.note(['shared']);
    expect(await h.reconciler.reconcile('shared')).toBe('continue');
    h.cluster.deleteDistribution('shared');
    await until(() => h.catalog.get('shared') === undefined);
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.scopes.slicedPass('shared')).toBeUndefined();
  });
});

describe('LastPasses: what a pass over some namespaces stands on', () => {
  const rd = (policy?: 'strict' | 'overwrite', generation = 1) => {
    const builder = distribution('shared').configMap('settings', { a: '1' }).allNamespaces().generation(generation);
    return (policy === undefined ? builder : builder.writePolicy(policy)).build();
  };
  const inSync = (namespace: string): Outcome => ({ action: { type: 'in-sync', namespace }, ok: true });
  const failed = (namespace: string): Outcome => ({ action: { type: 'in-sync', namespace }, ok: false, verb: 'create', message: 'etcd is busy', transient: true });

  it.each<[string, (passes: LastPasses) => void, ResourceDistribution, boolean]>([
    ['nothing recorded yet', () => undefined, rd(), false],
    ['a full pass of the same spec and template', (passes) => passes.record(rd(), 'h1', [inSync('ns-a')]), rd(), true],
    ['another template since', (passes) => passes.record(rd(), 'h0', [inSync('ns-a')]), rd(), false],
    ['another generation since', (passes) => passes.record(rd(undefined, 2), 'h1', [inSync('ns-a')]), rd(), false],
    ['writePolicy strict', (passes) => passes.record(rd('strict'), 'h1', [inSync('ns-a')]), rd('strict'), false],
    ['a failure in the last pass', (passes) => passes.record(rd(), 'h1', [inSync('ns-a'), failed('ns-b')]), rd(), false],
    ['forgotten', (passes) => (passes.record(rd(), 'h1', [inSync('ns-a')]), passes.forget('shared')), rd(), false],
  ])('%s: holds is %s', (_, before, current, holds) => {
    const passes = new LastPasses();
    before(passes);
    expect(passes.holds(current as ResolvedDistribution, 'h1')).toBe(holds);
  });

  it('replaces what was known in the namespaces of a pass within them, and keeps written copies without their object', () => {
    const passes = new LastPasses();
    const current = rd();
    passes.record(current, 'h1', [inSync('ns-a'), inSync('ns-b'), { action: { type: 'namespace-missing', namespace: 'ns-c' }, ok: true }]);
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'ns-c' } };
    passes.record(current, 'h1', [{ action: { type: 'create', namespace: 'ns-c', object }, ok: true }], new Set(['ns-b', 'ns-c']));
    expect(passes.found('shared')).toEqual({ outcomes: [], inSync: new Set(['ns-a', 'ns-c']) });
  });

  const conflict = (namespace: string): Outcome => ({ action: { type: 'conflict', namespace, reason: 'foreign-object' }, ok: true });
  const missing = (namespace: string): Outcome => ({ action: { type: 'namespace-missing', namespace }, ok: true });

  it.each<[string, Outcome[], string[], boolean]>([
    ['the same namespaces in sync again', [inSync('ns-a'), inSync('ns-b')], ['ns-a', 'ns-b'], false],
    ['nothing within, nothing found', [], [], false],
    ['a namespace in sync that was not known', [inSync('ns-a'), inSync('ns-d')], ['ns-a', 'ns-d'], true],
    ['a namespace in sync before, no longer targeted', [inSync('ns-a')], ['ns-a', 'ns-b'], true],
    ['one namespace swapped for another', [inSync('ns-a'), inSync('ns-d')], ['ns-a', 'ns-b', 'ns-d'], true],
    ['a conflict where the copy was in sync', [inSync('ns-a'), conflict('ns-b')], ['ns-a', 'ns-b'], true],
    ['the missing namespace found the same', [missing('ns-c')], ['ns-c'], true],
    ['a failure', [failed('ns-a')], ['ns-a'], true],
  ])('a pass within some namespaces that found %s: changed is %s', (_, outcomes, within, changed) => {
    const passes = new LastPasses();
    passes.record(rd(), 'h1', [inSync('ns-a'), inSync('ns-b'), missing('ns-c')]);
    expect(passes.record(rd(), 'h1', outcomes, new Set(within))).toBe(changed);
  });

  it('counts a full pass as a change, and keeps only the namespaces retained', () => {
    const passes = new LastPasses();
    expect(passes.record(rd(), 'h1', [inSync('ns-a'), inSync('ns-b'), conflict('ns-c')])).toBe(true);
    expect(passes.record(rd(), 'h1', [inSync('ns-a'), inSync('ns-b'), conflict('ns-c')])).toBe(true);
    passes.retain('shared', new Set(['ns-a', 'ns-c']));
    expect(passes.found('shared')).toEqual({ outcomes: [conflict('ns-c')], inSync: new Set(['ns-a']) });
    expect(passes.found('unknown')).toEqual({ outcomes: [] });
  });
});

describe('PassScopes: what the next pass over a name looks at', () => {
  it.each<[string, (scopes: PassScopes) => void, 'all' | string[]]>([
    ['nothing noted', () => undefined, 'all'],
    ['one namespace', (scopes) => scopes.note(['shared'], 'ns-a'), ['ns-a']],
    ['two namespaces', (scopes) => (scopes.note(['shared'], 'ns-a'), scopes.note(['shared'], 'ns-b')), ['ns-a', 'ns-b']],
    ['a namespace, then anything', (scopes) => (scopes.note(['shared'], 'ns-a'), scopes.note(['shared'])), 'all'],
    ['anything, then a namespace', (scopes) => (scopes.note(['shared']), scopes.note(['shared'], 'ns-a')), 'all'],
    ['a namespace, then a retry', (scopes) => (scopes.note(['shared'], 'ns-a'), scopes.widen('shared')), 'all'],
    ['another name only', (scopes) => scopes.note(['other'], 'ns-a'), 'all'],
  ])('%s', (_, noted, expected) => {
    const scopes = new PassScopes();
    noted(scopes);
    const scope = scopes.take('shared');
    expect(scope === 'all' ? scope : [...scope]).toEqual(expected);
    // Taken: the pass after it is a full one unless something is noted again.
    expect(scopes.take('shared')).toBe('all');
  });

  it.each<[string, (scopes: PassScopes) => void, 'all' | string[], boolean]>([
    ['nothing noted', () => undefined, [], true],
    ['a namespace', (scopes) => scopes.note(['shared'], 'ns-a'), ['ns-a'], true],
    ['another name only', (scopes) => scopes.note(['other']), [], true],
    ['anything', (scopes) => scopes.note(['shared']), 'all', false],
    ['a retry', (scopes) => scopes.widen('shared'), 'all', false],
  ])('while a sliced pass goes on, %s: the next pass looks at %j, the sliced one goes on: %s', (_, noted, expected, goesOn) => {
    const scopes = new PassScopes();
    scopes.beginSliced('shared', ['ns-a', 'ns-b', 'ns-c']);
    noted(scopes);
    const scope = scopes.take('shared');
    expect(scope === 'all' ? scope : [...scope]).toEqual(expected);
    expect(scopes.slicedPass('shared') !== undefined).toBe(goesOn);
  });
});
