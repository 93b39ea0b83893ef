import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pathMatch } from './path-match.js';

/** Whether one token of a well-formed pattern (a character, '?' or a simple class) takes `c`. */
function takes(token: string, c: string): boolean {
  if (token === '?') return c !== '/';
  if (token.startsWith('[')) return token.slice(1, -1).includes(c);
  return token === c;
}

/** The reference for well-formed patterns of letters, '?', '*' and simple classes: dynamic programming over tokens. */
function referenceMatch(pattern: string, name: string): boolean {
  const tokens = pattern.match(/\[[^\]]+\]|./g) ?? [];
  const text = [...name];
  let row = text.map(() => false).concat(true);
  for (let i = tokens.length - 1; i >= 0; i--) {
    const token = tokens[i] as string;
    const next = new Array<boolean>(text.length + 1).fill(false);
    for (let j = text.length; j >= 0; j--) {
      const c = text[j];
      if (token === '*') next[j] = row[j] === true || (c !== undefined && c !== '/' && next[j + 1] === true);
      else next[j] = c !== undefined && takes(token, c) && row[j + 1] === true;
    }
    row = next;
  }
  return row[0] === true;
}

describe("Go's filepath.Match", () => {
  // Go's own table (path/filepath match_test.go); a bad pattern is no match.
  it.each([
    ['abc', 'abc', true],
    ['*', 'abc', true],
    ['*c', 'abc', true],
    ['a*', 'a', true],
    ['a*', 'abc', true],
    ['a*', 'ab/c', false],
    ['a*/b', 'abc/b', true],
    ['a*/b', 'a/c/b', false],
    ['a*b*c*d*e*/f', 'axbxcxdxe/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', false],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/fff', false],
    ['a*b?c*x', 'abxbbxdbxebxczzx', true],
    ['a*b?c*x', 'abxbbxdbxebxczzy', false],
    ['ab[c]', 'abc', true],
    ['ab[b-d]', 'abc', true],
    ['ab[e-g]', 'abc', false],
    ['ab[^c]', 'abc', false],
    ['ab[^b-d]', 'abc', false],
    ['ab[^e-g]', 'abc', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'ab', false],
    ['a?b', 'a☺b', true],
    ['a[^a]b', 'a☺b', true],
    ['a???b', 'a☺b', false],
    ['a[^a][^a][^a]b', 'a☺b', false],
    ['[a-ζ]*', 'α', true],
    ['*[a-ζ]', 'A', false],
    ['a?b', 'a/b', false],
    ['a*b', 'a/b', false],
    ['[\\]a]', ']', true],
    ['[\\-]', '-', true],
    ['[x\\-]', 'x', true],
    ['[x\\-]', '-', true],
    ['[x\\-]', 'z', false],
    ['[\\-x]', 'x', true],
    ['[\\-x]', '-', true],
    ['[\\-x]', 'a', false],
    ['[]a]', ']', false],
    ['[-]', '-', false],
    ['[x-]', 'x', false],
    ['[x-]', '-', false],
    ['[-x]', 'x', false],
    ['\\', 'a', false],
    ['[a-b-c]', 'a', false],
    ['[', 'a', false],
    ['[^', 'a', false],
    ['[^bc', 'a', false],
    ['a[', 'a', false],
    ['a[', 'ab', false],
    ['a[', 'x', false],
    ['a/b[', 'x', false],
    ['*x', 'xxx', true],
    // A bad pattern after a mismatch is still bad (Go checks the rest before answering).
    ['x*[', 'ab', false],
  ])('%s ~ %s: %s', (pattern, name, expected) => {
    expect(pathMatch(pattern, name)).toBe(expected);
  });

  it('agrees with the reference on well-formed patterns', () => {
    const token = fc.constantFrom('a', 'b', '.', '?', '*', '[ab]', '[b]');
    const pattern = fc.array(token, { maxLength: 8 }).map((tokens) => tokens.join(''));
    const name = fc.string({ unit: fc.constantFrom('a', 'b', '.', '/'), maxLength: 10 });
    fc.assert(fc.property(pattern, name, (p, n) => pathMatch(p, n) === referenceMatch(p, n)), { numRuns: 5000 });
  });
});
