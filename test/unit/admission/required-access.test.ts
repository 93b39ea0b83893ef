import { describe, expect, it } from 'vitest';
import { requiredAccess, stoppedTargets } from '../../../src/admission/required-access.js';
import { distribution } from '../builders.js';

describe('requiredAccess', () => {
  it.each([
    { name: 'included names, sorted and unique', rd: distribution('a').secret('s').included('b', 'a', 'b').build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: ['a', 'b'] } },
    { name: 'excluded names dropped', rd: distribution('a').configMap('c').included('a', 'b').excluded('b').build(), expected: { group: '', resource: 'configmaps', verbs: ['create', 'update'], namespaces: ['a'] } },
    { name: 'system namespaces dropped', rd: distribution('a').configMap('c').included('kube-system', 'kube-public', 'a').build(), expected: { group: '', resource: 'configmaps', verbs: ['create', 'update'], namespaces: ['a'] } },
    { name: 'forbidden namespaces dropped', rd: distribution('a').configMap('c').included('locked', 'a').build(), expected: { group: '', resource: 'configmaps', verbs: ['create', 'update'], namespaces: ['a'] } },
    { name: 'allNamespaces: everywhere', rd: distribution('a').secret('s').allNamespaces().included('a').build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: 'all' } },
    { name: 'a selector: everywhere', rd: distribution('a').secret('s').expression('env', 'Exists').build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: 'all' } },
    { name: 'an empty selector selects nothing', rd: distribution('a').secret('s').selector({}).build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: [] } },
    { name: 'writePolicy overwrite: delete too', rd: distribution('a').secret('s').included('a').writePolicy('overwrite').build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update', 'delete'], namespaces: ['a'] } },
    { name: 'writePolicy strict: create and update', rd: distribution('a').secret('s').included('a').writePolicy('strict').build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: ['a'] } },
    { name: 'a name pattern: everywhere (it reaches namespaces created later)', rd: distribution('a').secret('s').included('a').patterns(['team-*']).build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: 'all' } },
    { name: 'an excluded pattern drops listed names it matches', rd: distribution('a').secret('s').included('team-a', 'ops').patterns([], ['team-*']).build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: ['ops'] } },
    { name: 'allNamespaces false: only the list', rd: distribution('a').secret('s').allNamespaces(false).included('x').build(), expected: { group: '', resource: 'secrets', verbs: ['create', 'update'], namespaces: ['x'] } },
  ])('$name', ({ rd, expected }) => {
    expect(requiredAccess(rd, ['locked'])).toEqual(expected);
  });
});

describe('stoppedTargets', () => {
  const cfg = { group: '', resource: 'configmaps' };
  it.each([
    { name: 'nothing changes', old: distribution('a').source('src', 's').included('b', 'c').build(), next: distribution('a').source('src', 's').included('b', 'c').build(), expected: undefined },
    { name: 'a target dropped', old: distribution('a').source('src', 's').included('b', 'c').build(), next: distribution('a').source('src', 's').included('b').build(), expected: { ...cfg, namespaces: ['c'] } },
    {
      name: 'the source moved into a listed target (its copy there goes)',
      old: distribution('a').source('src', 's').included('b', 'c').build(),
      next: distribution('a').source('c', 's').included('b', 'c').build(),
      expected: { ...cfg, namespaces: ['c'], because: 'source-moved' },
    },
    {
      name: 'the source moved into a namespace open-ended targets may reach',
      old: distribution('a').source('src', 's').allNamespaces().build(),
      next: distribution('a').source('c', 's').allNamespaces().build(),
      expected: { ...cfg, namespaces: ['c'], because: 'source-moved' },
    },
    { name: 'the source moved into a namespace never targeted', old: distribution('a').source('src', 's').included('b').build(), next: distribution('a').source('x', 's').included('b').build(), expected: undefined },
    { name: 'the source moved into a forbidden namespace', old: distribution('a').source('src', 's').allNamespaces().build(), next: distribution('a').source('locked', 's').allNamespaces().build(), expected: undefined },
    {
      name: 'targets and source both changed: the dropped targets, the source\'s new namespace among them',
      old: distribution('a').source('src', 's').included('b', 'c', 'd').build(),
      next: distribution('a').source('c', 's').included('b', 'c').build(),
      expected: { ...cfg, namespaces: ['c', 'd'] },
    },
  ])('$name', ({ old, next, expected }) => {
    expect(stoppedTargets(old, next, ['locked'])).toEqual(expected);
  });
});
