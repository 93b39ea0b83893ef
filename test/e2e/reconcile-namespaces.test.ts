// Namespaces coming, going and hanging in Terminating; distributions going away; and generation
// of copies for a newly admitted namespace on a replica that is not the leader.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { ANNOTATION_FROM, GROUP, LABEL_DISTRIBUTION, PLURAL, VERSION } from '../../src/domain/types.js';
import { toMicroTime } from '../../src/k8s/leader-election.js';
import type { RunningController } from '../../src/reconcile/controller.js';
import { startInProcessController } from './fixtures/in-process.js';
import { condition, configMapOf, distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName, waitFor } from './support/cluster.js';

const HOLD = 'e2e.resource-distributor.io/hold';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const suite = useReconcileSuite();
const { kube } = suite;
const { core } = kube;
const held: { namespace: string; name: string }[] = [];
const extraControllers: RunningController[] = [];

afterAll(async () => {
  await Promise.allSettled(extraControllers.map((c) => c.stop()));
  // Let namespaces held in Terminating go.
  await Promise.allSettled(
    held.map(({ namespace, name }) => core.patchNamespacedConfigMap({ namespace, name, body: { metadata: { finalizers: null } } }, merge)),
  );
});

async function copiesLabelled(name: string): Promise<number> {
  const selector = `${LABEL_DISTRIBUTION}=${name}`;
  const [maps, secrets] = await Promise.all([
    core.listConfigMapForAllNamespaces({ labelSelector: selector }),
    core.listSecretForAllNamespaces({ labelSelector: selector }),
  ]);
  return maps.items.length + secrets.items.length;
}

describe('reconcile: namespaces', () => {
  it('reports an included namespace that does not exist, and heals when it is created', async () => {
    const present = (await kube.createNamespace('rn')).metadata!.name!;
    const later = kube.reserveNamespace('rn-later');
    const name = uniqueName('rd-missing');
    await kube.createDistribution(
      distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: [{ name: present }, { name: later }] } }),
    );

    const rd = await kube.waitForStatus(name, (s) => s.desired === 2 && s.succeeded === 1);
    expect(condition(rd, 'NamespaceNotExists')).toMatchObject({ status: 'True', reason: 'NamespaceNotFound', failedNamespace: [later] });

    await kube.createNamed(later);
    await kube.waitForObject('ConfigMap', later, 'settings', (o) => o !== undefined);
    const healed = await kube.waitForStatus(name, (s) => s.succeeded === 2);
    expect(condition(healed, 'NamespaceNotExists')).toMatchObject({ status: 'False', reason: 'Succeeded' });
  });

  it('counts a terminating namespace as missing', async () => {
    const ns = (await kube.createNamespace('rn-term')).metadata!.name!;
    const name = uniqueName('rd-term');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: [{ name: ns }] } }));
    await kube.waitForStatus(name, (s) => s.succeeded === 1);
    // An object with a finalizer nobody removes keeps the namespace in Terminating.
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'holder', finalizers: [HOLD] } } });
    held.push({ namespace: ns, name: 'holder' });

    await core.deleteNamespace({ name: ns });

    const rd = await kube.waitForStatus(name, (s) => s.succeeded === 0);
    expect(rd.status).toMatchObject({ desired: 1, failed: 1 });
    expect(condition(rd, 'NamespaceNotExists')).toMatchObject({ status: 'True', failedNamespace: [ns] });
    expect((await core.readNamespace({ name: ns })).status?.phase).toBe('Terminating');
  });

  it('leaves nothing behind when a distribution is deleted (garbage collection)', async () => {
    const team = uniqueName('team');
    const names = [];
    for (let i = 0; i < 3; i++) names.push((await kube.createNamespace('rn-gc', { team })).metadata!.name!);
    const name = uniqueName('rd-gc');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.succeeded === 3);
    expect(await copiesLabelled(name)).toBe(3);
    // No controller runs: the garbage collector alone follows the owner references.
    await suite.controller.stop();

    await kube.deleteDistribution(name);

    await waitFor(async () => ((await copiesLabelled(name)) === 0 ? true : undefined), { what: `copies of ${name} gone` });
    suite.controller = await startInProcessController(kube.kc);
  });

  it('keeps the copies of a distribution deleted with propagationPolicy Orphan (kubectl delete --cascade=orphan)', async () => {
    const ns = (await kube.createNamespace('rn-orphan')).metadata!.name!;
    const name = uniqueName('rd-orphan');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: [{ name: ns }] } }));
    await kube.waitForStatus(name, (s) => s.succeeded === 1);
    // The garbage collector orphans only the dependents its graph holds when it handles the delete;
    // a copy written milliseconds before may not be in it yet, and is then collected as the
    // dependent of an owner that is gone. Users orphan long after the copies were written.
    await sleep(2_000);

    await kube.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name, propagationPolicy: 'Orphan' });
    // The garbage collector strips the owner reference instead of deleting the copy.
    await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined && (o.metadata.ownerReferences ?? []).length === 0);
    await waitFor(async () => ((await kube.getDistribution(name)) === undefined ? true : undefined), { what: `${name} deleted` });

    // Neither the running controller, nor a full sweep, nor a restarted one removes it.
    await suite.controller.idle();
    suite.controller.sweepNow();
    await suite.controller.idle();
    await suite.controller.stop();
    suite.controller = await startInProcessController(kube.kc);
    suite.controller.sweepNow();
    await suite.controller.idle();
    const kept = await kube.get('ConfigMap', ns, 'settings');
    expect(kept?.data).toEqual({ a: '1' });
    expect(kept?.metadata.annotations?.[ANNOTATION_FROM]).toBe(name);
  });

  it('generates the copies of a newly admitted namespace on a replica that is not the leader', async () => {
    // A lease held by someone else for an hour: this replica never leads, so only the generator writes.
    const leaseName = uniqueName('rd-e2e-held');
    const now = toMicroTime(new Date());
    await kube.kc.makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name: leaseName }, spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 3600, renewTime: now as never, acquireTime: now as never } },
    });
    await suite.controller.stop();
    const replica = await startInProcessController(kube.kc, { leaseName, waitForLeadership: false });
    extraControllers.push(replica);
    expect(replica.isLeader()).toBe(false);

    const team = uniqueName('team');
    const name = uniqueName('rd-gen');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    await waitFor(() => Promise.resolve(replica.caches.distributions.get(name) ? true : undefined), { what: 'distribution cached' });

    const started = Date.now();
    const ns = await kube.createNamespace('rn-gen', { team });
    replica.namespaceAdmitted({ name: ns.metadata!.name!, uid: ns.metadata!.uid! });
    const copy = await kube.waitForObject('ConfigMap', ns.metadata!.name!, 'settings', (o) => o !== undefined, 10_000);
    console.log(`generation: copy visible ${Date.now() - started} ms after the namespace was created`);
    expect(copy?.data).toEqual({ a: '1' });
    expect(replica.isLeader()).toBe(false);
    expect(replica.requests.tally().byRequest['patch resourcedistributions']).toBeUndefined();

    await replica.stop();
    suite.controller = await startInProcessController(kube.kc);
  });
});
