import { describe, expect, it } from 'vitest';
import { hashResource } from '../../../src/domain/hash.js';
import type { Resource } from '../../../src/domain/types.js';
import { templateHash } from '../../soak/canonical-hash.js';
import { checkCluster } from '../../soak/checker.js';
import type { Expectations } from '../../soak/expectations.js';
import type { ClusterSnapshot, ObjectSnapshot } from '../../soak/snapshot-types.js';
import { configMap, copyOf, distribution, expectations, foreignObject, listed, namespace, OWN, secret, world } from './soak-builders.js';

const NS = [namespace('a', { team: 'x' }), namespace('b', { team: 'x' }), namespace('c', { team: 'y' })];
const cm = configMap('settings', { k: 'v1' });
const byTeam = distribution('rd', { resource: cm, targets: { namespaceLabelSelector: { matchLabels: { team: 'x' } } } }, { desired: 2, succeeded: 2 });
const good = [copyOf(byTeam, 'a'), copyOf(byTeam, 'b')];

function edited(object: ObjectSnapshot, change: (o: ObjectSnapshot) => void): ObjectSnapshot {
  const copy = structuredClone(object);
  change(copy);
  return copy;
}

const ignoreRd = distribution('rd', { resource: cm, targets: listed('a', 'b'), writePolicy: 'ignore' }, { desired: 2, succeeded: 1, conflicts: ['b'] });
const foreignB = foreignObject('ConfigMap', 'b', 'settings', { k: 'theirs' });
const recordedB = { kind: 'ConfigMap' as const, namespace: 'b', name: 'settings', uid: foreignB.uid, data: { k: 'theirs' }, labels: foreignB.labels, mayBeTakenOver: false };

const source = configMap('src-settings', { k: 'from-source' }, { 'tmpl.soak.example/l': '1' });
const sourceObject: ObjectSnapshot = { kind: 'ConfigMap', namespace: 'src', name: 'src-settings', uid: 's', labels: source.metadata.labels ?? {}, annotations: {}, ownerReferences: [], data: source.data ?? {} };
const sourced = (status: Parameters<typeof distribution>[2]) =>
  distribution('rd-src', { source: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'src', name: 'src-settings' }, targets: { allNamespaces: true } }, status);
const withSource = [...NS, namespace('src')];

const cases: { name: string; snapshot: ClusterSnapshot; expectations?: Expectations; rules: string[] }[] = [
  { name: 'a converged world', snapshot: world({ namespaces: NS, distributions: [byTeam], objects: good }), rules: [] },
  { name: 'a copy missing', snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!] }), rules: ['copy-missing', 'status-wrong'] },
  {
    name: 'a copy still carrying a hand edit',
    snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!, edited(good[1]!, (o) => (o.data.k = 'hand'))] }),
    rules: ['copy-wrong', 'status-wrong'],
  },
  {
    name: 'a template label the template dropped',
    snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!, edited(good[1]!, (o) => (o.labels['tmpl.soak.example/old'] = '1'))] }),
    rules: ['copy-wrong', 'status-wrong'],
  },
  {
    name: 'labels others added to a copy are kept, and allowed',
    snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!, edited(good[1]!, (o) => (o.labels['soak.example/hand'] = '1'))] }),
    rules: [],
  },
  {
    name: 'a stale hashcode',
    snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!, edited(good[1]!, (o) => (o.annotations['kruise.io/resourcedistribution.resource.hashcode'] = 'old'))] }),
    rules: ['copy-wrong', 'status-wrong'],
  },
  {
    name: 'a copy controlled by an earlier distribution of the same name',
    snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!, edited(good[1]!, (o) => (o.ownerReferences[0]!.uid = 'earlier'))] }),
    rules: ['copy-wrong', 'status-wrong'],
  },
  {
    name: 'a copy whose controller reference names v1alpha1 (written by OpenKruise or an earlier release) is ours',
    snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!, edited(good[1]!, (o) => (o.ownerReferences[0]!.apiVersion = 'apps.kruise.io/v1alpha1'))] }),
    rules: [],
  },
  {
    name: 'a copy whose controller reference names another group',
    snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [good[0]!, edited(good[1]!, (o) => (o.ownerReferences[0]!.apiVersion = 'apps.example.io/v1beta1'))] }),
    rules: ['copy-wrong', 'status-wrong'],
  },
  { name: 'a copy left where nothing targets', snapshot: world({ namespaces: NS, distributions: [byTeam], objects: [...good, copyOf(byTeam, 'c')] }), rules: ['copy-untargeted'] },
  {
    name: 'a copy in a namespace being deleted is the namespace controller\'s',
    snapshot: world({ namespaces: [...NS.slice(0, 2), namespace('c', { team: 'y' }, true)], distributions: [byTeam], objects: [...good, copyOf(byTeam, 'c')] }),
    rules: [],
  },
  { name: 'copies of a deleted distribution', snapshot: world({ namespaces: NS, objects: good }), rules: ['copy-outlived-distribution', 'copy-outlived-distribution'] },
  {
    name: 'copies of a distribution deleted with --cascade=orphan, owner dropped',
    snapshot: world({ namespaces: NS, objects: good.map((o) => edited(o, (c) => (c.ownerReferences = []))) }),
    expectations: expectations({ orphaned: new Set(['rd']) }),
    rules: [],
  },
  { name: 'orphaned copies still owned', snapshot: world({ namespaces: NS, objects: good }), expectations: expectations({ orphaned: new Set(['rd']) }), rules: ['orphan-still-owned', 'orphan-still-owned'] },
  {
    name: 'a foreign object left alone under ignore, reported as a conflict',
    snapshot: world({ namespaces: NS, distributions: [ignoreRd], objects: [copyOf(ignoreRd, 'a'), foreignB] }),
    expectations: expectations({ foreign: [recordedB] }),
    rules: [],
  },
  {
    name: 'a foreign object overwritten under ignore',
    snapshot: world({ namespaces: NS, distributions: [distribution('rd', { ...ignoreRd.spec }, { desired: 2, succeeded: 2 })], objects: [copyOf(ignoreRd, 'a'), { ...copyOf(ignoreRd, 'b'), uid: foreignB.uid }] }),
    expectations: expectations({ foreign: [recordedB] }),
    rules: ['foreign-overwritten'],
  },
  {
    name: 'a foreign object taken over while writePolicy was overwrite',
    snapshot: world({ namespaces: NS, distributions: [distribution('rd', { ...ignoreRd.spec }, { desired: 2, succeeded: 2 })], objects: [copyOf(ignoreRd, 'a'), { ...copyOf(ignoreRd, 'b'), uid: foreignB.uid }] }),
    expectations: expectations({ foreign: [{ ...recordedB, mayBeTakenOver: true }] }),
    rules: [],
  },
  {
    name: 'a conflict the status does not report',
    snapshot: world({ namespaces: NS, distributions: [distribution('rd', { ...ignoreRd.spec }, { desired: 2, succeeded: 1 })], objects: [copyOf(ignoreRd, 'a'), foreignB] }),
    rules: ['status-wrong'],
  },
  {
    name: 'a foreign object not taken over under overwrite',
    snapshot: world({ namespaces: NS, distributions: [distribution('rd', { ...ignoreRd.spec, writePolicy: 'overwrite' }, { desired: 2, succeeded: 1 })], objects: [copyOf(ignoreRd, 'a'), foreignB] }),
    rules: ['foreign-not-taken-over'],
  },
  {
    name: 'strict with a conflict: nothing written anywhere, every namespace reported',
    snapshot: world({ namespaces: NS, distributions: [distribution('rd', { ...ignoreRd.spec, writePolicy: 'strict' }, { desired: 2, succeeded: 0, conflicts: ['a', 'b'] })], objects: [foreignB] }),
    rules: [],
  },
  {
    name: 'strict with a conflict: a blocked namespace not reported',
    snapshot: world({ namespaces: NS, distributions: [distribution('rd', { ...ignoreRd.spec, writePolicy: 'strict' }, { desired: 2, succeeded: 0, conflicts: ['b'] })], objects: [foreignB] }),
    rules: ['status-wrong'],
  },
  {
    name: 'a listed namespace that does not exist, reported',
    snapshot: world({ namespaces: NS, distributions: [distribution('rd', { resource: cm, targets: listed('a', 'later') }, { desired: 2, succeeded: 1, missing: ['later'] })], objects: [good[0]!] }),
    rules: [],
  },
  {
    name: 'a terminating listed namespace counts as missing',
    snapshot: world({
      namespaces: [NS[0]!, namespace('b', {}, true)],
      distributions: [distribution('rd', { resource: cm, targets: listed('a', 'b') }, { desired: 2, succeeded: 1 })],
      objects: [good[0]!],
    }),
    rules: ['status-wrong'],
  },
  {
    name: 'status of an older generation',
    snapshot: world({ namespaces: NS, distributions: [{ ...byTeam, generation: 2 }], objects: good }),
    rules: ['status-wrong'],
  },
  {
    name: 'allNamespaces never reaches kube-system nor the controller\'s namespace',
    snapshot: world({
      namespaces: [namespace('a'), namespace('kube-system'), namespace(OWN)],
      distributions: [distribution('rd', { resource: secret('pull', { v: 'eA==' }), targets: { allNamespaces: true } }, { desired: 1, succeeded: 1 })],
      objects: [copyOf(distribution('rd', { resource: secret('pull', { v: 'eA==' }), targets: {} }, { desired: 0, succeeded: 0 }), 'a')],
    }),
    rules: [],
  },
  {
    name: 'a copy in kube-system',
    snapshot: world({
      namespaces: [namespace('kube-system')],
      distributions: [distribution('rd', { resource: cm, targets: { allNamespaces: true } }, { desired: 0, succeeded: 0 })],
      objects: [copyOf(byTeam, 'kube-system')],
    }),
    rules: ['copy-untargeted'],
  },
  {
    name: 'a Secret copy of another type',
    snapshot: world({
      namespaces: [namespace('a')],
      distributions: [distribution('rd', { resource: secret('pull', { v: 'eA==' }, 'soak.example/custom'), targets: listed('a') }, { desired: 1, succeeded: 0 })],
      objects: [edited(copyOf(distribution('rd', { resource: secret('pull', { v: 'eA==' }, 'soak.example/custom'), targets: {} }, { desired: 0, succeeded: 0 }), 'a'), (o) => (o.type = 'Opaque'))],
    }),
    rules: ['copy-wrong'],
  },
  {
    name: 'copies following their source, never in the source\'s namespace',
    snapshot: world({ namespaces: withSource, distributions: [sourced({ desired: 3, succeeded: 3 })], objects: [sourceObject, ...['a', 'b', 'c'].map((n) => copyOf(sourced({ desired: 0, succeeded: 0 }), n, source))] }),
    rules: [],
  },
  {
    name: 'a copy behind its source',
    snapshot: world({
      namespaces: withSource,
      distributions: [sourced({ desired: 3, succeeded: 2 })],
      objects: [sourceObject, ...['a', 'b'].map((n) => copyOf(sourced({ desired: 0, succeeded: 0 }), n, source)), copyOf(sourced({ desired: 0, succeeded: 0 }), 'c', { ...source, data: { k: 'old' } })],
    }),
    rules: ['copy-wrong'],
  },
  {
    name: 'a deleted source: copies kept as they are, SourceNotFound, every target failed',
    snapshot: world({ namespaces: withSource, distributions: [sourced({ desired: 3, succeeded: 0, sourceMissing: true })], objects: [copyOf(sourced({ desired: 0, succeeded: 0 }), 'a', { ...source, data: { k: 'old' } })] }),
    rules: [],
  },
  {
    name: 'a deleted source the status does not report',
    snapshot: world({ namespaces: withSource, distributions: [sourced({ desired: 3, succeeded: 0 })], objects: [] }),
    rules: ['status-wrong'],
  },
];

describe('checkCluster', () => {
  it.each(cases)('$name', ({ snapshot, expectations: given, rules }) => {
    const found = checkCluster(snapshot, given ?? expectations());
    expect(found.map((v) => v.rule).sort()).toEqual([...rules].sort());
  });
});

describe('templateHash', () => {
  it.each([
    { name: 'a ConfigMap', template: configMap('x', { a: '1', b: '<&>' }) },
    { name: 'a Secret with labels', template: { ...secret('y', { v: 'eA==' }), metadata: { name: 'y', labels: { z: '1', a: '2' } } } },
    { name: 'line separators', template: configMap('x', { a: 'x\u2028y\u2029' }) },
  ])('agrees with the value the product promises to write for $name', ({ template }) => {
    expect(templateHash(template)).toBe(hashResource(template as unknown as Resource));
  });
});
