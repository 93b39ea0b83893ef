// A copy whose distribution label someone removed by hand. The label-selected watch of copies
// reports that as DELETED; the controller puts the label back, and the watch reports the copy
// ADDED again. From then on the copy must be followed exactly as before: each test below removes
// the label, waits for it to come back, then does one of the things the controller must answer at
// once. The sweep is set an hour apart, so that only the watch can be what answers.
import { afterAll, describe, expect, it } from 'vitest';
import { OBJECT_SYNC_FINALIZER, OBJECT_SYNC_GROUP, OBJECT_SYNC_PLURAL, OBJECT_SYNC_VERSION, type ObjectSync } from '../../src/domain/object-sync.js';
import { describeTally } from '../../src/domain/plan-preview.js';
import { runSteps } from '../../src/domain/steps.js';
import { LABEL_DISTRIBUTION, type Resource } from '../../src/domain/types.js';
import { configMapOf, distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName, waitFor } from './support/cluster.js';

const suite = useReconcileSuite({ objectSyncs: true, settings: { sweepIntervalMs: 3_600_000 } });
const { kube } = suite;

/** Well within the watch's reach, and far from the sweep's. */
const PROMPT_MS = 15_000;
/** The namespaces of ObjectSyncs made here: removed while the controller still runs, whatever a test left. */
const objectSyncNamespaces: string[] = [];

// Registered after the suite's own: runs before it stops the controller, which releases the
// finalizers. One left by a failed test would otherwise hold its namespace in Terminating.
afterAll(async () => {
  for (const namespace of objectSyncNamespaces) {
    const api = objectSyncs(namespace);
    await deleted(api).catch(async () => {
      const os = (await kube.custom.getNamespacedCustomObject({ ...api, name: 'shared' }).catch(() => undefined)) as ObjectSync | undefined;
      if (os !== undefined) await kube.custom.replaceNamespacedCustomObject({ ...api, name: 'shared', body: { ...os, metadata: { ...os.metadata, finalizers: [] } } });
    });
  }
});
const hasData = (data: Record<string, string>) => (object: Resource | undefined) => JSON.stringify(object?.data) === JSON.stringify(data);

/** Removes the distribution label from the copy, as `kubectl label configmap <copy> <label>-` does, and waits until the controller has put it back on the same object. */
async function unlabelled(namespace: string, name: string): Promise<Resource> {
  const copy = (await kube.waitForObject('ConfigMap', namespace, name, (o) => o?.metadata.labels?.[LABEL_DISTRIBUTION] !== undefined))!;
  const value = copy.metadata.labels![LABEL_DISTRIBUTION];
  const labels = { ...copy.metadata.labels };
  delete labels[LABEL_DISTRIBUTION];
  await kube.put({ ...copy, metadata: { ...copy.metadata, labels } });
  const back = await kube.waitForObject('ConfigMap', namespace, name, (o) => o?.metadata.labels?.[LABEL_DISTRIBUTION] === value, PROMPT_MS);
  expect(back?.metadata.uid).toBe(copy.metadata.uid);
  return back!;
}

/** A distribution of one ConfigMap into namespaces labelled `team`, with its copy in one such namespace. */
async function distributedOnce(prefix: string): Promise<{ name: string; ns: string; team: string }> {
  const team = uniqueName('team');
  const ns = (await kube.createNamespace(prefix, { team })).metadata!.name!;
  const name = uniqueName(`rd-${prefix}`);
  await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
  await kube.waitForStatus(name, (s) => s.desired === 1 && s.succeeded === 1);
  return { name, ns, team };
}

describe('reconcile: a copy whose label was removed and put back', () => {
  it('is recreated at once when deleted by hand', async () => {
    const { name, ns } = await distributedOnce('relabel-delete');
    const copy = await unlabelled(ns, 'settings');

    await kube.remove('ConfigMap', ns, 'settings');

    const again = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined && o.metadata.uid !== copy.metadata.uid, PROMPT_MS);
    expect(again?.data).toEqual({ a: '1' });
    await kube.waitForStatus(name, (s) => s.desired === 1 && s.succeeded === 1);
  });

  it('is reverted at once when edited by hand', async () => {
    const { ns } = await distributedOnce('relabel-edit');
    const copy = await unlabelled(ns, 'settings');

    await kube.put({ ...copy, data: { a: 'edited' } });

    const repaired = await kube.waitForObject('ConfigMap', ns, 'settings', hasData({ a: '1' }), PROMPT_MS);
    expect(repaired?.metadata.uid).toBe(copy.metadata.uid);
  });

  it('is removed when its namespace is no longer targeted', async () => {
    const { name, ns } = await distributedOnce('relabel-untarget');
    await unlabelled(ns, 'settings');

    await kube.labelNamespace(ns, { team: null });

    await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o === undefined, PROMPT_MS);
    await kube.waitForStatus(name, (s) => s.desired === 0 && s.succeeded === 0);
  });

  it('is previewed as up to date, not as a copy to create', async () => {
    const { name, ns } = await distributedOnce('relabel-preview');
    await unlabelled(ns, 'settings');
    const rd = (await kube.getDistribution(name))!;

    // What the distribution webhook answers to `kubectl apply --dry-run=server` of it unchanged.
    const lines = await waitFor(
      () => {
        const tally = runSteps(suite.controller.previewPlan(rd));
        const said = tally === undefined ? [] : describeTally(tally, { sameNamedUnknown: true });
        return Promise.resolve(said.length > 0 && said.every((line) => !line.includes('to create')) ? said : undefined);
      },
      { what: `a plan of ${name} without a copy to create`, timeoutMs: PROMPT_MS },
    );
    expect(lines).toEqual(['plan: 1 copy is already up to date']);
  });
});

describe('reconcile: an ObjectSync copy whose label was removed and put back', () => {
  /** An ObjectSync of a ConfigMap in its own namespace to one other namespace, Ready. */
  async function synced(): Promise<{ target: string; api: ObjectSyncsIn }> {
    const source = (await kube.createNamespace('relabel-os')).metadata!.name!;
    const target = (await kube.createNamespace('relabel-os')).metadata!.name!;
    await kube.core.createNamespacedConfigMap({ namespace: source, body: { metadata: { name: 'shared' }, data: { k: 'v' } } });
    const api = objectSyncs(source);
    objectSyncNamespaces.push(source);
    const body = { apiVersion: 'sync.rustrial.org/v1alpha1', kind: 'ObjectSync', metadata: { name: 'shared' }, spec: { source: { group: '', kind: 'ConfigMap', name: 'shared' }, destinations: [{ namespace: target }] } };
    await kube.custom.createNamespacedCustomObject({ ...api, body });
    await objectSyncWith(api, (os) => condition(os, 'Ready') === 'True' && os.metadata.finalizers?.includes(OBJECT_SYNC_FINALIZER) === true);
    return { target, api };
  }

  it('is recreated when deleted by hand, and the ObjectSync reports in sync only with it there', async () => {
    const { target, api } = await synced();
    const copy = await unlabelled(target, 'shared');

    await kube.remove('ConfigMap', target, 'shared');

    const again = await kube.waitForObject('ConfigMap', target, 'shared', (o) => o !== undefined && o.metadata.uid !== copy.metadata.uid, PROMPT_MS);
    expect(again?.data).toEqual({ k: 'v' });
    const os = await objectSyncWith(api, (found) => condition(found, 'InSync') === 'True' && found.status?.succeeded === 1);
    expect(condition(os, 'Ready')).toBe('True');
    await deleted(api);
  });

  it('is deleted with the ObjectSync', async () => {
    const { target, api } = await synced();
    await unlabelled(target, 'shared');

    await deleted(api);

    await kube.waitForObject('ConfigMap', target, 'shared', (o) => o === undefined, PROMPT_MS);
  });
});

/** Where the ObjectSyncs of a namespace are, for the custom objects API. */
interface ObjectSyncsIn {
  group: string;
  version: string;
  plural: string;
  namespace: string;
}

function objectSyncs(namespace: string): ObjectSyncsIn {
  return { group: OBJECT_SYNC_GROUP, version: OBJECT_SYNC_VERSION, plural: OBJECT_SYNC_PLURAL, namespace };
}

function condition(os: ObjectSync, type: string): string | undefined {
  return os.status?.conditions.find((c) => c.type === type)?.status;
}

async function objectSyncWith(api: ObjectSyncsIn, accept: (os: ObjectSync) => boolean): Promise<ObjectSync> {
  return waitFor(
    async () => {
      const os = (await kube.custom.getNamespacedCustomObject({ ...api, name: 'shared' })) as ObjectSync;
      return accept(os) ? os : undefined;
    },
    { what: `ObjectSync ${api.namespace}/shared`, timeoutMs: PROMPT_MS },
  );
}

/** Deletes the ObjectSync and waits until it is gone (its finalizer released). */
async function deleted(api: ObjectSyncsIn): Promise<void> {
  await kube.custom.deleteNamespacedCustomObject({ ...api, name: 'shared' }).catch(() => undefined);
  await waitFor(
    async () => (((await kube.custom.listNamespacedCustomObject(api)) as { items: unknown[] }).items.length === 0 ? true : undefined),
    { what: `ObjectSync ${api.namespace}/shared gone`, timeoutMs: PROMPT_MS },
  );
}
