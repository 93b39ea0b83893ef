// emberstack reflector's documented examples (its README: the source Secret and ConfigMap with
// allowed namespaces and selector, automatic mirrors, `reflects` mirrors, cert-manager's
// secretTemplate with an empty allowed list), written as objects, and what they convert to.
import { describe, expect, it } from 'vitest';
import { convertManifests } from './convert.js';
import { parseManifests } from './manifests.js';

const P = 'reflector.v1.k8s.emberstack.com/';

function configMap(namespace: string, name: string, annotations: Record<string, string>): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, annotations }, data: { setting: 'value' } };
}

function convert(...objects: object[]): ReturnType<typeof convertManifests> {
  return convertManifests(parseManifests(objects.map((object) => JSON.stringify(object)).join('\n---\n'), 'test'));
}

const auto = (annotations: Record<string, string>): object =>
  configMap('default', 'source-config-map', { [`${P}reflection-allowed`]: 'true', [`${P}reflection-auto-enabled`]: 'true', ...annotations });

describe('emberstack reflector automatic mirrors', () => {
  it.each([
    ['no lists: every namespace', {}, { allNamespaces: true }],
    ['cert-manager secretTemplate: an empty allowed list', { [`${P}reflection-allowed-namespaces`]: '' }, { allNamespaces: true }],
    ['allowed names', { [`${P}reflection-allowed-namespaces`]: 'namespace-1,namespace-2' }, { includedNamespaces: { list: [{ name: 'namespace-1' }, { name: 'namespace-2' }] } }],
    ['automatic names within a .* pattern allowed', { [`${P}reflection-allowed-namespaces`]: 'team-.*', [`${P}reflection-auto-namespaces`]: 'team-a,ops' }, { includedNamespaces: { list: [{ name: 'team-a' }] } }],
    ['the README allowed selector', { [`${P}reflection-allowed-namespaces-selector`]: 'env=production' }, { namespaceLabelSelector: { matchLabels: { env: 'production' } } }],
    ['an automatic list or selector', { [`${P}reflection-auto-namespaces`]: 'ops', [`${P}reflection-auto-namespaces-selector`]: 'team in (a,b)' }, {
      includedNamespaces: { list: [{ name: 'ops' }] },
      namespaceLabelSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] },
    }],
  ])('%s', (_, annotations, targets) => {
    const { distributions, findings } = convert(auto(annotations));
    expect(findings.filter((finding) => finding.level === 'unconverted')).toEqual([]);
    expect(distributions.map((distribution) => distribution.object.spec.targets)).toEqual([targets]);
    expect(distributions[0]?.object.spec.source).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'source-config-map' });
    expect(distributions[0]?.origins).toEqual(['emberstack reflector: ConfigMap default/source-config-map']);
  });

  it.each([
    ['the README list "namespace-1,namespace-2,namespace-[0-9]*"', { [`${P}reflection-allowed-namespaces`]: 'namespace-1,namespace-2,namespace-[0-9]*' }, '"namespace-[0-9]*"'],
    ['allowed by selector, automatic by name', { [`${P}reflection-allowed-namespaces-selector`]: 'env=production', [`${P}reflection-auto-namespaces`]: 'ops' }, 'write the targets by hand'],
    ['two different patterns', { [`${P}reflection-allowed-namespaces`]: 'team-.*', [`${P}reflection-auto-namespaces`]: '.*-prod' }, 'write the targets by hand'],
  ])('lists what it cannot express: %s', (_, annotations, message) => {
    expect(convert(auto(annotations)).findings).toContainEqual({ level: 'unconverted', subject: 'ConfigMap default/source-config-map', message: expect.stringContaining(message) });
  });

  it.each([
    ['reflection not allowed', { [`${P}reflection-allowed`]: 'false' }],
    ['automatic mirrors off', { [`${P}reflection-auto-enabled`]: 'false' }],
    ['only allowed, the README source Secret', { [`${P}reflection-auto-enabled`]: '' }],
  ])('makes no distribution where reflector makes no mirror: %s', (_, annotations) => {
    expect(convert(auto(annotations)).distributions).toEqual([]);
  });
});

describe('emberstack reflector `reflects` mirrors', () => {
  const source = configMap('default', 'source-config-map', { [`${P}reflection-allowed`]: 'true', [`${P}reflection-allowed-namespaces`]: 'namespace-1,team-.*' });
  const mirror = (namespace: string, name = 'source-config-map'): object => configMap(namespace, name, { [`${P}reflects`]: 'default/source-config-map' });

  it('gathers the allowed mirrors into one distribution', () => {
    const { distributions, findings } = convert(source, mirror('namespace-1'), mirror('team-x'), mirror('elsewhere'));
    expect(distributions.map((distribution) => distribution.object.spec.targets)).toEqual([{ includedNamespaces: { list: [{ name: 'namespace-1' }, { name: 'team-x' }] } }]);
    expect(findings).toContainEqual({ level: 'note', subject: 'ConfigMap elsewhere/source-config-map', message: expect.stringContaining('would not fill it') });
  });

  it('lists the README mirror-config-map, named unlike its source', () => {
    const { distributions, findings } = convert(source, mirror('namespace-1', 'mirror-config-map'));
    expect(distributions).toEqual([]);
    expect(findings).toContainEqual({ level: 'unconverted', subject: 'ConfigMap namespace-1/mirror-config-map', message: expect.stringContaining('under another name') });
  });
});
