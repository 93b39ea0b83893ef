import { describe, expect, it } from 'vitest';
import { MAX_TEMPLATE_DEPTH, nestingDepth, nestsDeeperThan } from './nesting.js';

/** `{a: {a: ... 'x'}}` with `levels` objects. */
function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe('nestingDepth', () => {
  it.each([
    { name: 'a scalar', value: 'x', depth: 0 },
    { name: 'null', value: null, depth: 0 },
    { name: 'an empty object', value: {}, depth: 1 },
    { name: 'an empty list', value: [], depth: 1 },
    { name: 'a flat ConfigMap', value: { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 'b' } }, depth: 2 },
    { name: 'lists count as levels', value: { a: [[{ b: 1 }]] }, depth: 4 },
    { name: 'the deepest branch counts', value: { shallow: {}, deep: { a: { b: { c: {} } } } }, depth: 5 },
    { name: 'ten objects', value: nested(10), depth: 10 },
  ])('$name: $depth', ({ value, depth }) => {
    expect(nestingDepth(value, 100)).toBe(depth);
  });

  it.each([
    { levels: MAX_TEMPLATE_DEPTH, deeper: false },
    { levels: MAX_TEMPLATE_DEPTH + 1, deeper: true },
    // What overflowed the stack further on (5,000 deep: the reconciler; 9,000: admission), and far more.
    { levels: 5_000, deeper: true },
    { levels: 9_000, deeper: true },
    { levels: 1_000_000, deeper: true },
  ])('$levels levels deeper than the template limit: $deeper, without recursion', ({ levels, deeper }) => {
    expect(nestsDeeperThan(nested(levels), MAX_TEMPLATE_DEPTH)).toBe(deeper);
  });

  it('stops at the limit: it answers limit + 1 however deep the value goes', () => {
    expect(nestingDepth(nested(100_000), 64)).toBe(65);
  });

  it('a Deployment with an anti-affinity term fits well within the limit', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      spec: {
        template: {
          spec: {
            affinity: {
              podAntiAffinity: {
                preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'zone', labelSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] } } }],
              },
            },
          },
        },
      },
    };
    expect(nestingDepth(deployment, MAX_TEMPLATE_DEPTH)).toBe(13);
  });
});
