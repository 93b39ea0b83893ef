import { describe, expect, it } from 'vitest';
import type { Finding } from './findings.js';
import { allNamespaces, boundedRegex, emptySet, globOfRegex, intersection, type NamespaceSet, setOfRegexList, someRegexMatches, targetsOf, union } from './namespace-set.js';

const set = (names: string[], patterns: string[] = []): NamespaceSet => ({ ...emptySet(), names, patterns });

describe('a namespace regular expression as a name pattern', () => {
  it.each([
    ['my-ns-1', { name: 'my-ns-1' }],
    ['  namespace-1 ', { name: 'namespace-1' }],
    ['^team-a$', { name: 'team-a' }],
    ['team-.*', { pattern: 'team-*' }],
    ['.*-prod', { pattern: '*-prod' }],
    ['team-.*-prod', { pattern: 'team-*-prod' }],
    ['.*', { pattern: '*' }],
  ])('%j converts to %j', (regex, glob) => {
    expect(globOfRegex(regex)).toEqual(glob);
  });

  // From the tools' READMEs (`namespace-[0-9]*`, `app-ns-[0-9]*`) and the shapes users write.
  it.each(['namespace-[0-9]*', 'app-ns-[0-9]*', 'team-*', 'team-.+', 'team-.', 'a|b', 'ns\\d', 'team-(a|b)', 'Team-A', ''])('%j does not convert', (regex) => {
    expect(globOfRegex(regex)).toBeUndefined();
  });

  it('reads a list, reporting each entry left out by name', () => {
    const findings: Finding[] = [];
    expect(setOfRegexList('namespace-1,my-ns-2,app-ns-[0-9]*,, team-.*', 'Secret a/b', 'replicate-to', findings)).toEqual(set(['namespace-1', 'my-ns-2'], ['team-*']));
    expect(findings).toEqual([{ level: 'unconverted', subject: 'Secret a/b', message: expect.stringContaining('replicate-to entry "app-ns-[0-9]*"') }]);
    expect(setOfRegexList('.*', 's', 'a', findings).all).toBe(true);
  });
});

describe('sets of namespaces', () => {
  it.each<[string, NamespaceSet, NamespaceSet, NamespaceSet | undefined]>([
    ['every namespace and names', allNamespaces(), set(['a']), set(['a'])],
    ['names and names', set(['a', 'b']), set(['b', 'c']), set(['b'])],
    ['names and a pattern', set(['team-a', 'ops']), set([], ['team-*']), set(['team-a'])],
    ['the same pattern', set(['x'], ['team-*']), set([], ['team-*']), set([], ['team-*'])],
    ['two different patterns', set([], ['team-*']), set([], ['*-prod']), undefined],
    ['a selector and names', { ...emptySet(), selector: { matchLabels: { a: 'b' } } }, set(['a']), undefined],
  ])('intersect: %s', (_, a, b, expected) => {
    expect(intersection(a, b)).toEqual(expected);
  });

  it('unites names and one selector, not two selectors', () => {
    const selected = { ...emptySet(), selector: { matchLabels: { a: 'b' } } };
    expect(union(set(['x']), selected)).toEqual({ ...set(['x']), selector: { matchLabels: { a: 'b' } } });
    expect(union(selected, { ...emptySet(), selector: { matchLabels: { a: 'c' } } })).toBeUndefined();
  });

  it.each<[string, NamespaceSet, object]>([
    ['every namespace', allNamespaces(), { allNamespaces: true }],
    ['names and patterns', set(['a'], ['t-*']), { includedNamespaces: { list: [{ name: 'a' }, { pattern: 't-*' }] } }],
    ['a selector with exclusions', { ...emptySet(), selector: { matchLabels: { a: 'b' } }, excludedNames: ['x'], excludedPatterns: ['y-*'] }, { namespaceLabelSelector: { matchLabels: { a: 'b' } }, excludedNamespaces: { list: [{ name: 'x' }, { pattern: 'y-*' }] } }],
  ])('targets: %s', (_, namespaces, targets) => {
    expect(targetsOf(namespaces)).toEqual(targets);
  });
});

describe('regular expressions of the input, run only at a bounded cost', () => {
  it.each([
    ['namespace-[0-9]*', true],
    ['team-[a-z]+-prod', true],
    ['a*a*a*a*a*a*a*b', false],
    ['(a+)+b', false],
    ['team|ops', false],
    ['(.)\\1', false],
    ['a\\*b\\*c*', true],
  ])('%s: %s', (entry, bounded) => {
    expect(boundedRegex(entry)).toBe(bounded);
  });

  it.each([
    ['namespace-[0-9]*', 'namespace-7', true],
    ['team-.*', 'team-a', true],
    ['team-.*', 'my-team-a', false],
    ['a*a*a*a*a*a*a*b', 'a'.repeat(63), false],
    ['(a+)+b', 'a'.repeat(63), false],
  ])('%s against %s: %s (the unbounded ones are never run: run, they would take minutes)', (entry, namespace, matches) => {
    expect(someRegexMatches(entry, namespace, (regex, name) => new RegExp(`^${regex}$`).test(name))).toBe(matches);
  });
});
