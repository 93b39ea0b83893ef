// Kyverno generate rules in the shapes its sample policies document (sync-secrets: clone regcred
// into every new namespace; add-ns-quota and add-networkpolicy: data rules in the legacy match
// form; cloneList, exclude by names, a selector), written as policies, and what they convert to.
import { describe, expect, it } from 'vitest';
import { convertManifests } from './convert.js';
import { parseManifests } from './manifests.js';

const NEW_NS = '{{request.object.metadata.name}}';
const namespaceTrigger = { any: [{ resources: { kinds: ['Namespace'] } }] };

function policy(rules: object[], spec: object = {}): object {
  return { apiVersion: 'kyverno.io/v1', kind: 'ClusterPolicy', metadata: { name: 'p' }, spec: { ...spec, rules } };
}

function convert(...objects: object[]): ReturnType<typeof convertManifests> {
  return convertManifests(parseManifests(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }), 'test'));
}

const cloneRegcred = { name: 'sync-image-pull-secret', match: namespaceTrigger, generate: { apiVersion: 'v1', kind: 'Secret', name: 'regcred', namespace: NEW_NS, synchronize: true, clone: { namespace: 'default', name: 'regcred' } } };

describe('Kyverno clone rules', () => {
  it.each([
    ['sync-secrets: every new namespace', {}, { allNamespaces: true }],
    ['a selector', { match: { any: [{ resources: { kinds: ['Namespace'], selector: { matchLabels: { 'registry.example.com/pull-secret': 'true' } } } }] } }, { namespaceLabelSelector: { matchLabels: { 'registry.example.com/pull-secret': 'true' } } }],
    ['names with wildcards', { match: { all: [{ resources: { kinds: ['v1/Namespace'], names: ['team-*', 'ops'] } }] } }, { includedNamespaces: { list: [{ name: 'ops' }, { pattern: 'team-*' }] } }],
    ['excluded by namespaces, as the cloneList sample excludes', { exclude: { any: [{ resources: { namespaces: ['kube-system', 'default', 'kyverno'] } }] } }, { allNamespaces: true, excludedNamespaces: { list: [{ name: 'kube-system' }, { name: 'default' }, { name: 'kyverno' }] } }],
    ['excluded by a label', { exclude: { any: [{ resources: { kinds: ['Namespace'], selector: { matchLabels: { sandbox: 'true' } } } }] } }, { namespaceLabelSelector: { matchExpressions: [{ key: 'sandbox', operator: 'NotIn', values: ['true'] }] } }],
    ['a selector and an excluded label', {
      match: { any: [{ resources: { kinds: ['Namespace'], selector: { matchLabels: { team: 'a' } } } }] },
      exclude: { any: [{ resources: { kinds: ['Namespace'], selector: { matchExpressions: [{ key: 'legacy', operator: 'Exists' }] } } }] },
    }, { namespaceLabelSelector: { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] } }],
  ])('%s', (_, change, targets) => {
    const { distributions, findings } = convert(policy([{ ...cloneRegcred, ...change }]));
    expect(findings.filter((finding) => finding.level === 'unconverted')).toEqual([]);
    expect(distributions.map((distribution) => distribution.object.spec)).toEqual([
      { source: { apiVersion: 'v1', kind: 'Secret', namespace: 'default', name: 'regcred' }, targets },
    ]);
    expect(distributions[0]?.origins).toEqual(['Kyverno: ClusterPolicy p rule sync-image-pull-secret']);
  });

  it('says that existing namespaces are filled too, unless the policy generates for existing ones', () => {
    expect(convert(policy([cloneRegcred])).findings).toContainEqual({ level: 'note', subject: 'ClusterPolicy p rule sync-image-pull-secret', message: expect.stringContaining('fills the namespaces that exist too') });
    expect(convert(policy([cloneRegcred], { generateExisting: true })).findings).toEqual([]);
  });
});

describe('Kyverno data rules', () => {
  it('add-ns-quota: a ResourceQuota in the legacy match form, without apiVersion', () => {
    const rule = { name: 'generate-resourcequota', match: { resources: { kinds: ['Namespace'] } }, generate: { kind: 'ResourceQuota', name: 'default-resourcequota', synchronize: true, namespace: NEW_NS, data: { spec: { hard: { 'requests.cpu': '4', 'limits.memory': '16Gi' } } } } };
    const { distributions, findings } = convert({ ...(policy([rule])), metadata: { name: 'add-ns-quota' } });
    expect(distributions.map((distribution) => distribution.object)).toEqual([{
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ResourceDistribution',
      metadata: { name: 'add-ns-quota-generate-resourcequota' },
      spec: { resource: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'default-resourcequota' }, spec: { hard: { 'requests.cpu': '4', 'limits.memory': '16Gi' } } }, targets: { allNamespaces: true } },
    }]);
    expect(findings).toContainEqual({ level: 'note', subject: 'ClusterPolicy add-ns-quota rule generate-resourcequota', message: 'ResourceQuota is copied only where RD_ALLOWED_KINDS allows it' });
  });

  it('add-networkpolicy: a NetworkPolicy, keeping the labels of its data', () => {
    const rule = { name: 'default-deny', match: { resources: { kinds: ['Namespace'] } }, generate: { kind: 'NetworkPolicy', name: 'default-deny', namespace: NEW_NS, synchronize: true, data: { metadata: { labels: { team: 'net' }, namespace: 'x' }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] } } } };
    expect(convert(policy([rule])).distributions[0]?.object.spec.resource).toEqual({
      apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'default-deny', labels: { team: 'net' } }, spec: { podSelector: {}, policyTypes: ['Ingress', 'Egress'] },
    });
  });

  it('a Secret defined in the policy: its data is in the output, never in a finding', () => {
    const rule = { name: 'token', match: namespaceTrigger, generate: { apiVersion: 'v1', kind: 'Secret', name: 'token', namespace: NEW_NS, data: { type: 'Opaque', data: { token: 'c2VjcmV0LXRva2Vu' } } } };
    const { distributions, findings } = convert(policy([rule]));
    expect(distributions[0]?.object.spec.resource).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'token' }, type: 'Opaque', data: { token: 'c2VjcmV0LXRva2Vu' } });
    expect(JSON.stringify(findings)).not.toContain('c2VjcmV0LXRva2Vu');
  });
});

describe('Kyverno rules that do not convert', () => {
  const clone = cloneRegcred.generate;
  it.each([
    ['synchronize false (Kyverno\'s default): create once', { generate: { ...clone, synchronize: false } }, 'creates the object once'],
    ['cloneList, as its sample clones labelled Secrets', { generate: { namespace: NEW_NS, synchronize: true, cloneList: { namespace: 'default', kinds: ['v1/Secret'], selector: { matchLabels: { allowedToBeCloned: 'true' } } } } }, 'cloneList'],
    ['a clone under another name', { generate: { ...clone, name: 'pull' } }, 'under another name'],
    ['a name from a variable', { context: [{ name: 'source', variable: { value: 'regcred' } }], generate: { ...clone, name: '{{source}}' } }, 'context'],
    ['data with variables', { generate: { apiVersion: 'v1', kind: 'ConfigMap', name: 'ns-info', namespace: NEW_NS, synchronize: true, data: { data: { ns: NEW_NS } } } }, 'variables'],
    ['preconditions', { preconditions: { all: [] } }, 'preconditions'],
    ['a trigger on Pods', { match: { any: [{ resources: { kinds: ['Pod'] } }] } }, 'fires on "Pod"'],
    ['a fixed target namespace', { generate: { ...clone, namespace: 'apps' } }, 'not into the new namespace'],
    ['names and labels in one filter', { match: { any: [{ resources: { kinds: ['Namespace'], names: ['team-*'], selector: { matchLabels: { a: 'b' } } } }] } }, 'name and labels together'],
    ['two selectors', { match: { any: [{ resources: { kinds: ['Namespace'], selector: { matchLabels: { a: 'b' } } } }, { resources: { kinds: ['Namespace'], selector: { matchLabels: { c: 'd' } } } }] } }, 'several label selectors'],
    ['who creates the namespace', { match: { any: [{ resources: { kinds: ['Namespace'] }, subjects: [{ kind: 'User', name: 'x' }] }] } }, 'who makes the request'],
    ['an exclusion of two labels', { exclude: { any: [{ resources: { kinds: ['Namespace'], selector: { matchLabels: { a: 'b', c: 'd' } } } }] } }, 'several labels'],
    ['a ? wildcard', { match: { any: [{ resources: { kinds: ['Namespace'], names: ['team-?'] } }] } }, 'with ?'],
  ])('%s', (_, change, message) => {
    expect(convert(policy([{ ...cloneRegcred, ...change }])).findings).toContainEqual({ level: 'unconverted', subject: 'ClusterPolicy p rule sync-image-pull-secret', message: expect.stringContaining(message) });
  });

  it('a namespaced Policy', () => {
    const namespaced = { ...(policy([cloneRegcred])), kind: 'Policy', metadata: { name: 'p', namespace: 'apps' } };
    expect(convert(namespaced)).toEqual({ distributions: [], findings: [{ level: 'unconverted', subject: 'Policy apps/p', message: expect.stringContaining('never on a new namespace') }] });
  });

  it('ignores rules that generate nothing', () => {
    expect(convert(policy([{ name: 'check', match: namespaceTrigger, validate: { message: 'x' } }]))).toEqual({ distributions: [], findings: [] });
  });
});
