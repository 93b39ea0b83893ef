import { describe, expect, it } from 'vitest';
import { copyOf, distribution, T0 } from '../../test/unit/builders.js';
import { hashResource } from './hash.js';
import { isInSync } from './ownership.js';
import { desiredView } from './render.js';

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
