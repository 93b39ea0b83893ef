// Installed over an existing OpenKruise setup: copies as OpenKruise leaves them (its `from` and
// `hashcode` annotations, a controller reference to the same ResourceDistribution, no label of
// ours) are taken over in place: same uid, one write per copy, the status right.
import { PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashResource } from '../../src/domain/hash.js';
import { CONDITION_TYPES, GROUP, KIND, LABEL_DISTRIBUTION, PLURAL, VERSION, ANNOTATION_FROM, ANNOTATION_HASH, ANNOTATION_TIMESTAMP, type Resource } from '../../src/domain/types.js';
import { createMetrics } from '../../src/metrics.js';
import type { RunningController } from '../../src/reconcile/controller.js';
import { startInProcessController } from './fixtures/in-process.js';
import { configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { noLeaderElection } from './fixtures/test-settings.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';

const N = 5;
const kube = new Kube(loadKubeConfig());
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
let controller: RunningController | undefined;

afterAll(async () => {
  await controller?.stop();
  await kube.cleanup();
});

const name = uniqueName('rd-kruise');
const template = configMapOf('shared-settings', { mode: 'kruise' });
const namespaces: string[] = [];
const uids = new Map<string, string>();
let resourceVersion = '';

beforeAll(async () => {
  for (let i = 0; i < N; i++) namespaces.push((await kube.createNamespace('migrate')).metadata!.name!);
  const rd = await kube.createDistribution(distributionOf(name, template, { includedNamespaces: { list: namespaces.map((ns) => ({ name: ns })) } }));
  // What OpenKruise's controller wrote: the copies and a converged status.
  for (const namespace of namespaces) {
    const copy: Resource = {
      ...template,
      metadata: {
        name: 'shared-settings',
        namespace,
        annotations: { [ANNOTATION_FROM]: name, [ANNOTATION_HASH]: hashResource(template), [ANNOTATION_TIMESTAMP]: '2026-01-01T00:00:00Z' },
        ownerReferences: [{ apiVersion: `${GROUP}/${VERSION}`, kind: KIND, name, uid: rd.metadata.uid!, controller: true, blockOwnerDeletion: true }],
      },
    };
    const written = await kube.put(copy);
    uids.set(namespace, written.metadata.uid!);
    resourceVersion = written.metadata.resourceVersion!;
  }
  const conditions = CONDITION_TYPES.map((type) => ({ type, status: 'False', reason: 'Succeeded', lastTransitionTime: '2026-01-01T00:00:00Z' }));
  await kube.custom.patchClusterCustomObjectStatus(
    { group: GROUP, version: VERSION, plural: PLURAL, name, body: { status: { desired: N, succeeded: N, failed: 0, observedGeneration: 1, conditions } } },
    merge,
  );
}, 60_000);

describe('migration from OpenKruise', () => {
  it('takes over the copies OpenKruise left: same uid, one write each, status right', async () => {
    // Every write to a copy is a MODIFIED event of its watch.
    const writes = new Map<string, number>();
    const watch = await new Watch(kube.kc).watch(
      '/api/v1/configmaps',
      { fieldSelector: 'metadata.name=shared-settings', resourceVersion: resourceVersion },
      (type: string, object: Resource) => {
        const namespace = object.metadata.namespace ?? '';
        if (type === 'MODIFIED' && namespaces.includes(namespace)) writes.set(namespace, (writes.get(namespace) ?? 0) + 1);
      },
      () => undefined,
    );
    controller = await startInProcessController(kube.kc, { settings: noLeaderElection, metrics: createMetrics() });
    await kube.waitForStatus(name, (s) => s.succeeded === N && s.conditions.every((c) => c.status === (c.type === 'Ready' ? 'True' : 'False')));
    for (const namespace of namespaces) {
      await kube.waitForObject('ConfigMap', namespace, 'shared-settings', (o) => o?.metadata.labels?.[LABEL_DISTRIBUTION] === name);
    }
    await controller.idle();
    await new Promise((resolve) => setTimeout(resolve, 500));
    watch.abort();

    expect(Object.fromEntries(writes)).toEqual(Object.fromEntries(namespaces.map((ns) => [ns, 1])));
    for (const namespace of namespaces) {
      const copy = await kube.get('ConfigMap', namespace, 'shared-settings');
      expect(copy?.metadata.uid).toBe(uids.get(namespace));
      expect(copy?.data).toEqual({ mode: 'kruise' });
    }
    // Taken over by reading first: no create that fails on an object already there.
    expect(controller.requests.tally().failures).not.toHaveProperty('create configmaps 409');
    const status = (await kube.getDistribution(name))?.status;
    expect(status).toMatchObject({ desired: N, succeeded: N, failed: 0 });
  });
});
