import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileGlob, compileGlobSet, globMatcher, globMatches, globSteps } from './glob.js';

/** The reference: whether glob[i..] matches value[j..], by dynamic programming over both (no backtracking to trust). */
function referenceMatch(glob: string, value: string): boolean {
  let row: boolean[] = Array.from({ length: value.length + 1 }, (_, j) => j === value.length);
  for (let i = glob.length - 1; i >= 0; i--) {
    const next: boolean[] = new Array<boolean>(value.length + 1).fill(false);
    for (let j = value.length; j >= 0; j--) {
      if (glob[i] === '*') next[j] = (row[j] ?? false) || (j < value.length && (next[j + 1] ?? false));
      else next[j] = j < value.length && glob[i] === value[j] && (row[j + 1] ?? false);
    }
    row = next;
  }
  return row[0] ?? false;
}

describe('a glob', () => {
  it.each([
    ['team-*', 'team-a', true],
    ['team-*', 'team-', true],
    ['team-*', 'my-team-a', false],
    ['*-prod', 'shop-prod', true],
    ['*-prod', 'shop-prod-2', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['*', '', true],
    ['**', 'x', true],
    ['', '', true],
    ['', 'x', false],
    ['exact', 'exact', true],
    ['exact', 'exactly', false],
    // A prefix and a suffix that would overlap in a short value.
    ['ab*ba', 'aba', false],
    ['ab*ba', 'abba', true],
    ['a*a*a*a*a*a*a*b', 'a'.repeat(63), false],
    ['a*a*a*a*a*a*a*b', `${'a'.repeat(62)}b`, true],
    // Regular-expression characters are themselves.
    ['example.com/*', 'exampleXcom/owner', false],
    ['a.b', 'a.b', true],
  ])('%s ~ %s: %s', (glob, value, expected) => {
    expect(globMatches(compileGlob(glob), value)).toBe(expected);
    expect(globMatcher(glob)(value)).toBe(expected);
  });

  it('agrees with the reference on any glob and value over a small alphabet', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '-'), maxLength: 12 });
    const glob = fc.string({ unit: fc.constantFrom('a', 'b', '-', '*'), maxLength: 10 });
    fc.assert(fc.property(glob, text, (g, v) => globMatches(compileGlob(g), v) === referenceMatch(g, v)), { numRuns: 5000 });
  });

  it.each([
    ['no star: one comparison of the whole', 'team-a', 63, 1],
    ['two parts', 'team-*', 63, 126],
    ['eight parts', 'a*a*a*a*a*a*a*b', 63, 504],
  ])('costs at most value × parts: %s', (_, glob, length, steps) => {
    expect(globSteps(compileGlob(glob), length)).toBe(steps);
  });
});

describe('a set of globs', () => {
  it.each([
    ['an exact name', ['team-a', 'team-b'], 'team-b', true],
    ['a name not listed', ['team-a', 'team-b'], 'team-c', false],
    ['by prefix', ['team-*', 'shop-*'], 'shop-1', true],
    ['by suffix', ['*-prod', '*-dev'], 'shop-dev', true],
    ['stars at both ends', ['*mid*'], 'a-mid-b', true],
    ['a prefix that is the whole value', ['team*'], 'team', true],
    ['a prefix longer than the value', ['team-long-*'], 'team', false],
    ['all stars', ['**'], 'anything', true],
    ['empty', [], 'anything', false],
    ['a prefix that matches but a later part does not', ['team-*-prod'], 'team-a-dev', false],
    ['two globs with one prefix', ['team-*-prod', 'team-*-dev'], 'team-a-dev', true],
  ])('%s', (_, globs, value, expected) => {
    expect(compileGlobSet(globs).has(value)).toBe(expected);
  });

  it('answers as trying each glob would, for any globs and value', () => {
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '-'), maxLength: 10 });
    const glob = fc.string({ unit: fc.constantFrom('a', 'b', '-', '*'), maxLength: 6 });
    fc.assert(
      fc.property(fc.array(glob, { maxLength: 8 }), text, (globs, v) => compileGlobSet(globs).has(v) === globs.some((g) => referenceMatch(g, v))),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['names only: one lookup', ['a', 'b', 'c'], 1],
    ['one prefix: a lookup and its parts', ['team-*'], 1 + 1 + 63 * 2],
    // Globs with prefixes of their own: only one of them can be tried for a value.
    ['many prefixes of one length', ['ns-1-*', 'ns-2-*', 'ns-3-*'], 1 + 1 + 63 * 2],
    ['many prefixes of many lengths', ['a-*', 'bb-*', 'ccc-*', 'dddd-*'], 1 + 4 + 63 * 2],
    ['a prefix that starts another: both can be tried', ['team-*', 'team-a-*', 'shop-*'], 1 + 2 + 63 * 4],
    ['globs sharing a prefix are all tried', ['team-*-a', 'team-*-b'], 1 + 1 + 63 * 4],
    ['a suffix that ends another', ['*-prod', '*-eu-prod'], 1 + 2 + 63 * 4],
    ['stars at both ends are always tried', ['*a*', '*b*'], 1 + 63 * 6],
  ])('bounds what one value can cost: %s', (_, globs, steps) => {
    expect(compileGlobSet(globs).worstSteps(63)).toBe(steps);
  });
});
