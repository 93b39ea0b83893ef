// A full pass's plan made a slice at a time must be the plan made at once: same actions, whatever
// the slice size; and its slices come in the size asked for.
import { describe, expect, it } from 'vitest';
import { planDistribution } from '../../../src/domain/plan.js';
import type { Action, NamespaceInfo, ResolvedDistribution, Resource } from '../../../src/domain/types.js';
import { planSlices } from '../../../src/reconcile/plan-in-turns.js';
import { copyOf, distribution, foreign, namespace, T0, terminating } from '../builders.js';

const byNamespace = (actions: readonly Action[]): Action[] => [...actions].sort((a, b) => `${a.namespace}/${a.type}`.localeCompare(`${b.namespace}/${b.type}`));

const all = distribution('shared').configMap('settings', { a: '1' }).allNamespaces().build();
const listed = distribution('shared').configMap('settings', { a: '1' }).included('ns-1', 'ns-3', 'gone-a', 'gone-b').build();
const selected = distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build();
const strict = distribution('shared').configMap('settings', { a: '1' }).allNamespaces().writePolicy('strict').build();

const namespaces: NamespaceInfo[] = [
  namespace('ns-1', { team: 'a' }),
  namespace('ns-2', { team: 'a' }),
  namespace('ns-3'),
  namespace('ns-4', { team: 'a' }),
  terminating('ns-5', { team: 'a' }),
  namespace('ns-6'),
];

/** In sync, drifted, someone else's, ours where no longer targeted, nothing at all. */
function existingFor(rd: ResolvedDistribution): Map<string, Resource> {
  return new Map<string, Resource>([
    ['ns-1', copyOf(rd, 'ns-1').build()],
    ['ns-2', copyOf(rd, 'ns-2').data({ a: 'drifted' }).build()],
    ['ns-4', foreign('ConfigMap', 'settings', 'ns-4').build()],
    ['ns-6', copyOf(rd, 'ns-6').build()],
  ]);
}

async function slicesOf(input: Parameters<typeof planSlices>[0], sliceSize: number): Promise<Action[][]> {
  const slices: Action[][] = [];
  for await (const slice of planSlices(input, sliceSize)) slices.push(slice);
  return slices;
}

const inputFor = (rd: ResolvedDistribution) => ({ distribution: rd, namespaces, existing: existingFor(rd), forbidden: [], now: T0 });

describe('planSlices', () => {
  it.each<[string, ResolvedDistribution, number]>([
    ['every namespace, slices of one', all, 1],
    ['every namespace, slices of two', all, 2],
    ['every namespace, slices of four', all, 4],
    ['listed names, two missing, slices of two', listed, 2],
    ['listed names, slices of three', listed, 3],
    ['a selector, with our copy where it no longer selects, slices of one', selected, 1],
    ['a selector, slices larger than the namespaces', selected, 100],
    ['writePolicy strict (planned at once: a conflict holds back every write)', strict, 1],
  ])('%s: the plan made at once', async (_, rd, sliceSize) => {
    const input = inputFor(rd);
    const inSlices = (await slicesOf(input, sliceSize)).flat();
    expect(byNamespace(inSlices)).toEqual(byNamespace(planDistribution(input)));
  });

  const live = ['ns-a', 'ns-b', 'ns-c', 'ns-d', 'ns-e', 'ns-f'].map((name) => namespace(name));
  const listedLive = distribution('shared').configMap('settings', { a: '1' }).included('ns-a', 'ns-c', 'gone-x').build();
  const createsIn = (rd: ResolvedDistribution, infos: NamespaceInfo[]) => ({ distribution: rd, namespaces: infos, existing: new Map<string, Resource>(), forbidden: [], now: T0 });

  it.each<[string, ReturnType<typeof createsIn>, number, string[][]]>([
    ['slices of two', createsIn(all, live), 2, [['ns-a', 'ns-b'], ['ns-c', 'ns-d'], ['ns-e', 'ns-f']]],
    ['slices of four: the last one shorter', createsIn(all, live), 4, [['ns-a', 'ns-b', 'ns-c', 'ns-d'], ['ns-e', 'ns-f']]],
    ['listed names, one missing: it comes after those that exist', createsIn(listedLive, live.slice(0, 3)), 2, [['ns-a'], ['gone-x', 'ns-c']]],
    ['no more namespaces than a slice: one slice', createsIn(all, live), 6, [['ns-a', 'ns-b', 'ns-c', 'ns-d', 'ns-e', 'ns-f']]],
    ['writePolicy strict: one slice', createsIn(strict, live), 1, [['ns-a', 'ns-b', 'ns-c', 'ns-d', 'ns-e', 'ns-f']]],
  ])('%s', async (_, input, sliceSize, expected) => {
    const slices = await slicesOf(input, sliceSize);
    expect(slices.map((slice) => [...new Set(slice.map((action) => action.namespace))])).toEqual(expected);
  });
});
