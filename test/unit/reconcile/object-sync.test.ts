// ObjectSyncs through the one reconciler, over the in-memory cluster: the catalog translates each
// into distributions; copies carry no owner reference, a finalizer holds them, and they go when
// the source or the ObjectSync goes.
import { afterEach, describe, expect, it } from 'vitest';
import { distributionName, LEGACY_FINALIZER, OBJECT_SYNC_FINALIZER, type ObjectSync, type ObjectSyncDestination } from '../../../src/domain/object-sync.js';
import { ANNOTATION_OBJECT_SYNC, LABEL_DISTRIBUTION, type Resource } from '../../../src/domain/types.js';
import { sourcesOf } from '../../../src/reconcile/triggers.js';
import { distribution } from '../builders.js';
import { FakeApiError } from './fake-cluster.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

function objectSync(destinations: ObjectSyncDestination[]): ObjectSync {
  return {
    apiVersion: 'sync.rustrial.org/v1alpha1',
    kind: 'ObjectSync',
    metadata: { name: 'shared-config', namespace: 'platform' },
    spec: { source: { group: '', kind: 'ConfigMap', name: 'settings' }, destinations },
  };
}

const source = (data: Record<string, string>): Resource => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'platform' }, data });

async function setup(destinations: ObjectSyncDestination[]): Promise<ObjectSync> {
  h = await startHarness();
  for (const ns of ['platform', 'ns-a', 'ns-b', 'kube-system']) h.cluster.putNamespace(ns);
  h.cluster.putObject(source({ color: 'blue' }));
  const os = h.cluster.putObjectSync(objectSync(destinations));
  await until(() => h.catalog.list().length > 0);
  h.caches.sources.follow(sourcesOf(h.catalog.list()));
  await until(() => h.caches.sources.get(sourcesOf(h.catalog.list())[0]!).synced);
  return os;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error('condition not reached');
}

/** Reconciles every distribution the ObjectSync stands for (as the watches would enqueue them). */
async function reconcileAll(): Promise<void> {
  for (const name of h.catalog.names()) await h.reconciler.reconcile(name);
  await new Promise((resolve) => setTimeout(resolve, 10));
}

const stored = (): ObjectSync | undefined => h.cluster.objectSyncs.get('platform/shared-config');

describe('ObjectSync', () => {
  it('copies the source to every namespace but its own and kube-system, holds a finalizer and reports Ready', async () => {
    const os = await setup([{ namespace: '*' }]);
    await reconcileAll();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.data).toEqual({ color: 'blue' });
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')?.metadata.annotations?.[ANNOTATION_OBJECT_SYNC]).toBe('platform/shared-config');
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')?.metadata.ownerReferences).toEqual([]);
    expect(h.cluster.object('ConfigMap', 'kube-system', 'settings')).toBeUndefined();
    expect(stored()?.metadata.finalizers).toEqual([OBJECT_SYNC_FINALIZER]);
    // Held before its first copy is written: a copy never exists without the finalizer to remove it.
    const methods = h.cluster.calls.map((call) => call.method);
    expect(methods.indexOf('patchObjectSyncFinalizers')).toBeGreaterThanOrEqual(0);
    expect(methods.indexOf('patchObjectSyncFinalizers')).toBeLessThan(methods.indexOf('createCopy'));
    expect(stored()?.status).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
    expect(stored()?.status?.conditions[0]).toMatchObject({ type: 'Ready', status: 'True' });
    expect(h.catalog.names()).toEqual([distributionName(os.metadata.uid!, 'settings')]);

    // Settled: another pass writes nothing.
    h.requests.reset();
    await reconcileAll();
    expect(h.requests.tally().writes).toBe(0);
  });

  it('lists each of its distributions as the same object while nothing changes, so that what is remembered per object holds', async () => {
    await setup([{ namespace: '*' }]);
    await reconcileAll();
    const [first] = h.catalog.list();
    expect(first?.status).toMatchObject({ succeeded: 2 });
    expect(h.catalog.list()[0]).toBe(first);
    h.cluster.putNamespace('ns-c');
    await new Promise((resolve) => setTimeout(resolve, 10));
    await reconcileAll();
    expect(h.catalog.list()[0]).not.toBe(first);
    expect(h.catalog.list()[0]?.status).toMatchObject({ succeeded: 3 });
  });

  it('keeps its distribution, copies and status when a ResourceDistribution takes the same name', async () => {
    const os = await setup([{ namespace: 'ns-a' }, { namespace: 'ns-b' }]);
    await reconcileAll();
    const name = distributionName(os.metadata.uid!, 'settings');
    const impostor = h.cluster.putDistribution(distribution(name).configMap('other', { mine: 'x' }).included('ns-a').build());
    await until(() => h.caches.distributions.get(name) !== undefined);

    expect(h.catalog.get(name)?.origin).toMatchObject({ name: 'shared-config' });
    // Its reconciles take turns as the ObjectSync's work, not as the impostor's.
    expect(h.catalog.groupOf(name)).toBe('platform/shared-config');
    expect(h.catalog.groupOf('admin-settings')).toBe('admin-settings');
    expect(h.catalog.list().filter((rd) => rd.metadata.name === name)).toHaveLength(1);
    await reconcileAll();
    for (const ns of ['ns-a', 'ns-b']) expect(h.cluster.object('ConfigMap', ns, 'settings')?.data).toEqual({ color: 'blue' });
    expect(h.cluster.object('ConfigMap', 'ns-a', 'other')).toBeUndefined();
    expect(stored()?.status).toMatchObject({ desired: 2, succeeded: 2 });
    expect(impostor.status).toBeUndefined();
  });

  it('renames per destination, and names kube-system only when listed', async () => {
    await setup([{ namespace: 'ns-a' }, { namespace: 'kube-system' }, { namespace: '*', name: 'global-settings' }]);
    await reconcileAll();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeDefined();
    expect(h.cluster.object('ConfigMap', 'kube-system', 'settings')).toBeDefined();
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeUndefined();
    // A renamed copy is another object: the source's own namespace gets one too.
    for (const ns of ['platform', 'ns-a', 'ns-b']) expect(h.cluster.object('ConfigMap', ns, 'global-settings')?.data).toEqual({ color: 'blue' });
    expect(stored()?.status).toMatchObject({ desired: 5, succeeded: 5 });
  });

  it('deletes the copies when the source is deleted, and says so', async () => {
    await setup([{ namespace: 'ns-a' }, { namespace: 'ns-b' }]);
    await reconcileAll();
    h.cluster.removeObject('ConfigMap', 'platform', 'settings');
    await until(() => {
      const state = h.caches.sources.get(sourcesOf(h.catalog.list())[0]!);
      return state.synced && state.object === undefined;
    });
    await reconcileAll();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeUndefined();
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeUndefined();
    expect(stored()?.status?.conditions.find((c) => c.type === 'SourceNotFound')).toMatchObject({ status: 'True' });
    expect(stored()?.status?.conditions[0]).toMatchObject({ type: 'Ready', status: 'False' });
  });

  it("replaces k8s-object-syncer's finalizer, so that an ObjectSync it left can still be deleted", async () => {
    h = await startHarness();
    for (const ns of ['platform', 'ns-a']) h.cluster.putNamespace(ns);
    h.cluster.putObject(source({ color: 'blue' }));
    const os = objectSync([{ namespace: 'ns-a' }]);
    h.cluster.putObjectSync({ ...os, metadata: { ...os.metadata, finalizers: [LEGACY_FINALIZER, 'example.com/other'] } });
    await until(() => h.catalog.list().length > 0);
    h.caches.sources.follow(sourcesOf(h.catalog.list()));
    await until(() => h.caches.sources.get(sourcesOf(h.catalog.list())[0]!).synced);
    await reconcileAll();
    expect(stored()?.metadata.finalizers).toEqual(['example.com/other', OBJECT_SYNC_FINALIZER]);
  });

  it('deletes the copies when the ObjectSync is deleted, then lets it go', async () => {
    await setup([{ namespace: 'ns-a' }]);
    await reconcileAll();
    h.cluster.deleteObjectSync('platform', 'shared-config');
    await until(() => h.caches.objectSyncs.get('platform/shared-config')?.metadata.deletionTimestamp !== undefined);
    await reconcileAll();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeUndefined();
    await until(() => stored() === undefined);
  });

  it('keeps the copies, untied, when the ObjectSync is deleted with propagation Orphan, though the orphan finalizer is gone before the pass', async () => {
    await setup([{ namespace: 'ns-a' }]);
    await reconcileAll();
    h.cluster.deleteObjectSync('platform', 'shared-config', 'Orphan');
    await until(() => h.caches.objectSyncs.get('platform/shared-config')?.metadata.finalizers?.includes('orphan') === true);
    h.cluster.collectOrphan('platform', 'shared-config');
    await until(() => h.caches.objectSyncs.get('platform/shared-config')?.metadata.finalizers?.includes('orphan') === false);
    await reconcileAll();
    await reconcileAll();
    await until(() => stored() === undefined);
    await reconcileAll();
    const copy = h.cluster.object('ConfigMap', 'ns-a', 'settings');
    expect(copy?.data).toEqual({ color: 'blue' });
    expect(copy?.metadata.annotations?.[ANNOTATION_OBJECT_SYNC]).toBeUndefined();
    expect(copy?.metadata.labels?.[LABEL_DISTRIBUTION]).toBeUndefined();
  });

  it('says what it reports as a Warning Event about itself, in its namespace', async () => {
    await setup([{ namespace: 'ns-a' }]);
    await reconcileAll();
    h.cluster.removeObject('ConfigMap', 'platform', 'settings');
    await until(() => {
      const state = h.caches.sources.get(sourcesOf(h.catalog.list())[0]!);
      return state.synced && state.object === undefined;
    });
    await reconcileAll();
    expect(h.cluster.events.map((e) => [e.namespace, e.involvedObject.kind, e.involvedObject.namespace, e.involvedObject.name, e.reason])).toEqual([
      ['platform', 'ObjectSync', 'platform', 'shared-config', 'SourceNotFound'],
    ]);
  });

  describe('its status, folded from its destination names as their passes end', () => {
    const before: ObjectSyncDestination[] = [{ namespace: 'ns-a' }, { namespace: 'ns-b', name: 'renamed' }];
    // Each name now goes to both namespaces: 4 copies, where a fold with one name's earlier status says 3.
    const after: ObjectSyncDestination[] = [{ namespace: 'ns-a' }, { namespace: 'ns-b' }, { namespace: 'ns-a', name: 'renamed' }, { namespace: 'ns-b', name: 'renamed' }];

    async function changeDestinations(): Promise<void> {
      await setup(before);
      await reconcileAll();
      expect(stored()?.status).toMatchObject({ desired: 2, succeeded: 2 });
      const current = stored()!;
      h.cluster.putObjectSync({ ...current, spec: { ...current.spec, destinations: after } });
      await until(() => h.catalog.list().every((rd) => rd.metadata.generation === 2));
    }

    it('ends with every name as its pass last found it, when the names end together and their writes land out of order', async () => {
      await changeDestinations();
      // The first status write is slow to land: the one after it lands before it.
      const patch = h.cluster.api.patchObjectSyncStatus.bind(h.cluster.api);
      let calls = 0;
      h.cluster.api.patchObjectSyncStatus = async (...args) => {
        if ((calls += 1) === 1) await new Promise((resolve) => setTimeout(resolve, 30));
        return patch(...args);
      };
      await Promise.all(h.catalog.names().map((name) => h.reconciler.reconcile(name)));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(stored()?.status).toMatchObject({ observedGeneration: 2, desired: 4, succeeded: 4, failed: 0 });
      expect(stored()?.status?.conditions.find((c) => c.type === 'InSync')).toMatchObject({ status: 'True' });
    });

    it('is written by the next pass when a write of it failed', async () => {
      await changeDestinations();
      h.cluster.failWhen((method) => (method === 'patchObjectSyncStatus' ? new FakeApiError(500, 'InternalError') : undefined));
      for (const name of h.catalog.names()) await expect(h.reconciler.reconcile(name)).rejects.toThrow();
      h.cluster.clearFailures();
      await reconcileAll();
      expect(stored()?.status).toMatchObject({ observedGeneration: 2, desired: 4, succeeded: 4, failed: 0 });
    });
  });

  it('removes the copies of a destination name that is gone', async () => {
    const os = await setup([{ namespace: 'ns-a', name: 'old-name' }]);
    await reconcileAll();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'old-name')).toBeDefined();
    h.cluster.putObjectSync({ ...os, spec: { ...os.spec, destinations: [{ namespace: 'ns-a', name: 'new-name' }] } });
    await until(() => h.catalog.names()[0] === distributionName(os.metadata.uid!, 'new-name'));
    await reconcileAll();
    await h.reconciler.reconcile(distributionName(os.metadata.uid!, 'old-name'));
    expect(h.cluster.object('ConfigMap', 'ns-a', 'new-name')).toBeDefined();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'old-name')).toBeUndefined();
  });
});
