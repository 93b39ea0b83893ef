// A member that joins the fleet after a distribution was created gets its copies (Karmada schedules
// the distribution to it, the product there writes them); and what the whole tier holds in memory.
import { readFile } from 'node:fs/promises';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { isNotFound } from '../../src/k8s/errors.js';
import { joinMember } from '../control-plane/index.js';
import { condition, configMapOf, distributionOf, Kube } from '../e2e/fixtures/kube.js';
import { uniqueName, waitFor } from '../e2e/support/cluster.js';
import { startMember } from './members.js';

const fleetKc = new KubeConfig();
fleetKc.loadFromFile(inject('fleetKubeconfigPath'));
const fleet = new Kube(fleetKc);
const CLUSTERS = { group: 'cluster.karmada.io', version: 'v1alpha1', plural: 'clusters' };
const MiB = 1024 * 1024;

async function rssOf(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kib) * 1024;
}

/** Removes the Cluster from the fleet and waits until Karmada has let it go. */
async function unjoin(name: string): Promise<void> {
  const custom = fleetKc.makeApiClient(CustomObjectsApi);
  await custom.deleteClusterCustomObject({ ...CLUSTERS, name });
  await waitFor(
    async () => {
      try {
        await custom.getClusterCustomObject({ ...CLUSTERS, name });
        return undefined;
      } catch (error) {
        if (isNotFound(error)) return true;
        throw error;
      }
    },
    { what: `Cluster ${name} removed`, timeoutMs: 90_000 },
  );
}

describe('a member that joins later', () => {
  it('gets its copies, and the fleet status counts them', async () => {
    const [firstMember] = inject('members');
    const firstKc = new KubeConfig();
    firstKc.loadFromFile(firstMember!.kubeconfigPath);
    const first = new Kube(firstKc);
    const tag = uniqueName('join');
    await first.createNamespace('fleet', { 'fleet-test': tag });
    const name = uniqueName('rd-join');
    const selector = { namespaceLabelSelector: { matchLabels: { 'fleet-test': tag } } };
    try {
      await fleet.createDistribution(distributionOf(name, configMapOf('fleet-join', { value: 'one' }), selector));
      await fleet.waitForStatus(name, (s, rd) => s.desired === 1 && condition(rd, 'Ready')?.status === 'True', 60_000);

      const third = await startMember('member3', (line) => console.error(`[fleet] ${line}`));
      try {
        const late = new Kube(third.plane.kubeConfig);
        const namespace = (await late.createNamespace('fleet', { 'fleet-test': tag })).metadata!.name!;
        await joinMember(fleetKc, third.name, third.plane);
        const copy = await waitFor(() => late.get('ConfigMap', namespace, 'fleet-join'), { what: 'the copy in the member that joined', timeoutMs: 120_000 });
        expect(copy.data).toEqual({ value: 'one' });
        const rd = await fleet.waitForStatus(name, (s, current) => s.desired === 2 && s.observedGeneration === current.metadata.generation, 60_000);
        expect(condition(rd, 'Ready')).toMatchObject({ status: 'True', message: '2 of 2 targets hold a correct copy in 3 clusters' });
        await fleet.deleteDistribution(name);
        await waitFor(async () => ((await late.getDistribution(name)) === undefined ? true : undefined), { what: 'the distribution gone from the member that joined', timeoutMs: 60_000 });
        await unjoin(third.name);
      } finally {
        await third.stop();
      }
    } finally {
      await fleet.cleanup();
      await first.cleanup();
    }
  });
});

describe("the tier's memory", () => {
  it('stays within what a CI machine holds (resident memory of every process)', async () => {
    const processes = inject('processes');
    const measured = await Promise.all(processes.map(async (p) => ({ ...p, rss: await rssOf(p.pid) })));
    const total = measured.reduce((sum, p) => sum + p.rss, 0);
    const lines = measured.map((p) => `${p.name} ${Math.round(p.rss / MiB)} MiB`);
    console.log(`[fleet] resident memory: ${Math.round(total / MiB)} MiB in ${measured.length} processes (${lines.join(', ')})`);
    expect(total).toBeLessThan(4 * 1024 * MiB);
  });
});
