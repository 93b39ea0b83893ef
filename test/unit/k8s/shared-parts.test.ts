import { describe, expect, it } from 'vitest';
import { CopyCache } from '../../../src/k8s/caches.js';
import { createPartSharer } from '../../../src/k8s/shared-parts.js';
import type { Reflector } from '../../../src/k8s/reflector.js';
import type { Resource } from '../../../src/domain/types.js';

/** A copy as the API returns it: every part a fresh instance (JSON.parse). */
function parsedCopy(namespace: string, data: Record<string, string> = { a: '1' }, hash = 'h1'): Resource {
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'settings',
        namespace,
        uid: `uid-${namespace}`,
        resourceVersion: '1',
        labels: { 'resource-distributor.io/distribution': 'shared' },
        annotations: { 'kruise.io/resourcedistribution.resource.hashcode': hash },
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ResourceDistribution', name: 'shared', uid: 'rd', controller: true }],
      },
      data,
    }),
  ) as Resource;
}

describe('createPartSharer', () => {
  it.each([
    ['labels', (r: Resource) => r.metadata.labels],
    ['annotations', (r: Resource) => r.metadata.annotations],
    ['ownerReferences', (r: Resource) => r.metadata.ownerReferences],
    ['data', (r: Resource) => r.data],
  ])('gives two copies with equal %s one shared instance', (_part, partOf) => {
    const share = createPartSharer();
    const a = share(parsedCopy('ns-a'));
    const b = share(parsedCopy('ns-b'));
    expect(partOf(b)).toBe(partOf(a));
    expect(b.metadata.namespace).toBe('ns-b');
  });

  it('keeps parts that differ apart, and the object otherwise equal to what was given', () => {
    const share = createPartSharer();
    const given = parsedCopy('ns-b', { a: '2' }, 'h2');
    const a = share(parsedCopy('ns-a'));
    const b = share(given);
    expect(b.data).not.toBe(a.data);
    expect(b.metadata.annotations).not.toBe(a.metadata.annotations);
    expect(b.metadata.labels).toBe(a.metadata.labels);
    expect(b).toEqual(parsedCopy('ns-b', { a: '2' }, 'h2'));
  });

  it('freezes what it shares, so that changing one copy cannot change another', () => {
    const share = createPartSharer();
    const a = share(parsedCopy('ns-a'));
    share(parsedCopy('ns-b'));
    expect(() => {
      (a.data as Record<string, string>).a = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      (a.metadata.ownerReferences as { uid: string }[])[0]!.uid = 'other';
    }).toThrow(TypeError);
  });

  it('gives a copy whose parts it shared back with those same parts', () => {
    const share = createPartSharer();
    const once = share(parsedCopy('ns-a'));
    const twice = share(once);
    expect(twice).not.toBe(once);
    expect(twice).toEqual(once);
    for (const part of ['labels', 'annotations', 'ownerReferences'] as const) expect(twice.metadata[part]).toBe(once.metadata[part]);
    expect(twice.data).toBe(once.data);
  });

  it('is what the copy cache hands its list, so that a list page kept as it arrives is kept as the store keeps it', () => {
    let listShare: ((copy: Resource) => Resource) | undefined;
    const cache = new CopyCache((_key, _store, share) => {
      listShare = share;
      return { stop: () => undefined, synced: true } as unknown as Reflector<Resource>;
    });
    cache.follow(new Set(['ConfigMap']));
    const store = cache.store('ConfigMap')!;
    store.applyEvent('ADDED', parsedCopy('ns-a'));
    store.replace([parsedCopy('ns-a'), listShare!(parsedCopy('ns-b'))]);
    const a = cache.get({ kind: 'ConfigMap', namespace: 'ns-a', name: 'settings' });
    const b = cache.get({ kind: 'ConfigMap', namespace: 'ns-b', name: 'settings' });
    expect(b?.data).toBe(a?.data);
    expect(b?.metadata.annotations).toBe(a?.metadata.annotations);
  });

  it('is what the copy cache keeps, from watch events and from our own writes alike', () => {
    const cache = new CopyCache(() => ({ stop: () => undefined, synced: true }) as unknown as Reflector<Resource>);
    cache.follow(new Set(['ConfigMap']));
    const store = cache.store('ConfigMap')!;
    store.applyEvent('ADDED', parsedCopy('ns-a'));
    store.observeWrite(parsedCopy('ns-b'));
    const a = cache.get({ kind: 'ConfigMap', namespace: 'ns-a', name: 'settings' });
    const b = cache.get({ kind: 'ConfigMap', namespace: 'ns-b', name: 'settings' });
    expect(b?.data).toBe(a?.data);
    expect(cache.byDistribution('shared')).toHaveLength(2);
  });
});
