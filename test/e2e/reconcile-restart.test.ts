// A controller that starts over copies that already exist (a restart, a new leader) must take them
// as they are: its first pass over converged distributions writes nothing and deletes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '../../src/domain/types.js';
import type { RunningController } from '../../src/reconcile/controller.js';
import { startInProcessController } from './fixtures/in-process.js';
import { distributionOf, Kube } from './fixtures/kube.js';
import { noLeaderElection } from './fixtures/test-settings.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';

const N = 10;

let kube: Kube;
let controller: RunningController | undefined;
const team = uniqueName('team');
const namespaces: string[] = [];

beforeAll(async () => {
  kube = new Kube(loadKubeConfig());
  const created = await Promise.all(Array.from({ length: N }, () => kube.createNamespace('restart', { team })));
  namespaces.push(...created.map((ns) => ns.metadata!.name!));
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  await kube?.cleanup();
});

/** Waits until the controller has gone 1.5 s without a write. */
async function quiet(running: RunningController): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    await running.idle();
    running.requests.reset();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await running.idle();
    if (running.requests.tally().writes === 0) return;
  }
  throw new Error(`never quiet: ${JSON.stringify(running.requests.tally())}`);
}

describe('reconcile: restart over existing copies', () => {
  it('starts over converged Secret and ConfigMap copies without a single write', async () => {
    const targets = { namespaceLabelSelector: { matchLabels: { team } } };
    const configMap: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'restart-settings' }, data: { a: '1' } };
    const secret: Resource = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'restart-creds' }, type: 'Opaque', data: { t: 'dA==' } };
    const first = uniqueName('rd-restart-cm');
    const second = uniqueName('rd-restart-secret');

    controller = await startInProcessController(kube.kc, { settings: noLeaderElection });
    await kube.createDistribution(distributionOf(first, configMap, targets));
    await kube.createDistribution(distributionOf(second, secret, targets));
    await kube.waitForStatus(first, (s) => s.succeeded === N, 60_000);
    await kube.waitForStatus(second, (s) => s.succeeded === N, 60_000);
    const uids = await Promise.all(namespaces.map(async (ns) => (await kube.get('Secret', ns, 'restart-creds'))?.metadata.uid));
    // Earlier files' distributions may still have copies the garbage collector has not removed:
    // let this controller clean those up first, so the count below is about our copies alone.
    await quiet(controller);
    await controller.stop();

    controller = await startInProcessController(kube.kc, { settings: noLeaderElection });
    controller.sweepNow();
    await controller.idle();

    const tally = controller.requests.tally();
    expect(tally.writes, JSON.stringify(tally.byRequest)).toBe(0);
    const after = await Promise.all(namespaces.map(async (ns) => (await kube.get('Secret', ns, 'restart-creds'))?.metadata.uid));
    expect(after).toEqual(uids);
    for (const ns of namespaces) expect((await kube.get('ConfigMap', ns, 'restart-settings'))?.data).toEqual({ a: '1' });
    expect((await kube.getDistribution(first))?.status?.succeeded).toBe(N);
  });
});
