// What the reconciler costs: time to converge N namespaces, and the proof that a sweep over
// unchanged distributions makes zero writes and no per-namespace reads (API requests counted by the
// controller's own counting ClusterApi).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '../../src/domain/types.js';
import { createMetrics } from '../../src/metrics.js';
import type { RunningController } from '../../src/reconcile/controller.js';
import { startInProcessController } from './fixtures/in-process.js';
import { distributionOf, Kube } from './fixtures/kube.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';

const N = 100;

let kube: Kube;
let controller: RunningController;
const metrics = createMetrics();
const team = uniqueName('team');
const names: string[] = [];

beforeAll(async () => {
  const kc = loadKubeConfig();
  kube = new Kube(kc);
  // No leader election here: lease renewals are writes too, and this file counts writes.
  const settings = { leaderElection: { enabled: false, leaseName: '', leaseNamespace: '', identity: 'cost', leaseDurationMs: 0, renewDeadlineMs: 0, retryPeriodMs: 0 } };
  controller = await startInProcessController(kc, { metrics, settings });
  for (let i = 0; i < N; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, N - i) }, () => kube.createNamespace('cost', { team })));
    names.push(...batch.map((ns) => ns.metadata!.name!));
  }
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await kube?.cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the controller has made no request for a while (other tests' leftovers settle). */
async function quiet(): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    await controller.idle();
    controller.requests.reset();
    await sleep(1_500);
    await controller.idle();
    if (controller.requests.tally().writes === 0) return;
  }
  throw new Error(`never quiet: ${JSON.stringify(controller.requests.tally())}`);
}

async function reconciles(): Promise<number> {
  const { values } = await metrics.reconcileTotal.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

describe('reconcile: cost', () => {
  it(`converges ${N} namespaces`, async () => {
    const configMap: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } };
    const secret: Resource = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, type: 'Opaque', data: { t: 'dA==' } };
    const targets = { namespaceLabelSelector: { matchLabels: { team } } };
    const first = uniqueName('rd-cost-cm');
    const second = uniqueName('rd-cost-secret');

    const started = Date.now();
    await kube.createDistribution(distributionOf(first, configMap, targets));
    await kube.waitForStatus(first, (s) => s.succeeded === N, 60_000);
    const oneMs = Date.now() - started;
    const started2 = Date.now();
    await kube.createDistribution(distributionOf(second, secret, targets));
    await kube.waitForStatus(second, (s) => s.succeeded === N, 60_000);
    const twoMs = Date.now() - started2;
    console.log(`converge: ${N} ConfigMap copies + status in ${oneMs} ms; ${N} Secret copies + status in ${twoMs} ms`);

    await kube.updateDistribution(first, (rd) => {
      rd.spec.resource.data = { a: '2' };
    });
    const started3 = Date.now();
    await kube.waitForStatus(first, (s) => s.observedGeneration === 2 && s.succeeded === N, 60_000);
    console.log(`converge: ${N} copies updated + status in ${Date.now() - started3} ms`);
    expect((await kube.get('ConfigMap', names[N - 1]!, 'settings'))?.data).toEqual({ a: '2' });
  });

  it('sweeps unchanged distributions with zero writes and no per-namespace reads', async () => {
    await quiet();
    const reconcilesBefore = await reconciles();
    controller.requests.reset();

    controller.sweepNow();
    await controller.idle();

    const tally = controller.requests.tally();
    const swept = (await reconciles()) - reconcilesBefore;
    console.log(`sweep: ${swept} reconciles over ${N} namespaces, requests ${JSON.stringify(tally.byRequest)}`);
    expect(swept).toBeGreaterThanOrEqual(2);
    expect(tally.writes).toBe(0);
    expect(tally.byVerb.get ?? 0).toBe(0);
    expect(tally.byVerb.list ?? 0).toBe(0);
  });
});
