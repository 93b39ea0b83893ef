import { describe, expect, it } from 'vitest';
import { beyondAuthor } from '../../soak/check-authored.js';
import { checkCluster } from '../../soak/checker.js';
import { ANNOTATION_ADOPT, LABEL_DISTRIBUTION } from '../../soak/markers.js';
import { authorMayWrite } from '../../soak/model.js';
import type { ObjectSnapshot } from '../../soak/snapshot-types.js';
import { configMap, copyOf, distribution, expectations, listed, namespace, world } from './soak-builders.js';

describe('authorMayWrite', () => {
  it.each([
    ['soak-ns-0', true],
    ['soak-ns-3', true],
    ['soak-ns-4', false],
    ['soak-ns-30', true],
    ['soak-src', false],
    ['other-ns-3', false],
  ])('%s: %s', (name, may) => {
    expect(authorMayWrite(name)).toBe(may);
  });
});

describe('beyondAuthor', () => {
  it.each([
    { targets: listed('soak-ns-0', 'soak-ns-3'), beyond: [] },
    { targets: { ...listed('soak-ns-0'), excludedNamespaces: { list: [{ name: 'soak-ns-1' }] } }, beyond: [] },
    { targets: listed('soak-ns-0', 'soak-ns-1'), beyond: ['namespace soak-ns-1'] },
    { targets: { allNamespaces: true }, beyond: ['allNamespaces'] },
    { targets: { namespaceLabelSelector: { matchLabels: { g: 'a' } } }, beyond: ['a namespace selector'] },
    { targets: { namespaceLabelSelector: {} }, beyond: [] },
    { targets: { includedNamespaces: { list: [{ pattern: 'soak-ns-3*' }] } }, beyond: ['pattern soak-ns-3*'] },
  ])('$targets', ({ targets, beyond }) => {
    expect(beyondAuthor(targets)).toEqual(beyond);
  });
});

const NS = [namespace('soak-ns-0'), namespace('soak-ns-1'), namespace('soak-ns-3')];
const cm = configMap('settings', { k: 'v' });

describe('checkCluster: the limited author', () => {
  const authored = expectations({ authored: new Set(['rd']) });
  it.each([
    {
      name: 'copies only where it may write',
      rd: distribution('rd', { resource: cm, targets: listed('soak-ns-0', 'soak-ns-3') }, { desired: 2, succeeded: 2 }),
      copies: ['soak-ns-0', 'soak-ns-3'],
      rules: [],
    },
    {
      name: 'admitted with a namespace it may not write, and a copy there',
      rd: distribution('rd', { resource: cm, targets: listed('soak-ns-0', 'soak-ns-1') }, { desired: 2, succeeded: 2 }),
      copies: ['soak-ns-0', 'soak-ns-1'],
      rules: ['author-admitted-beyond-rights', 'author-exceeded'],
    },
    {
      name: 'admitted with allNamespaces',
      rd: distribution('rd', { resource: cm, targets: { allNamespaces: true } }, { desired: 3, succeeded: 3 }),
      copies: ['soak-ns-0', 'soak-ns-1', 'soak-ns-3'],
      rules: ['author-admitted-beyond-rights', 'author-exceeded'],
    },
  ])('$name', ({ rd, copies, rules }) => {
    const found = checkCluster(world({ namespaces: NS, distributions: [rd], objects: copies.map((ns) => copyOf(rd, ns)) }), authored);
    expect(found.map((v) => v.rule).sort()).toEqual(rules.sort());
  });

  it("a copy of the author's deleted distribution, orphaned where it may not write", () => {
    const rd = distribution('rd', { resource: cm, targets: listed('soak-ns-1') }, { desired: 1, succeeded: 1 });
    const orphan = { ...copyOf(rd, 'soak-ns-1'), ownerReferences: [] };
    const found = checkCluster(world({ namespaces: NS, objects: [orphan] }), expectations({ authored: new Set(['rd']), orphaned: new Set(['rd']) }));
    expect(found.map((v) => v.rule)).toEqual(['author-exceeded']);
  });
});

describe('checkCluster: adoption by consent', () => {
  const rd = distribution('rd', { resource: cm, targets: listed('soak-ns-0') }, { desired: 1, succeeded: 1 });
  const adopted: ObjectSnapshot = { ...copyOf(rd, 'soak-ns-0'), uid: 'theirs' };
  const waiting: ObjectSnapshot = { kind: 'ConfigMap', namespace: 'soak-ns-0', name: 'settings', uid: 'theirs', labels: { [LABEL_DISTRIBUTION]: 'rd' }, annotations: { [ANNOTATION_ADOPT]: 'rd' }, ownerReferences: [], data: { k: 'old' } };
  const adoptable = expectations({ adoptable: [{ kind: 'ConfigMap', namespace: 'soak-ns-0', name: 'settings', uid: 'theirs', distribution: 'rd' }] });
  it.each([
    { name: 'taken over in place', rd, object: adopted, rules: [] },
    { name: 'replaced by a new copy', rd, object: copyOf(rd, 'soak-ns-0'), rules: ['adoption-not-in-place'] },
    {
      name: 'not taken over (status reporting the conflict)',
      rd: distribution('rd', { resource: cm, targets: listed('soak-ns-0') }, { desired: 1, succeeded: 0, conflicts: ['soak-ns-0'] }),
      object: waiting,
      rules: ['adoption-missed'],
    },
    {
      name: 'under strict, not held to it',
      rd: distribution('rd', { resource: cm, targets: listed('soak-ns-0'), writePolicy: 'strict' }, { desired: 1, succeeded: 0, conflicts: ['soak-ns-0'] }),
      object: waiting,
      rules: [],
    },
  ])('$name', ({ rd: given, object, rules }) => {
    const found = checkCluster(world({ namespaces: NS, distributions: [given], objects: [object] }), adoptable);
    expect(found.map((v) => v.rule).sort()).toEqual(rules.sort());
  });

  it('an object waiting to be adopted where the distribution does not target is its owner\'s, not a stray copy', () => {
    const elsewhere = distribution('rd', { resource: cm, targets: listed('soak-ns-3') }, { desired: 1, succeeded: 1 });
    const found = checkCluster(world({ namespaces: NS, distributions: [elsewhere], objects: [copyOf(elsewhere, 'soak-ns-3'), waiting] }), adoptable);
    expect(found).toEqual([]);
  });
});
