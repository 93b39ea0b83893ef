import { describe, expect, it } from 'vitest';
import { copyOf, distribution, T0, T1 } from '../../test/unit/builders.js';
import { hashResource } from './hash.js';
import { isInSync } from './ownership.js';
import { desiredView, renderCopy } from './render.js';
import { toRfc3339 } from './timestamp.js';
import { ANNOTATION_HASH, ANNOTATION_TIMESTAMP, LABEL_DISTRIBUTION, type ResolvedDistribution } from './types.js';

describe('desiredView: the copy compared against, rendered once per distribution', () => {
  const rd = distribution('settings').configMap('settings', { a: '1' }).allNamespaces().uid('uid-settings').build();
  const hash = hashResource(rd.spec.resource);

  it.each([
    ['the same distribution object and hash: the same view', () => desiredView(rd, hash), true],
    ['another hash: rendered again', () => desiredView(rd, 'other'), false],
    ['another distribution object: rendered again', () => desiredView({ ...rd }, hash), false],
  ])('%s', (_, other, same) => {
    expect(desiredView(rd, hash) === other()).toBe(same);
  });

  it('is frozen, in no namespace', () => {
    const view = desiredView(rd, hash);
    expect(Object.isFrozen(view)).toBe(true);
    expect(view.metadata.namespace).toBe('');
  });

  it.each(['ns-1', 'ns-2', 'team-a'])('a copy in %s is judged by the same view', (ns) => {
    expect(isInSync(rd, copyOf(rd, ns, T0).build(), hash)).toBe(true);
    expect(isInSync(rd, copyOf(rd, ns, T0).data({ a: '2' }).build(), hash)).toBe(false);
  });
});

describe('renderCopy: the metadata of one pass, built once', () => {
  const rd = distribution('settings').configMap('settings', { a: '1' }).templateLabels({ team: 'x' }).templateAnnotations({ note: 'v1' }).allNamespaces().uid('uid-settings').build();
  const hash = hashResource(rd.spec.resource);
  const renamed: ResolvedDistribution = { ...rd, metadata: { ...rd.metadata, name: 'other' } };

  it.each([
    ['the same distribution, hash and time: shared', () => renderCopy(rd, 'ns-2', T0, hash), true, T0, hash],
    ['another time: built again, with that time', () => renderCopy(rd, 'ns-2', T1, hash), false, T1, hash],
    ['another hash: built again, with that hash', () => renderCopy(rd, 'ns-2', T0, 'other-hash'), false, T0, 'other-hash'],
    ['another distribution object: built again', () => renderCopy(renamed, 'ns-2', T0, hash), false, T0, hash],
  ])('%s', (_, render, shared, time, expectedHash) => {
    const first = renderCopy(rd, 'ns-1', T0, hash);
    const second = render();
    // Each copy's metadata object is its own (the writer sets its resourceVersion); its maps may be shared.
    expect(second.metadata).not.toBe(first.metadata);
    expect([first.metadata.namespace, second.metadata.namespace]).toEqual(['ns-1', 'ns-2']);
    expect(second.metadata.labels === first.metadata.labels).toBe(shared);
    expect(second.metadata.annotations === first.metadata.annotations).toBe(shared);
    expect(second.metadata.annotations?.[ANNOTATION_TIMESTAMP]).toBe(toRfc3339(time));
    expect(second.metadata.annotations?.[ANNOTATION_HASH]).toBe(expectedHash);
    expect(first.metadata.annotations?.[ANNOTATION_TIMESTAMP]).toBe(toRfc3339(T0));
  });

  it('a shared map is frozen: changing it in place throws instead of changing every copy', () => {
    const copy = renderCopy(rd, 'ns-1', T0, hash);
    const labels = copy.metadata.labels as Record<string, string>;
    expect(() => (labels.extra = 'y')).toThrow(TypeError);
    expect(() => copy.metadata.ownerReferences?.push(copy.metadata.ownerReferences[0] as never)).toThrow(TypeError);
    expect(renderCopy(rd, 'ns-2', T0, hash).metadata.labels).toEqual({ team: 'x', [LABEL_DISTRIBUTION]: 'settings' });
  });
});
