// The catalog's lookups for pod admission: the distributions a pod names and those that inject are
// found through indexes, so that a pod costs the same beside 10 or 10,000 other distributions.
import { afterEach, describe, expect, it } from 'vitest';
import { podReferences } from '../../../src/domain/pod-references.js';
import { isTargeted } from '../../../src/domain/targets.js';
import type { NamespaceInfo } from '../../../src/domain/types.js';
import type { ObjectSync } from '../../../src/domain/object-sync.js';
import { distribution } from '../builders.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

const refs = podReferences({ spec: { imagePullSecrets: [{ name: 'pull' }], volumes: [{ name: 'v', configMap: { name: 'settings' } }] } });
const names = (list: { metadata: { name: string } }[]): string[] => list.map((rd) => rd.metadata.name).sort();

const objectSync: ObjectSync = {
  apiVersion: 'sync.rustrial.org/v1alpha1',
  kind: 'ObjectSync',
  metadata: { name: 'shared', namespace: 'platform' },
  spec: { source: { group: '', kind: 'ConfigMap', name: 'settings' }, destinations: [{ namespace: 'ns-a' }] },
};

async function setup(): Promise<void> {
  h = await startHarness();
  h.cluster.putNamespace('ns-a');
  h.cluster.putDistribution(distribution('pull').secret('pull', { token: 'dA==' }).allNamespaces().build());
  h.cluster.putDistribution(distribution('settings').configMap('settings', { a: '1' }).allNamespaces().build());
  // Same name, other kind: a pod naming the ConfigMap `pull` does not use it.
  h.cluster.putDistribution(distribution('pull-as-configmap').configMap('pull', { a: '1' }).allNamespaces().build());
  const registry = distribution('registry').secret('registry', { '.dockerconfigjson': 'e30=' }, 'kubernetes.io/dockerconfigjson').allNamespaces().build();
  h.cluster.putDistribution({ ...registry, spec: { ...registry.spec, imagePullSecretInjection: 'MatchingImages' } });
  for (let i = 0; i < 50; i++) h.cluster.putDistribution(distribution(`other-${i}`).configMap(`other-${i}`).allNamespaces().build());
  h.cluster.putObjectSync(objectSync);
  await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('distribution catalog lookups for pods', () => {
  it('finds the distributions a pod names, ObjectSync ones included, as list() would', async () => {
    await setup();
    const scanned = h.catalog.list().filter((rd) => ['Secret/pull', 'ConfigMap/settings'].includes(`${rd.spec.resource?.kind ?? rd.spec.source?.kind}/${rd.spec.rename ?? rd.spec.source?.name ?? rd.spec.resource?.metadata.name}`));
    expect(names(h.catalog.referencing(refs))).toEqual(names(scanned));
    expect(names(h.catalog.referencing(refs))).toHaveLength(3);
  });

  it('follows changes: a distribution that stops copying a name is no longer found by it', async () => {
    await setup();
    h.cluster.putDistribution(distribution('pull').secret('renamed', { token: 'dA==' }).allNamespaces().build());
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(names(h.catalog.referencing(refs)).filter((name) => name === 'pull')).toEqual([]);
    h.cluster.deleteDistribution('settings');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(names(h.catalog.referencing(refs)).filter((name) => name === 'settings')).toEqual([]);
  });

  it('finds the distributions that inject image-pull Secrets, and only those', async () => {
    await setup();
    expect(names(h.catalog.injecting())).toEqual(['registry']);
    h.cluster.deleteDistribution('registry');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(h.catalog.injecting()).toEqual([]);
  });

  it.each([
    ['a namespace of team a: every-namespace, its team, its name', { name: 'ns-x', labels: { team: 'a' }, terminating: false }, ['by-name', 'every', 'team-a']],
    ['a namespace of team b: every-namespace only', { name: 'ns-y', labels: { team: 'b' }, terminating: false }, ['every']],
  ])('finds the injecting distributions whose targets can include %s', async (_, ns, expected) => {
    h = await startHarness();
    const registry = (name: string) => distribution(name).secret(name, { '.dockerconfigjson': 'e30=' }, 'kubernetes.io/dockerconfigjson');
    const injecting = (builder: ReturnType<typeof registry>) => {
      const rd = builder.build();
      return { ...rd, spec: { ...rd.spec, imagePullSecretInjection: 'Always' as const } };
    };
    h.cluster.putDistribution(injecting(registry('every').allNamespaces()));
    h.cluster.putDistribution(injecting(registry('team-a').matchLabels({ team: 'a' })));
    h.cluster.putDistribution(injecting(registry('by-name').included('ns-x')));
    h.cluster.putDistribution(registry('not-injecting').allNamespaces().build());
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(names(h.catalog.injectingInto(ns))).toEqual(expected);
  });

  it('finds every distribution that targets a namespace among those that may (and no others than may)', async () => {
    h = await startHarness();
    const rules = [
      distribution('every').configMap('every').allNamespaces(),
      distribution('team-a').configMap('team-a').matchLabels({ team: 'a' }),
      distribution('prod-or-dev').configMap('prod-or-dev').expression('env', 'In', ['prod', 'dev']),
      distribution('not-prod').configMap('not-prod').expression('env', 'NotIn', ['prod']),
      distribution('listed').configMap('listed').included('ns-1', 'ns-3'),
      distribution('pattern').configMap('pattern').patterns(['ns-*']),
      distribution('team-a-but-ns-2').configMap('x').matchLabels({ team: 'a' }).excluded('ns-2'),
    ];
    for (const rule of rules) h.cluster.putDistribution(rule.build());
    await new Promise((resolve) => setTimeout(resolve, 10));
    const namespaces: NamespaceInfo[] = [
      { name: 'ns-1', labels: { team: 'a', env: 'prod' }, terminating: false },
      { name: 'ns-2', labels: { team: 'a', env: 'dev' }, terminating: false },
      { name: 'ns-3', labels: { team: 'b' }, terminating: false },
      { name: 'other', labels: {}, terminating: false },
    ];
    for (const ns of namespaces) {
      const found = names(h.catalog.targeting(ns));
      const targeting = h.catalog.list().filter((rd) => isTargeted(rd.spec.targets, ns)).map((rd) => rd.metadata.name);
      expect(found).toEqual(expect.arrayContaining(targeting));
      // Open-ended rules come along wherever they may apply; others only where they can.
      expect(found.includes('listed')).toBe(ns.name === 'ns-1' || ns.name === 'ns-3');
      expect(found.includes('team-a')).toBe(ns.labels.team === 'a');
    }
  });
});
