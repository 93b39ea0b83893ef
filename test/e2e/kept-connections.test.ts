// The leader keeps its writers' connections open: a template change long after the last one writes
// at once, without opening (and the API server accepting) a TLS connection per write in flight.
// (A distribution's first copies may open more: a new distributed name starts a watch.)
// The client here closes an idle connection after 0.5 s and asks a kept one for the API server's
// version every second, so that "long after" takes seconds.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Resource } from '../../src/domain/types.js';
import { createMetrics } from '../../src/metrics.js';
import { kubeClientOf } from '../kube-client.js';
import { distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { noLeaderElection } from './fixtures/test-settings.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';

const N = 40;
const WRITERS = 16;

const client = kubeClientOf(loadKubeConfig(), { maxConnections: WRITERS + 4, idleMs: 500, keepAliveMs: 1_000 });
const suite = useReconcileSuite({ metrics: createMetrics(), settings: { ...noLeaderElection, applyParallelism: WRITERS }, client });
const { kube } = suite;
const team = uniqueName('kept');
const namespaces: string[] = [];

beforeAll(async () => {
  const created = await Promise.all(Array.from({ length: N }, () => kube.createNamespace('kept', { team })));
  namespaces.push(...created.map((ns) => ns.metadata?.name ?? ''));
}, 120_000);

describe("the leader's connections to the API server", () => {
  it(`stay open while idle: an update of ${N} copies after a quiet spell opens none`, async () => {
    const name = uniqueName('rd-kept');
    const configMap: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept' }, data: { revision: '1' } };
    await kube.createDistribution(distributionOf(name, configMap, { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.succeeded === N, 60_000);
    await suite.controller.idle();
    // Four idle times: every connection not kept is closed by now, the kept ones were asked.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const before = client.connectionsOpened();
    expect(before).toBeGreaterThanOrEqual(WRITERS);

    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource.data = { revision: '2' };
    });
    await kube.waitForStatus(name, (s) => s.observedGeneration === 2 && s.succeeded === N, 60_000);
    expect((await kube.get('ConfigMap', namespaces.at(-1) ?? '', 'kept'))?.data).toEqual({ revision: '2' });
    expect(client.connectionsOpened() - before).toBe(0);
  });
});
