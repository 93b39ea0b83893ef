import { describe, expect, it } from 'vitest';
import { requiredAccess } from '../../../src/admission/required-access.js';
import { distribution } from '../builders.js';

describe('requiredAccess', () => {
  it.each([
    { name: 'included names, sorted and unique', rd: distribution('a').secret('s').included('b', 'a', 'b').build(), expected: { resource: 'secrets', namespaces: ['a', 'b'] } },
    { name: 'excluded names dropped', rd: distribution('a').configMap('c').included('a', 'b').excluded('b').build(), expected: { resource: 'configmaps', namespaces: ['a'] } },
    { name: 'system namespaces dropped', rd: distribution('a').configMap('c').included('kube-system', 'kube-public', 'a').build(), expected: { resource: 'configmaps', namespaces: ['a'] } },
    { name: 'forbidden namespaces dropped', rd: distribution('a').configMap('c').included('locked', 'a').build(), expected: { resource: 'configmaps', namespaces: ['a'] } },
    { name: 'allNamespaces: everywhere', rd: distribution('a').secret('s').allNamespaces().included('a').build(), expected: { resource: 'secrets', namespaces: 'all' } },
    { name: 'a selector: everywhere', rd: distribution('a').secret('s').expression('env', 'Exists').build(), expected: { resource: 'secrets', namespaces: 'all' } },
    { name: 'an empty selector selects nothing', rd: distribution('a').secret('s').selector({}).build(), expected: { resource: 'secrets', namespaces: [] } },
    { name: 'allNamespaces false: only the list', rd: distribution('a').secret('s').allNamespaces(false).included('x').build(), expected: { resource: 'secrets', namespaces: ['x'] } },
  ])('$name', ({ rd, expected }) => {
    expect(requiredAccess(rd, ['locked'])).toEqual(expected);
  });
});
