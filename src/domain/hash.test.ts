import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seedSample } from '../../test/unit/builders.js';
import { canonicalJson, compareCodePoints, hashResource } from './hash.js';
import type { Resource } from './types.js';

describe('canonicalJson', () => {
  it.each<[string, unknown, string]>([
    ['sorts keys recursively', { b: 1, a: { d: [{ z: 1, y: 2 }], c: null } }, '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}'],
    ['sorts integer-like keys as strings (as Go does)', { b: 1, '10': 2, '2': 3 }, '{"10":2,"2":3,"b":1}'],
    ['sorts by code point, not UTF-16 unit', { '\u{1F600}': 1, '\uFF01': 2 }, '{"\uFF01":2,"\u{1F600}":1}'],
    ['escapes <, > and &', { html: '<a>&</a>' }, '{"html":"\\u003ca\\u003e\\u0026\\u003c/a\\u003e"}'],
    ['escapes U+2028 and U+2029', { s: 'a\u2028b\u2029c' }, '{"s":"a\\u2028b\\u2029c"}'],
    ['escapes in keys too', { 'a<b': 'x' }, '{"a\\u003cb":"x"}'],
    ['writes control characters like Go', { s: '\u0001\b\f\n\r\t"\\' }, '{"s":"\\u0001\\b\\f\\n\\r\\t\\"\\\\"}'],
    ['replaces a lone surrogate with U+FFFD', { s: 'a\uD800b' }, '{"s":"a\uFFFDb"}'],
    ['omits undefined properties', { a: undefined, b: 1 }, '{"b":1}'],
    ['writes numbers like Go', [1, 2.5, -3, 1e21, 0.000001, 1e-7], '[1,2.5,-3,1e+21,0.000001,1e-7]'],
    ['writes scalars', [true, false, null, 'x'], '[true,false,null,"x"]'],
  ])('%s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('does not depend on key order', () => {
    const a = { kind: 'Secret', apiVersion: 'v1', metadata: { name: 's', labels: { x: '1', a: '2' } } };
    const b = { metadata: { labels: { a: '2', x: '1' }, name: 's' }, apiVersion: 'v1', kind: 'Secret' };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
  });

  it('rejects numbers JSON cannot carry', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
  });
});

describe('hashResource', () => {
  it('equals the hash OpenKruise documents for the seed game-demo ConfigMap', () => {
    const template = seedSample().build().spec.resource;
    expect(hashResource(template)).toBe('0821a13321b2c76b5bd63341a0d97fb46bfdbb2f914e2ad6b613d10632fa4b63');
  });

  it('equals sha256 of Go encoding/json output for a template with escapes and odd keys', () => {
    // Expected digest computed with Go: json.Marshal of the same value decoded into interface{}.
    const template = {
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 's', labels: { b: '2', a: '1', '10': 'x', '2': 'y' } },
      data: {
        html: '<a href="x">&amp;</a>',
        sep: 'line\u2028para\u2029end',
        ctl: '\u0001\b\f\t\u007f',
        emoji: '\u{1F600}',
        é: '\uFFFD',
      },
      type: 'Opaque',
      immutable: true,
      n: [1, 2.5, -3, 1e21, 0.000001, 1e-7],
    } as Resource;
    expect(hashResource(template)).toBe('df8b40c0b67fb8cd072e4519749f27a9b6da410e130e0e5b2666579c177a65b8');
  });

  it('is stable across key order and changes with content', () => {
    const one = seedSample().build().spec.resource;
    const reordered = JSON.parse(JSON.stringify({ data: one.data, metadata: one.metadata, kind: one.kind, apiVersion: one.apiVersion })) as Resource;
    expect(hashResource(reordered)).toBe(hashResource(one));
    expect(hashResource({ ...one, data: { ...one.data, player_initial_lives: '4' } })).not.toBe(hashResource(one));
    expect(hashResource(one)).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('compareCodePoints', () => {
  /** The definition: the strings' code points (UTF-8 byte order), compared one by one. */
  const reference = (a: string, b: string): number => {
    const [left, right] = [Array.from(a, (c) => c.codePointAt(0) ?? 0), Array.from(b, (c) => c.codePointAt(0) ?? 0)];
    for (let i = 0; i < Math.min(left.length, right.length); i++) if (left[i] !== right[i]) return (left[i] ?? 0) - (right[i] ?? 0);
    return left.length - right.length;
  };
  const units = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)) });
  const strings = fc.oneof(fc.string({ unit: 'binary' }), units, fc.constantFrom('\u{1F600}', '\uFF01', '\uE000', '\uD7FF', 'a', ''));

  it('orders as the code points do, lone surrogates included', () => {
    fc.assert(fc.property(strings, strings, (a, b) => Math.sign(compareCodePoints(a, b)) === Math.sign(reference(a, b))), { numRuns: 5_000 });
  });
});
