import { describe, expect, it } from 'vitest';
import { copyOf, distribution, foreign, T0 } from '../../test/unit/builders.js';
import { ANNOTATION_AUTHOR, authorValue } from './author.js';
import { authorVerbs, clusterWideFirst, targetDenial } from './author-targets.js';
import { planNamespace } from './plan.js';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, type Resource, type ResolvedDistribution } from './types.js';

const ALICE = authorValue({ username: 'alice', groups: ['team-a'] });

function authored(rd: ResolvedDistribution, author: string | undefined = ALICE): ResolvedDistribution {
  if (author !== undefined) rd.metadata.annotations = { [ANNOTATION_AUTHOR]: author };
  return rd;
}

const byList = (): ResolvedDistribution => authored(distribution('settings').included('team-b').build());
const overwriting = (): ResolvedDistribution => authored(distribution('settings').included('team-b').writePolicy('overwrite').build());

describe('authorVerbs: what the recorded author must still be allowed before a write into a target', () => {
  it.each<[string, () => ResolvedDistribution, (rd: ResolvedDistribution) => Resource | undefined, readonly string[]]>([
    ['a first copy in a namespace without one', byList, () => undefined, ['create']],
    ['our copy, stale (an update)', byList, (rd) => copyOf(rd, 'team-b').data({ key: 'old' }).build(), []],
    ['our copy, in sync', byList, (rd) => copyOf(rd, 'team-b').build(), []],
    ['an object annotated for adoption (taken over in place)', byList, () => foreign('ConfigMap', 'settings', 'team-b').annotation(ANNOTATION_ADOPT, 'settings').build(), ['update']],
    ['a foreign object under writePolicy overwrite', overwriting, () => foreign('ConfigMap', 'settings', 'team-b').build(), ['update']],
    ['a foreign immutable object under writePolicy overwrite (replaced)', overwriting, () => foreign('ConfigMap', 'settings', 'team-b').immutable().build(), ['delete', 'create']],
    ['a foreign object left alone (a conflict)', byList, () => foreign('ConfigMap', 'settings', 'team-b').build(), []],
    ['another distribution’s copy (a conflict)', byList, (rd) => copyOf(rd, 'team-b').annotation(ANNOTATION_FROM, 'other').build(), []],
    ['a first copy of a distribution without a recorded author', () => distribution('settings').included('team-b').build(), () => undefined, []],
  ])('%s', (_name, make, standing, verbs) => {
    const rd = make();
    const existing = standing(rd);
    expect(authorVerbs(rd, planNamespace(rd, 'team-b', existing, T0), existing)).toEqual(verbs);
  });

  it.each([
    ['a delete', { type: 'delete' as const, namespace: 'team-b', name: 'settings', uid: 'u' }],
    ['a missing namespace', { type: 'namespace-missing' as const, namespace: 'team-b' }],
  ])('asks nothing for %s', (_name, action) => {
    expect(authorVerbs(byList(), action, undefined)).toEqual([]);
  });
});

describe('clusterWideFirst: one cluster-wide question before per-namespace ones', () => {
  it.each<[string, () => ResolvedDistribution, number, boolean]>([
    ['a selector, one namespace (admission asked cluster-wide)', () => distribution('d').matchLabels({ team: 'a' }).build(), 1, true],
    ['a name pattern, one namespace', () => distribution('d').patterns(['team-*']).build(), 1, true],
    ['allNamespaces, one namespace', () => distribution('d').allNamespaces().build(), 1, true],
    ['listed names, one namespace', () => distribution('d').included('a', 'b').build(), 1, false],
    ['listed names, two namespaces', () => distribution('d').included('a', 'b').build(), 2, false],
    ['listed names, three namespaces (one question may answer for all)', () => distribution('d').included('a', 'b', 'c').build(), 3, true],
  ])('%s', (_name, make, namespaces, expected) => {
    expect(clusterWideFirst(make(), namespaces)).toBe(expected);
  });
});

describe('targetDenial', () => {
  it.each([
    [{ username: 'alice', groups: [] }, ['create'], 'secrets', 'author "alice" may not create secrets'],
    [{ username: 'system:serviceaccount:ci:deployer', groups: [] }, ['delete', 'create'], 'configmaps', 'author "system:serviceaccount:ci:deployer" may not delete, create configmaps'],
    ['unreadable' as const, ['create'], 'secrets', `the recorded author (${ANNOTATION_AUTHOR}) is unreadable: nothing is written on its behalf`],
  ])('%j %j %s', (author, verbs, resource, words) => {
    expect(targetDenial(author, verbs, resource)).toBe(words);
  });
});
