// A distribution whose source is deleted keeps its copies where it targets, and still removes
// those where it no longer targets and reports listed namespaces that do not exist (both found by
// the soak: with seed 2, a namespace relabelled out of a selector while the source was missing
// kept its copy until the source came back; with seed 1, NamespaceNotExists stayed False).
import { afterEach, describe, expect, it } from 'vitest';
import type { ResourceDistribution, Resource } from '../../../src/domain/types.js';
import { sourcesOf } from '../../../src/reconcile/triggers.js';
import { distribution } from '../builders.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

const source: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'platform' }, data: { color: 'blue' } };

function fromSource(listed: string[] = [], sourceNamespace = 'platform'): ResourceDistribution {
  const rd = distribution('shared').matchLabels({ team: 'x' }).included(...listed).build() as ResourceDistribution;
  delete (rd.spec as { resource?: unknown }).resource;
  rd.spec.source = { apiVersion: 'v1', kind: 'ConfigMap', namespace: sourceNamespace, name: 'settings' };
  return rd;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error('condition not reached');
}

const sourceState = () => h.caches.sources.get(sourcesOf(h.catalog.list())[0]!);

/** The source in platform, its distribution's copies in ns-a and ns-b after one pass. */
async function copiedToBothTargets(): Promise<void> {
    h = await startHarness();
    h.cluster.putNamespace('platform');
    for (const ns of ['ns-a', 'ns-b']) h.cluster.putNamespace(ns, { team: 'x' });
    h.cluster.putObject(source);
    h.cluster.putDistribution(fromSource());
    await until(() => h.catalog.list().length > 0);
    h.caches.sources.follow(sourcesOf(h.catalog.list()));
    await until(() => sourceState().synced);
    expect(await h.reconciler.reconcile('shared')).toBe('done');
}

describe('a distribution whose source is missing', () => {
  it('keeps the copies where it targets and deletes those where it no longer targets', async () => {
    await copiedToBothTargets();
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')?.data).toEqual({ color: 'blue' });

    h.cluster.removeObject('ConfigMap', 'platform', 'settings');
    await until(() => { const state = sourceState(); return state.synced && state.object === undefined; });
    h.cluster.putNamespace('ns-b', { team: 'y' });
    await until(() => h.caches.namespaces.get('ns-b')?.info.labels.team === 'y');
    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.data).toEqual({ color: 'blue' });
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeUndefined();
    const status = h.cluster.distributions.get('shared')?.status;
    expect(status).toMatchObject({ desired: 1, succeeded: 0, failed: 1 });
    expect(status?.conditions.find((c) => c.type === 'SourceNotFound')).toMatchObject({ status: 'True' });
    expect(status?.conditions.find((c) => c.type === 'DeleteResourceFailed')).toMatchObject({ status: 'False' });
  });

  it('reports a listed namespace that does not exist under NamespaceNotExists', async () => {
    h = await startHarness();
    h.cluster.putNamespace('platform');
    h.cluster.putNamespace('ns-a', { team: 'x' });
    h.cluster.putDistribution(fromSource(['ns-later']));
    await until(() => h.catalog.list().length > 0);
    h.caches.sources.follow(sourcesOf(h.catalog.list()));
    await until(() => sourceState().synced);
    expect(await h.reconciler.reconcile('shared')).toBe('done');

    const status = h.cluster.distributions.get('shared')?.status;
    expect(status).toMatchObject({ desired: 2, succeeded: 0, failed: 2 });
    expect(status?.conditions.find((c) => c.type === 'NamespaceNotExists')).toMatchObject({ status: 'True', failedNamespace: ['ns-later'] });
    expect(status?.conditions.find((c) => c.type === 'SourceNotFound')).toMatchObject({ status: 'True' });
  });

  it('deletes its copy where spec.source moved to, copies nothing from it, and says so', async () => {
    await copiedToBothTargets();
    const before = h.cluster.object('ConfigMap', 'ns-a', 'settings')?.metadata.resourceVersion;

    h.cluster.putDistribution({ ...fromSource([], 'ns-b'), metadata: { ...fromSource().metadata, generation: 2 } });
    await until(() => h.catalog.get('shared')?.spec.source?.namespace === 'ns-b');
    h.caches.sources.follow(sourcesOf(h.catalog.list()));
    await until(() => { const state = sourceState(); return state.synced && state.object !== undefined; });
    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeUndefined();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.metadata.resourceVersion).toBe(before);
    const said = {
      status: 'True',
      message:
        "source ConfigMap ns-b/settings not found: what stood there was this distribution's copy (spec.source moved into a target namespace), which was deleted as the source's namespace is never a target; the copies in the target namespaces are kept as they are",
    };
    expect(h.cluster.distributions.get('shared')?.status?.conditions.find((c) => c.type === 'SourceNotFound')).toMatchObject(said);

    // The next pass finds no source at all, and still says what became of the copy there.
    await until(() => { const state = sourceState(); return state.synced && state.object === undefined; });
    await until(() => h.catalog.get('shared')?.status?.conditions.some((c) => c.message === said.message) === true);
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.cluster.distributions.get('shared')?.status?.conditions.find((c) => c.type === 'SourceNotFound')).toMatchObject(said);
  });
});
