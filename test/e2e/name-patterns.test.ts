// Targets by name pattern (an addition to the API): every namespace whose whole name matches,
// including one created later; an excluded pattern takes namespaces out again.
import { describe, expect, it } from 'vitest';
import { configMapOf, distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName } from './support/cluster.js';

const { kube } = useReconcileSuite();

describe('name patterns in target lists', () => {
  it('targets the namespaces a pattern matches as a whole, those created later too, minus an excluded pattern', async () => {
    const prefix = uniqueName('pat');
    // Each name gets a random suffix: `<prefix>-a-1f2e3d`.
    const namespace = async (start: string): Promise<string> => (await kube.createNamespace(start)).metadata!.name!;
    const [a, b, prod, other] = [await namespace(`${prefix}-a`), await namespace(`${prefix}-b`), await namespace(`${prefix}-prod`), await namespace(`x-${prefix}`)];
    const name = uniqueName('rd-pattern');
    const rd = distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: [{ pattern: `${prefix}-*` }] }, excludedNamespaces: { list: [{ pattern: `${prefix}-prod-*` }] } });
    await kube.createDistribution(rd);

    for (const ns of [a, b]) await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.data?.a === '1');
    await kube.waitForStatus(name, (s) => s.desired === 2 && s.succeeded === 2);
    expect(await kube.get('ConfigMap', prod, 'settings')).toBeUndefined();
    expect(await kube.get('ConfigMap', other, 'settings')).toBeUndefined();

    const later = await namespace(`${prefix}-later`);
    await kube.waitForObject('ConfigMap', later, 'settings', (o) => o?.data?.a === '1');
    await kube.waitForStatus(name, (s) => s.desired === 3 && s.succeeded === 3);
  });
});
