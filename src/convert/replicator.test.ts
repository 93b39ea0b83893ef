// mittwald replicator's documented examples (its README: push by name, push by label, pull with
// allowed namespaces, strip-labels), written as objects, and the distributions they convert to.
import { describe, expect, it } from 'vitest';
import { convertManifests } from './convert.js';
import { parseManifests } from './manifests.js';

const P = 'replicator.v1.mittwald.de/';
const EXCLUDE_TOOLS = { annotations: { exclude: ['replicator.v1.mittwald.de/*', 'reflector.v1.k8s.emberstack.com/*'] } };

function secret(namespace: string, name: string, annotations: Record<string, string>): object {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace, annotations }, data: { key1: 'c2VjcmV0LXZhbHVl' } };
}

function convert(...objects: object[]): ReturnType<typeof convertManifests> {
  return convertManifests(parseManifests(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }), 'test'));
}

const source = { apiVersion: 'v1', kind: 'Secret', namespace: 'default', name: 'test-secret' };

describe('mittwald replicator push annotations', () => {
  it.each([
    ['names and a .* pattern', { [`${P}replicate-to`]: 'my-ns-1,team-.*' }, { includedNamespaces: { list: [{ name: 'my-ns-1' }, { pattern: 'team-*' }] } }],
    ['every namespace', { [`${P}replicate-to`]: '.*' }, { allNamespaces: true }],
    ['the README label selector', { [`${P}replicate-to-matching`]: 'my-label=value,my-other-label,my-other-label notin (foo,bar)\n' }, {
      namespaceLabelSelector: {
        matchLabels: { 'my-label': 'value' },
        matchExpressions: [{ key: 'my-other-label', operator: 'Exists' }, { key: 'my-other-label', operator: 'NotIn', values: ['foo', 'bar'] }],
      },
    }],
    ['an empty selector: every namespace', { [`${P}replicate-to-matching`]: '' }, { allNamespaces: true }],
    ['both together: either', { [`${P}replicate-to`]: 'my-ns-1', [`${P}replicate-to-matching`]: 'team=a' }, { includedNamespaces: { list: [{ name: 'my-ns-1' }] }, namespaceLabelSelector: { matchLabels: { team: 'a' } } }],
  ])('%s', (_, annotations, targets) => {
    const { distributions, findings } = convert(secret('default', 'test-secret', annotations));
    expect(findings.filter((finding) => finding.level === 'unconverted')).toEqual([]);
    expect(distributions.map((distribution) => distribution.object)).toEqual([
      { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ResourceDistribution', metadata: { name: 'default-test-secret' }, spec: { source, targets, copyMetadata: EXCLUDE_TOOLS } },
    ]);
    expect(distributions[0]?.origins).toEqual(['mittwald replicator: Secret default/test-secret']);
  });

  it('converts the README example "my-ns-1,namespace-[0-9]*" in part, listing what it left out', () => {
    const { distributions, findings } = convert(secret('default', 'test-secret', { [`${P}replicate-to`]: 'my-ns-1,namespace-[0-9]*' }));
    expect(distributions[0]?.object.spec.targets).toEqual({ includedNamespaces: { list: [{ name: 'my-ns-1' }] } });
    expect(findings).toEqual([{ level: 'unconverted', subject: 'Secret default/test-secret', message: expect.stringContaining('"namespace-[0-9]*"') }]);
  });

  it.each([
    ['a system namespace', { [`${P}replicate-to`]: 'kube-system,ops' }, 'kube-system is a system namespace'],
    ['a > selector', { [`${P}replicate-to-matching`]: 'tier>2' }, 'numeric comparisons'],
    ['owner references kept', { [`${P}replicate-to`]: 'ops', [`${P}keep-owner-references`]: 'true' }, 'ownerReferences'],
  ])('lists what it cannot express: %s', (_, annotations, message) => {
    expect(convert(secret('default', 'test-secret', annotations)).findings).toContainEqual({ level: 'unconverted', subject: 'Secret default/test-secret', message: expect.stringContaining(message) });
  });

  it('keeps labels off the copies for strip-labels (the README strimzi example)', () => {
    const { distributions } = convert(secret('kafka', 'cluster-ca-certs', { [`${P}replicate-to`]: 'apps', [`${P}strip-labels`]: 'true' }));
    expect(distributions[0]?.object.spec.copyMetadata).toEqual({ labels: { exclude: ['*'] }, ...EXCLUDE_TOOLS });
  });

  it('never puts the Secret data in its output or findings', () => {
    const conversion = convert(secret('default', 'test-secret', { [`${P}replicate-to`]: 'a,[', [`${P}replicate-to-matching`]: '>' }));
    expect(JSON.stringify(conversion)).not.toContain('c2VjcmV0LXZhbHVl');
  });
});

describe('mittwald replicator pull annotations', () => {
  const allowing = (namespaces: string): object => secret('default', 'some-secret', { [`${P}replication-allowed`]: 'true', [`${P}replication-allowed-namespaces`]: namespaces });
  const mirror = (namespace: string, name = 'some-secret', from = 'default/some-secret'): object => ({ ...(secret(namespace, name, { [`${P}replicate-from`]: from })), data: {} });

  it('gathers the mirrors the source allows into one distribution of the source', () => {
    const { distributions, findings } = convert(allowing('my-ns-1,namespace-[0-9]*'), mirror('my-ns-1'), mirror('namespace-7'), mirror('other'));
    expect(distributions.map((distribution) => distribution.object.spec.targets)).toEqual([{ includedNamespaces: { list: [{ name: 'my-ns-1' }, { name: 'namespace-7' }] } }]);
    expect(findings).toContainEqual({ level: 'note', subject: 'Secret other/some-secret', message: expect.stringContaining('does not match other') });
    expect(findings).toContainEqual({ level: 'note', subject: 'Secret my-ns-1/some-secret', message: expect.stringContaining('kubectl annotate secret some-secret -n my-ns-1 resource-distributor.io/adopt=default-some-secret') });
  });

  it.each([
    ['a source that does not allow replication', [secret('default', 'some-secret', {}), mirror('a')], 'not annotated'],
    ['a source without allowed namespaces', [secret('default', 'some-secret', { [`${P}replication-allowed`]: 'true' }), mirror('a')], 'has no'],
  ])('converts no mirror the tool would not fill: %s', (_, objects, message) => {
    const { distributions, findings } = convert(...objects);
    expect(distributions).toEqual([]);
    expect(findings).toContainEqual({ level: 'note', subject: 'Secret a/some-secret', message: expect.stringContaining(message) });
  });

  it.each([
    ['the README secret-replica, named unlike its source', mirror('apps', 'secret-replica'), 'under another name'],
    ['a value without a namespace', mirror('apps', 'some-secret', 'some-secret'), 'is not <namespace>/<name>'],
  ])('lists what it cannot express: %s', (_, object, message) => {
    const { distributions, findings } = convert(allowing('.*'), object);
    expect(distributions).toEqual([]);
    expect(findings).toContainEqual({ level: 'unconverted', subject: 'Secret apps/' + (object as { metadata: { name: string } }).metadata.name, message: expect.stringContaining(message) });
  });

  it('merges pushes and pulls of one source', () => {
    const pushing = secret('default', 'some-secret', { [`${P}replicate-to`]: 'a', [`${P}replication-allowed`]: 'true', [`${P}replication-allowed-namespaces`]: 'b' });
    const { distributions } = convert(pushing, mirror('b'));
    expect(distributions.map((distribution) => [distribution.object.spec.targets, distribution.origins])).toEqual([
      [{ includedNamespaces: { list: [{ name: 'a' }, { name: 'b' }] } }, ['mittwald replicator: Secret default/some-secret', 'mittwald replicator: Secret b/some-secret']],
    ]);
  });

  it('converts a mirror whose source is not in the input, saying it was not checked', () => {
    const { distributions, findings } = convert(mirror('a'));
    expect(distributions).toHaveLength(1);
    expect(findings).toContainEqual({ level: 'note', subject: 'Secret a/some-secret', message: expect.stringContaining('not in the input') });
  });
});
