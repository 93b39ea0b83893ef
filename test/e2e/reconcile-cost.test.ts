// What the reconciler costs: time to converge N namespaces, and the proof that a sweep over
// unchanged distributions makes zero writes and no per-namespace reads (API requests counted by the
// controller's own counting ClusterApi).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '../../src/domain/types.js';
import { createMetrics } from '../../src/metrics.js';
import { distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { noLeaderElection } from './fixtures/test-settings.js';
import { uniqueName } from './support/cluster.js';

const N = 100;

const metrics = createMetrics();
// No leader election here: lease renewals are writes too, and this file counts writes.
const suite = useReconcileSuite({ metrics, settings: noLeaderElection });
const { kube } = suite;
const team = uniqueName('team');
const names: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < N; i += 10) {
    const batch = await Promise.all(Array.from({ length: Math.min(10, N - i) }, () => kube.createNamespace('cost', { team })));
    names.push(...batch.map((ns) => ns.metadata!.name!));
  }
}, 120_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the controller has made no request for a while (other tests' leftovers settle). */
async function quiet(): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    await suite.controller.idle();
    suite.controller.requests.reset();
    await sleep(1_500);
    await suite.controller.idle();
    if (suite.controller.requests.tally().writes === 0) return;
  }
  throw new Error(`never quiet: ${JSON.stringify(suite.controller.requests.tally())}`);
}

async function reconciles(): Promise<number> {
  const { values } = await metrics.reconcileTotal.get();
  return values.reduce((sum, v) => sum + v.value, 0);
}

describe('reconcile: cost', () => {
  it(`converges ${N} namespaces`, async () => {
    const configMap: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } };
    // `cert` as the base64 tool writes it (wrapped): the API server stores it unwrapped, and the
    // sweep below proves the copies still count as in sync.
    const secret: Resource = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, type: 'Opaque', data: { t: 'dA==', cert: 'aGVsbG8gd29y\nbGQ=' } };
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
    suite.controller.requests.reset();

    suite.controller.sweepNow();
    await suite.controller.idle();

    const tally = suite.controller.requests.tally();
    const swept = (await reconciles()) - reconcilesBefore;
    console.log(`sweep: ${swept} reconciles over ${N} namespaces, requests ${JSON.stringify(tally.byRequest)}`);
    expect(swept).toBeGreaterThanOrEqual(2);
    expect(tally.writes).toBe(0);
    expect(tally.byVerb.get ?? 0).toBe(0);
    expect(tally.byVerb.list ?? 0).toBe(0);
  });
});
