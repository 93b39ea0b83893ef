import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonEqual, jsonEqualSteps } from './json-equal.js';

describe('jsonEqual', () => {
  it.each([
    { name: 'the same scalars', a: 'x', b: 'x', equal: true },
    { name: 'a number and its string', a: 1, b: '1', equal: false },
    { name: 'null and an empty object', a: null, b: {}, equal: false },
    { name: 'an empty array and an empty object', a: [], b: {}, equal: false },
    { name: 'keys in another order', a: { a: 1, b: [1, { c: 2 }] }, b: { b: [1, { c: 2 }], a: 1 }, equal: true },
    { name: 'one key more', a: { a: 1 }, b: { a: 1, b: null }, equal: false },
    { name: 'arrays in another order', a: [1, 2], b: [2, 1], equal: false },
    { name: 'a deeper difference', a: { spec: { targets: { list: [{ name: 'a' }] } } }, b: { spec: { targets: { list: [{ name: 'b' }] } } }, equal: false },
    { name: 'a spec of 10,000 names', a: { list: Array.from({ length: 10_000 }, (_, i) => ({ name: `team-${i}` })) }, b: { list: Array.from({ length: 10_000 }, (_, i) => ({ name: `team-${i}` })) }, equal: true },
  ])('$name: $equal', ({ a, b, equal }) => {
    expect(jsonEqual(a, b)).toBe(equal);
  });

  it('agrees with isDeepStrictEqual on JSON values as a review decodes them', () => {
    // Through JSON text, as they arrive: no -0, no undefined.
    const decoded = fc.jsonValue().map((value) => JSON.parse(JSON.stringify(value)) as unknown);
    fc.assert(fc.property(decoded, decoded, (a, b) => jsonEqual(a, b) === isDeepStrictEqual(a, b) && jsonEqual(a, structuredClone(a))));
  });

  it('pauses between the steps of a large comparison, never within a small one', () => {
    const steps = (a: unknown): number => {
      let paused = 0;
      const comparison = jsonEqualSteps(a, structuredClone(a));
      while (comparison.next().done !== true) paused++;
      return paused;
    };
    expect(steps({ a: [1, 2, 3] })).toBe(0);
    expect(steps({ list: Array.from({ length: 10_000 }, (_, i) => ({ name: `team-${i}` })) })).toBeGreaterThan(2);
  });
});
