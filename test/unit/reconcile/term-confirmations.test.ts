// A replica that takes the lead while its watch of distributions (or of a source) runs behind the
// copies the last leader wrote: its first pass writes nothing from the older version (which would
// put the previous data back into every copy), waits for the watch, and then has nothing to write.
// Seen in an upgrade while a distribution was edited every second: more writes per copy than edits.
import { afterEach, describe, expect, it } from 'vitest';
import { withSource } from '../../../src/domain/source.js';
import type { Resource, ResourceDistribution } from '../../../src/domain/types.js';
import { sourcesOf } from '../../../src/reconcile/triggers.js';
import { copyOf, distribution } from '../builders.js';
import { FakeApiError } from './fake-cluster.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

const TARGETS = ['ns-a', 'ns-b'];
const dataIn = (ns: string): unknown => h.cluster.object('ConfigMap', ns, 'settings')?.data;
const aTerm = (): AbortSignal => new AbortController().signal;

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error('condition not reached');
}

/** Copied into both targets by a pass of an earlier term. */
async function copied<T extends ResourceDistribution>(rd: T, source?: Resource): Promise<T> {
  h = await startHarness();
  for (const ns of TARGETS) h.cluster.putNamespace(ns, { team: 'a' });
  if (source !== undefined) {
    h.cluster.putNamespace('platform');
    h.cluster.putObject(source);
  }
  const stored = h.cluster.putDistribution(rd);
  await until(() => h.catalog.list().length > 0);
  h.caches.sources.follow(sourcesOf(h.catalog.list()));
  await until(() => sourcesOf(h.catalog.list()).every((ref) => h.caches.sources.get(ref).synced));
  expect(await h.reconciler.reconcile('shared', aTerm())).toBe('done');
  return stored;
}

describe('the first pass after taking the lead', () => {
  it('a distribution edited, its copies written from the edit by the last leader, the edit not yet seen here: no write until the watch brings it, then none is needed', async () => {
    const first = await copied(distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
    const edited = h.cluster.putDistribution({ ...first, spec: { ...first.spec, resource: { ...first.spec.resource, data: { a: '2' } } } }, true);
    for (const ns of TARGETS) h.cluster.putObject(copyOf(edited, ns).build());
    h.requests.reset();
    const term = aTerm();

    expect(await h.reconciler.reconcile('shared', term)).toBe('retry');
    expect(h.requests.tally()).toMatchObject({ writes: 0, byRequest: { 'list resourcedistributions': 1 } });
    for (const ns of TARGETS) expect(dataIn(ns)).toEqual({ a: '2' });

    h.cluster.emitDistribution('shared');
    await until(() => h.catalog.get('shared')?.metadata.resourceVersion === edited.metadata.resourceVersion);
    expect(await h.reconciler.reconcile('shared', term)).toBe('done');
    expect(h.requests.tally().byRequest).not.toHaveProperty('update configmaps');
    for (const ns of TARGETS) expect(dataIn(ns)).toEqual({ a: '2' });
  });

  it('a source changed, the copies written from it by the last leader, the change not yet seen here: likewise', async () => {
    const source: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'platform' }, data: { color: 'blue' } };
    const rd = distribution('shared').matchLabels({ team: 'a' }).build() as ResourceDistribution;
    delete (rd.spec as { resource?: unknown }).resource;
    rd.spec.source = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'platform', name: 'settings' };
    const stored = await copied(rd, source);
    const changed = h.cluster.putObject({ ...source, data: { color: 'green' } }, true);
    for (const ns of TARGETS) h.cluster.putObject(copyOf(withSource(stored, changed), ns).build());
    h.requests.reset();
    const term = aTerm();

    expect(await h.reconciler.reconcile('shared', term)).toBe('retry');
    expect(h.requests.tally().writes).toBe(0);
    for (const ns of TARGETS) expect(dataIn(ns)).toEqual({ color: 'green' });

    h.cluster.emitToSourceWatch('ConfigMap', 'platform', 'settings');
    await until(() => {
      const state = h.caches.sources.get(stored.spec.source!);
      return state.synced && state.object?.metadata.resourceVersion === changed.metadata.resourceVersion;
    });
    expect(await h.reconciler.reconcile('shared', term)).toBe('done');
    expect(h.requests.tally().byRequest).not.toHaveProperty('update configmaps');
    for (const ns of TARGETS) expect(dataIn(ns)).toEqual({ color: 'green' });
  });

  it('a namespace the edit no longer targets, whose copy the last leader deleted: no copy written back while the edit is not seen here', async () => {
    const first = await copied(distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
    h.cluster.putDistribution({ ...first, spec: { ...first.spec, targets: { namespaceLabelSelector: { matchLabels: { team: 'b' } } } } }, true);
    for (const ns of TARGETS) h.cluster.removeObject('ConfigMap', ns, 'settings');
    h.requests.reset();

    expect(await h.reconciler.reconcile('shared', aTerm())).toBe('retry');
    expect(h.requests.tally().writes).toBe(0);
    for (const ns of TARGETS) expect(dataIn(ns)).toBeUndefined();
  });

  it('a source of a kind not allowed is not asked about (the API adapter refuses such a kind): the status says why at once', async () => {
    const rd = distribution('shared').matchLabels({ team: 'a' }).build() as ResourceDistribution;
    delete (rd.spec as { resource?: unknown }).resource;
    rd.spec.source = { apiVersion: 'batch/v1', kind: 'CronJob', namespace: 'platform', name: 'nightly' };
    h = await startHarness();
    h.cluster.failWhen((method, args) => (method === 'listSource' && (args[0] as { kind?: string }).kind === 'CronJob' ? new Error('kind batch/v1/CronJob is not allowed (RD_ALLOWED_KINDS)') : undefined));
    h.cluster.putDistribution(rd);
    await until(() => h.catalog.list().length > 0);

    expect(await h.reconciler.reconcile('shared', aTerm())).toBe('done');
    expect(h.cluster.distributions.get('shared')?.status?.conditions.find((c) => c.type === 'NotDistributable')?.message).toContain('is not allowed');
  });

  it('a pass that writes nothing does not wait for the answer: one that fails leaves the distribution to be asked about again', async () => {
    await copied(distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
    h.cluster.failWhen((method) => (method === 'lookupDistribution' ? new FakeApiError(503, 'ServiceUnavailable') : undefined));
    const term = aTerm();

    expect(await h.reconciler.reconcile('shared', term)).toBe('done');
    h.cluster.clearFailures();
    h.requests.reset();
    expect(await h.reconciler.reconcile('shared', term)).toBe('done');
    expect(h.requests.tally().byRequest).toEqual({ 'list resourcedistributions': 1 });
  });

  it('is asked once per distribution and term: later passes in the term read nothing, the next term asks again', async () => {
    await copied(distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
    const term = aTerm();
    h.requests.reset();

    expect(await h.reconciler.reconcile('shared', term)).toBe('done');
    expect(h.requests.tally().byRequest).toEqual({ 'list resourcedistributions': 1 });
    h.requests.reset();
    expect(await h.reconciler.reconcile('shared', term)).toBe('done');
    expect(h.requests.tally().byRequest).toEqual({});

    expect(await h.reconciler.reconcile('shared', aTerm())).toBe('done');
    expect(h.requests.tally().byRequest).toEqual({ 'list resourcedistributions': 1 });
  });
});
