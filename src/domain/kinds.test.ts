import { describe, expect, it } from 'vitest';
import { createKindRegistry, kindKeyOf, parseKindNames, resolveKinds, type ApiKind, type DiscoveredGroup } from './kinds.js';
import { contains, contentEqual } from './ownership.js';
import { checkKind } from './validate-resource.js';
import { validateSource } from './validate-source.js';
import type { Resource } from './types.js';

const DISCOVERED: DiscoveredGroup[] = [
  {
    group: '',
    preferredVersion: 'v1',
    versions: ['v1'],
    resources: [
      { name: 'secrets', kind: 'Secret', namespaced: true },
      { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
      { name: 'namespaces', kind: 'Namespace', namespaced: false },
      { name: 'pods/log', kind: 'Pod', namespaced: true },
    ],
  },
  { group: 'networking.k8s.io', preferredVersion: 'v1', versions: ['v1'], resources: [{ name: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true }] },
  { group: 'batch', preferredVersion: 'v1', versions: ['v1'], resources: [{ name: 'cronjobs', kind: 'CronJob', namespaced: true }] },
  {
    group: 'rbac.authorization.k8s.io',
    preferredVersion: 'v1',
    versions: ['v1'],
    resources: [
      { name: 'rolebindings', kind: 'RoleBinding', namespaced: true },
      { name: 'clusterroles', kind: 'ClusterRole', namespaced: false },
    ],
  },
];

const NETWORK_POLICY: ApiKind = { group: 'networking.k8s.io', kind: 'NetworkPolicy', plural: 'networkpolicies', version: 'v1', versions: ['v1'] };
const SECRET: ApiKind = { group: '', kind: 'Secret', plural: 'secrets', version: 'v1', versions: ['v1'] };
const REGISTRY = createKindRegistry([SECRET, NETWORK_POLICY]);

describe('RD_ALLOWED_KINDS', () => {
  it.each([
    ['the default', 'Secret,ConfigMap', [{ kind: 'Secret', group: '' }, { kind: 'ConfigMap', group: '' }]],
    ['kinds with groups, spaces around', ' NetworkPolicy.networking.k8s.io , CronJob.batch', [{ kind: 'NetworkPolicy', group: 'networking.k8s.io' }, { kind: 'CronJob', group: 'batch' }]],
  ])('parses %s', (_what, value, names) => {
    expect(parseKindNames(value)).toEqual(names);
  });

  it.each([
    ['nothing', ' , '],
    ['a plural', 'secrets'],
    ['a trailing dot', 'CronJob.'],
  ])('refuses %s', (_what, value) => {
    expect(() => parseKindNames(value)).toThrow();
  });

  it.each([
    ['core kinds', 'Secret,ConfigMap', { kinds: ['secrets', 'configmaps'], invalid: [], unknown: [] }],
    ['a kind of another group, in its preferred version', 'NetworkPolicy.networking.k8s.io', { kinds: ['networkpolicies'], invalid: [], unknown: [] }],
    ['a cluster-scoped kind', 'ClusterRole.rbac.authorization.k8s.io', { kinds: [], invalid: ['ClusterRole.rbac.authorization.k8s.io is cluster-scoped: only namespaced kinds can be distributed'], unknown: [] }],
    ['a kind the cluster does not serve', 'Certificate.cert-manager.io,Widget', { kinds: [], invalid: [], unknown: ['Certificate.cert-manager.io', 'Widget'] }],
    ['a subresource is no kind', 'Pod', { kinds: [], invalid: [], unknown: ['Pod'] }],
    ['the same kind twice', 'Secret,Secret', { kinds: ['secrets'], invalid: [], unknown: [] }],
  ])('resolves %s by discovery', (_what, value, expected) => {
    const resolved = resolveKinds(parseKindNames(value), DISCOVERED);
    expect({ ...resolved, kinds: resolved.kinds.map((kind) => kind.plural) }).toEqual(expected);
  });

  it.each([
    ['v1', 'Secret', 'Secret'],
    ['networking.k8s.io/v1', 'NetworkPolicy', 'NetworkPolicy.networking.k8s.io'],
    ['networking.k8s.io/v2', 'NetworkPolicy', undefined],
    ['v1', 'ConfigMap', undefined],
    [undefined, 'Secret', undefined],
  ])('finds %s %s in the registry', (apiVersion, kind, key) => {
    const found = REGISTRY.find(apiVersion, kind);
    expect(found === undefined ? undefined : kindKeyOf(apiVersion, found.kind)).toBe(key);
  });

  it.each([
    ['an allowed kind', 'networking.k8s.io/v1', 'NetworkPolicy', []],
    ['another version of an allowed kind', 'networking.k8s.io/v1beta1', 'NetworkPolicy', [{ path: 'spec.resource.apiVersion', message: '"networking.k8s.io/v1beta1" is not supported for NetworkPolicy: set "networking.k8s.io/v1"' }]],
    ['a kind not allowed', 'v1', 'ConfigMap', [{ path: 'spec.resource.kind', message: '"ConfigMap" is not supported: use Secret or NetworkPolicy.networking.k8s.io (allowed by RD_ALLOWED_KINDS)' }]],
    ['no kind', 'v1', undefined, [{ path: 'spec.resource.kind', message: 'is required: Secret or NetworkPolicy.networking.k8s.io' }]],
  ])('admission: %s', (_what, apiVersion, kind, problems) => {
    expect(checkKind(apiVersion, kind, REGISTRY, 'spec.resource')).toEqual(problems);
  });

  it('admission: a RoleBinding is never copied from a source', () => {
    const registry = createKindRegistry([{ group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', plural: 'rolebindings', version: 'v1', versions: ['v1'] }]);
    const source = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', namespace: 'platform', name: 'viewers' };
    expect(validateSource(source, {}, [], registry)).toEqual([expect.objectContaining({ path: 'spec.source.kind' })]);
  });
});

function networkPolicy(spec: Record<string, unknown>): Resource {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny' }, spec };
}

describe('content of kinds the API server defaults', () => {
  it.each([
    ['policyTypes added by the server', { podSelector: {} }, { podSelector: {}, policyTypes: ['Ingress'] }, true],
    ['a port protocol defaulted inside a list', { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] }, { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }], policyTypes: ['Ingress'] }, true],
    ['a field we set, changed', { podSelector: { matchLabels: { app: 'a' } } }, { podSelector: { matchLabels: { app: 'b' } } }, false],
    ['a list item someone added', { podSelector: {}, ingress: [{}] }, { podSelector: {}, ingress: [{}, {}] }, false],
    ['a field we set, removed', { podSelector: {}, ingress: [{}] }, { podSelector: {} }, false],
  ])('%s: in sync = %s', (_what, desired, existing, same) => {
    expect(contentEqual(networkPolicy(desired), networkPolicy(existing))).toBe(same);
  });

  // What the API server stores of `{podSelector: {}, ingress: [{ports: [{port: 80}]}]}`.
  const stored = { object: networkPolicy({ podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }], policyTypes: ['Ingress'] }), storedOtherwiseIn: new Set(['mutated']) };
  const template = networkPolicy({ podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] });
  it.each([
    ['as stored', { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }], policyTypes: ['Ingress'] }, 'team-a', true],
    ['a field added by hand that the template does not set', { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }], from: [{ podSelector: {} }] }], policyTypes: ['Ingress'] }, 'team-a', false],
    ['a default changed by hand', { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'UDP' }] }], policyTypes: ['Ingress'] }, 'team-a', false],
    ['a default removed by hand', { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }] }, 'team-a', false],
    ['a field added where copies are stored otherwise: the template fields alone', { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }], from: [{ podSelector: {} }] }], policyTypes: ['Ingress'] }, 'mutated', true],
  ])('against the stored form: %s: in sync = %s', (_what, spec, namespace, same) => {
    const existing = { ...networkPolicy(spec), metadata: { name: 'deny', namespace, labels: { theirs: 'kept' } } };
    expect(contentEqual(template, existing, stored)).toBe(same);
  });

  it.each([
    [1, 1, true],
    ['1', 1, false],
    [null, null, true],
    [{}, null, false],
    [[1], { 0: 1 }, false],
  ])('contains(%j, %j) = %s', (wanted, actual, expected) => {
    expect(contains(actual, wanted)).toBe(expected);
  });
});
