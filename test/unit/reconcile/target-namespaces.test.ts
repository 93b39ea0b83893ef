// The namespaces a pass looks at: for a rule that names or selects, those it can target and those
// holding its copies, from the caches' indexes; every namespace only for open-ended rules.
import { afterEach, describe, expect, it } from 'vitest';
import { targetNamespaces } from '../../../src/reconcile/target-namespaces.js';
import { distribution } from '../builders.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

async function setup(): Promise<void> {
  h = await startHarness();
  for (let i = 0; i < 20; i++) h.cluster.putNamespace(`ns-${i}`, { team: i % 2 === 0 ? 'even' : 'odd' });
  await new Promise((resolve) => setTimeout(resolve, 10));
}

const names = (list: { name: string }[]): string[] => list.map((ns) => ns.name).sort();

describe('targetNamespaces', () => {
  it.each([
    ['names: the existing ones', distribution('a').configMap('a').included('ns-1', 'ns-2', 'missing').build(), ['ns-1', 'ns-2']],
    ['names in order: the existing ones', distribution('a').configMap('a').included('missing', 'ns-1', 'ns-2').build(), ['ns-1', 'ns-2']],
    ['a name listed twice: once', distribution('a').configMap('a').included('ns-2', 'ns-1', 'ns-2').build(), ['ns-1', 'ns-2']],
    ['a selector: the namespaces with its label', distribution('a').configMap('a').matchLabels({ team: 'odd' }).included('ns-2').build(), ['ns-1', 'ns-11', 'ns-13', 'ns-15', 'ns-17', 'ns-19', 'ns-2', 'ns-3', 'ns-5', 'ns-7', 'ns-9']],
    ['allNamespaces: every one', distribution('a').configMap('a').allNamespaces().build(), Array.from({ length: 20 }, (_, i) => `ns-${i}`).sort()],
  ])('%s', async (_, rd, expected) => {
    await setup();
    expect(names(targetNamespaces(rd, h.caches))).toEqual(expected);
  });

  it('names alone: not those it may not write to (excluded, forbidden), which it can neither target nor miss', async () => {
    await setup();
    const rd = distribution('a').configMap('a').included('ns-3', 'ns-1', 'ns-2', 'ns-4').excluded('ns-4').build();
    expect(targetNamespaces(rd, h.caches, ['ns-2']).map((ns) => ns.name)).toEqual(['ns-1', 'ns-3']);
  });

  it('includes the namespaces holding its copies, which it may have to delete', async () => {
    await setup();
    const rd = h.cluster.putDistribution(distribution('a').configMap('a').included('ns-1', 'ns-4').build());
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await h.reconciler.reconcile('a')).toBe('done');
    const narrowed = h.cluster.putDistribution({ ...rd, spec: { ...rd.spec, targets: { includedNamespaces: { list: [{ name: 'ns-1' }] } } } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(names(targetNamespaces(narrowed, h.caches))).toEqual(['ns-1', 'ns-4']);
    expect(await h.reconciler.reconcile('a')).toBe('done');
    expect(h.cluster.object('ConfigMap', 'ns-4', 'a')).toBeUndefined();
  });
});
