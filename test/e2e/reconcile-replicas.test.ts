// Several replicas as real processes: one leads and reconciles, a kill -9 hands over within
// seconds, and a crash in the middle of a fan-out leaves nothing wrong once a replica runs again.
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { LABEL_DISTRIBUTION, type Resource } from '../../src/domain/types.js';
import { startReplica, type Replica } from './fixtures/controller-process.js';
import { distributionOf, Kube } from './fixtures/kube.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

let kube: Kube;
let core: CoreV1Api;
let coordination: CoordinationV1Api;
const replicas: Replica[] = [];
const kubeconfigPath = inject('kubeconfigPath');

beforeAll(() => {
  const kc = loadKubeConfig();
  kube = new Kube(kc);
  core = kc.makeApiClient(CoreV1Api);
  coordination = kc.makeApiClient(CoordinationV1Api);
});

afterAll(async () => {
  await Promise.allSettled(replicas.map((r) => r.stop()));
  await kube?.cleanup();
});

async function replica(identity: string, leaseName: string, applyParallelism?: number): Promise<Replica> {
  const started = await startReplica({ kubeconfigPath, identity, leaseName, applyParallelism });
  replicas.push(started);
  return started;
}

function configMap(data: Record<string, string>): Resource {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data };
}

async function leader(candidates: Replica[]): Promise<Replica> {
  return waitFor(
    async () => {
      const states = await Promise.all(candidates.map((r) => r.state()));
      const leaders = candidates.filter((_, i) => states[i]?.leader);
      return leaders.length === 1 ? leaders[0] : undefined;
    },
    { what: 'exactly one leader', timeoutMs: 20_000, intervalMs: 100 },
  );
}

async function namespaces(count: number, team: string): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, count - i) }, () => kube.createNamespace('rr', { team })));
    names.push(...batch.map((ns) => ns.metadata!.name!));
  }
  return names;
}

async function copiesOf(name: string): Promise<Resource[]> {
  const list = await core.listConfigMapForAllNamespaces({ labelSelector: `${LABEL_DISTRIBUTION}=${name}` });
  return list.items as unknown as Resource[];
}

describe('reconcile: replicas', () => {
  const leaseName = uniqueName('rd-e2e-replicas');
  let a: Replica;
  let b: Replica;

  it('runs two replicas of which exactly one reconciles, the Lease naming it', async () => {
    a = await replica('replica-a', leaseName);
    b = await replica('replica-b', leaseName);
    const first = await leader([a, b]);
    const other = first === a ? b : a;
    const lease = await coordination.readNamespacedLease({ namespace: 'default', name: leaseName });
    expect(lease.spec?.holderIdentity).toBe(first.identity);

    const team = uniqueName('team');
    const names = await namespaces(3, team);
    const name = uniqueName('rd-replicas');
    await kube.createDistribution(distributionOf(name, configMap({ a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.succeeded === 3);
    for (const ns of names) expect((await kube.get('ConfigMap', ns, 'settings'))?.data).toEqual({ a: '1' });

    const [leading, following] = await Promise.all([first.state(), other.state()]);
    // Copies and status were written by the leader only; the follower wrote nothing.
    expect(leading.tally.byRequest['create configmaps']).toBeGreaterThanOrEqual(3);
    expect(leading.tally.byRequest['patch resourcedistributions']).toBeGreaterThanOrEqual(1);
    expect(following.tally.writes).toBe(0);
    expect(following.synced).toBe(true);
  });

  it('hands over to the other replica within seconds when the leader is killed (kill -9), and converges', async () => {
    const first = await leader([a, b]);
    const other = first === a ? b : a;
    const team = uniqueName('team');
    const names = await namespaces(3, team);
    const name = uniqueName('rd-takeover');
    await kube.createDistribution(distributionOf(name, configMap({ a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.succeeded === 3);

    const killedAt = Date.now();
    await first.kill();
    await waitFor(async () => ((await other.state()).leader ? true : undefined), { what: 'takeover', timeoutMs: 15_000, intervalMs: 100 });
    const takeoverMs = Date.now() - killedAt;
    console.log(`takeover: new leader ${takeoverMs} ms after kill -9 (lease duration 4 s)`);
    expect(takeoverMs).toBeLessThan(10_000);

    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource.data = { a: '2' };
    });
    for (const ns of names) await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.data?.a === '2');
    await kube.waitForStatus(name, (s) => s.observedGeneration === 2 && s.succeeded === 3);
    expect((await coordination.readNamespacedLease({ namespace: 'default', name: leaseName })).spec?.holderIdentity).toBe(other.identity);
  });

  it('leaves every copy right and nothing behind after a crash in the middle of a fan-out', async () => {
    // Only the replica under test may reconcile.
    await Promise.all(replicas.map((r) => r.stop()));
    const lease = uniqueName('rd-e2e-crash');
    const team = uniqueName('team');
    const names = await namespaces(60, team);
    const dropped = new Set(names.slice(40));
    // One write at a time, so that the kill lands mid-way.
    const crashing = await replica('replica-crash', lease, 1);
    const name = uniqueName('rd-crash');
    await kube.createDistribution(distributionOf(name, configMap({ a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));

    const atKill = await waitFor(async () => {
      const copies = await copiesOf(name);
      return copies.length > 0 ? copies.length : undefined;
    }, { what: 'first copies', intervalMs: 10 });
    await crashing.kill();
    const leftAfterKill = (await copiesOf(name)).length;
    console.log(`crash: killed with ${atKill} of 60 copies seen (${leftAfterKill} once the writes in flight landed)`);
    expect(leftAfterKill).toBeLessThan(60);

    // While no replica runs: the template changes and a third of the namespaces stop being targets.
    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource.data = { a: '2' };
      rd.spec.targets = { namespaceLabelSelector: { matchLabels: { team } }, excludedNamespaces: { list: [...dropped].map((n) => ({ name: n })) } };
    });

    const started = Date.now();
    await replica('replica-crash', lease, 16);
    await kube.waitForStatus(name, (s) => s.observedGeneration === 2 && s.desired === 40 && s.succeeded === 40, 60_000);
    console.log(`crash: converged ${Date.now() - started} ms after restart (process start included)`);
    const copies = await copiesOf(name);
    expect(copies.map((c) => c.metadata.namespace).sort()).toEqual(names.filter((n) => !dropped.has(n)).sort());
    expect(copies.every((c) => c.data?.a === '2')).toBe(true);
  });
});
