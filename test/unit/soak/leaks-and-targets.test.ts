import { describe, expect, it } from 'vitest';
import { checkLeaks } from '../../soak/check-leaks.js';
import { expectedTargets, globMatches } from '../../soak/expected-targets.js';
import { distribution, namespace, OWN } from './soak-builders.js';

describe('checkLeaks', () => {
  const value = 'v-0123456789abcdef';
  it.each([
    { line: '{"msg":"copy written","namespace":"a"}', leaks: 0 },
    { line: `{"msg":"update failed","body":"${value}"}`, leaks: 1 },
    { line: `{"msg":"x","data":{"k":"${Buffer.from(value).toString('base64')}"}}`, leaks: 1 },
    { line: 'v-0123456789abcde', leaks: 0 },
  ])('$line: $leaks', ({ line, leaks }) => {
    expect(checkLeaks([value], [{ where: 'replica a', lines: [line] }])).toHaveLength(leaks);
  });
});

describe('expectedTargets', () => {
  const namespaces = [namespace('team-a', { g: '1' }), namespace('team-b', { g: '2' }), namespace('my-team-a'), namespace('gone', {}, true), namespace('kube-public'), namespace(OWN)];
  it.each([
    { targets: { allNamespaces: true }, all: ['gone', 'my-team-a', 'team-a', 'team-b'], missing: ['gone'] },
    { targets: { includedNamespaces: { list: [{ pattern: 'team-*' }] } }, all: ['team-a', 'team-b'], missing: [] },
    { targets: { includedNamespaces: { list: [{ name: 'later' }, { name: 'kube-public' }] } }, all: ['later'], missing: ['later'] },
    { targets: { namespaceLabelSelector: {} }, all: [], missing: [] },
    { targets: { namespaceLabelSelector: { matchExpressions: [{ key: 'g', operator: 'NotIn' as const, values: ['1'] }] } }, all: ['gone', 'my-team-a', 'team-b'], missing: ['gone'] },
    { targets: { namespaceLabelSelector: { matchExpressions: [{ key: 'g', operator: 'Exists' as const }] } }, all: ['team-a', 'team-b'], missing: [] },
    { targets: { allNamespaces: true, excludedNamespaces: { list: [{ pattern: '*-a' }, { name: 'gone' }] } }, all: ['team-b'], missing: [] },
  ])('$targets', ({ targets, all, missing }) => {
    const found = expectedTargets(distribution('rd', { targets }, { desired: 0, succeeded: 0 }), namespaces, OWN);
    expect([...found.all].sort()).toEqual(all);
    expect([...found.missing].sort()).toEqual(missing);
  });

  it.each([
    ['team-*', 'team-a', true],
    ['team-*', 'my-team-a', false],
    ['*-sandbox', 'x-sandbox', true],
    ['a.b', 'axb', false],
  ])('%s matches %s: %s', (pattern, name, matches) => {
    expect(globMatches(pattern, name)).toBe(matches);
  });
});
