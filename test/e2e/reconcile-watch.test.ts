// Watches against the real API server: when the server ends them (timeoutSeconds), they resume
// from the last resourceVersion without relisting, and the controller keeps reacting.
import { describe, expect, it } from 'vitest';
import { configMapOf, distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName } from './support/cluster.js';

const suite = useReconcileSuite({ watchTimeoutSeconds: 1, stallGraceMs: 3_000 });
const { kube } = suite;
const configMap = (data: Record<string, string>) => configMapOf('settings', data);

describe('reconcile: watches', () => {
  it('resumes watches the server ends, without relisting, and keeps reacting', async () => {
    const ns = (await kube.createNamespace('rw')).metadata!.name!;
    const name = uniqueName('rd-watch');
    // ConfigMaps are watched from the first distribution that copies one, with one list.
    await kube.createDistribution(distributionOf(name, configMap({ a: '1' }), { includedNamespaces: { list: [{ name: ns }] } }));
    const copy = (await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined, 10_000))!;
    const before = suite.controller.requests.tally();

    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await kube.put({ ...copy, data: { a: 'edited' } });
    await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.data?.a === '1', 10_000);

    const tally = suite.controller.requests.tally();
    // Distributions, namespaces and ConfigMaps watches restarted about once a second; others
    // come and go with the distributions other files create in the same cluster.
    expect((tally.byRequest['watch configmaps'] ?? 0) - (before.byRequest['watch configmaps'] ?? 0)).toBeGreaterThanOrEqual(3);
    expect((tally.byRequest['watch resourcedistributions'] ?? 0) - (before.byRequest['watch resourcedistributions'] ?? 0)).toBeGreaterThanOrEqual(3);
    for (const resource of ['configmaps', 'resourcedistributions', 'namespaces']) {
      expect((tally.byRequest[`list ${resource}`] ?? 0) - (before.byRequest[`list ${resource}`] ?? 0)).toBe(0);
    }
  });
});
