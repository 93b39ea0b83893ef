// Connections are reused: a fan-out to 300 namespaces, then an update of all 300 copies, opens
// about as many TLS connections as requests may run in parallel (plus one per watch), never one
// per request. Counted on the client the controller uses (each `secureConnect` is a handshake).
import { beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '../../src/domain/types.js';
import { createMetrics } from '../../src/metrics.js';
import { kubeClientOf } from '../kube-client.js';
import { distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { noLeaderElection } from './fixtures/test-settings.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';

const N = 300;
const MAX_CONNECTIONS = 20;
// distributions, namespaces, Secrets and ConfigMaps: one long-lived connection each.
const WATCHES = 4;

const client = kubeClientOf(loadKubeConfig(), { maxConnections: MAX_CONNECTIONS });
const suite = useReconcileSuite({ metrics: createMetrics(), settings: { ...noLeaderElection, applyParallelism: 16 }, client });
const { kube } = suite;
const team = uniqueName('reuse');
const namespaces: string[] = [];

beforeAll(async () => {
  for (let i = 0; i < N; i += 25) {
    const batch = await Promise.all(Array.from({ length: Math.min(25, N - i) }, () => kube.createNamespace('reuse', { team })));
    namespaces.push(...batch.map((ns) => ns.metadata?.name ?? ''));
  }
}, 180_000);

describe('connections to the API server', () => {
  it(`stay O(parallelism) over a fan-out to ${N} namespaces and its update`, async () => {
    const configMap: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared' }, data: { revision: '1' } };
    const name = uniqueName('rd-reuse');
    await suite.controller.idle();
    const before = client.connectionsOpened();
    suite.controller.requests.reset();

    await kube.createDistribution(distributionOf(name, configMap, { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.succeeded === N, 120_000);
    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource.data = { revision: '2' };
    });
    await kube.waitForStatus(name, (s) => s.observedGeneration === 2 && s.succeeded === N, 120_000);
    await suite.controller.idle();

    const requests = suite.controller.requests.tally().writes;
    const opened = client.connectionsOpened() - before;
    console.log(`connections: ${opened} TLS connections opened for ${requests} writes (pool ${MAX_CONNECTIONS}, ${WATCHES} watches)`);
    expect(requests).toBeGreaterThanOrEqual(2 * N);
    expect(opened).toBeLessThanOrEqual(MAX_CONNECTIONS + WATCHES);
    expect((await kube.get('ConfigMap', namespaces.at(-1) ?? '', 'shared'))?.data).toEqual({ revision: '2' });
  });
});
