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
    const lists = suite.controller.requests.tally().byVerb.list ?? 0;
    const watches = suite.controller.requests.tally().byVerb.watch ?? 0;

    await new Promise((resolve) => setTimeout(resolve, 4_000));
    await kube.createDistribution(distributionOf(name, configMap({ a: '1' }), { includedNamespaces: { list: [{ name: ns }] } }));
    const copy = (await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined, 10_000))!;
    await kube.put({ ...copy, data: { a: 'edited' } });
    await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.data?.a === '1', 10_000);

    const tally = suite.controller.requests.tally();
    // Four watches (distributions, namespaces, Secrets, ConfigMaps) restarted about once a second.
    expect((tally.byVerb.watch ?? 0) - watches).toBeGreaterThanOrEqual(8);
    expect((tally.byVerb.list ?? 0) - lists).toBe(0);
  });
});
