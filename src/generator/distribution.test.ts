import { describe, expect, it } from 'vitest';
import { documented } from '../../test/unit/generator-documented.js';
import { GeneratorError, parseGeneratorConfig, type GeneratorConfig } from './config.js';
import { buildDistribution } from './distribution.js';

/** The documentation's complete use case, as parsed; `change` edits a copy of it. */
function config(change: (config: GeneratorConfig) => void = () => undefined): GeneratorConfig {
  const parsed = parseGeneratorConfig(documented()).config;
  change(parsed);
  return parsed;
}

const files = (entries: Record<string, string | Buffer>): Map<string, Buffer> =>
  new Map(Object.entries(entries).map(([path, content]): [string, Buffer] => [path, Buffer.isBuffer(content) ? content : Buffer.from(content)]));

const APPLICATION_PROPERTIES = 'FOO=Bar\nFIRST=1\nSECOND=2\nLAST=3\n';

describe('buildDistribution', () => {
  it('the documented complete use case gives the documented output', () => {
    expect(buildDistribution(config(), files({ 'application.properties': APPLICATION_PROPERTIES }))).toEqual({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ResourceDistribution',
      metadata: { labels: { 'app.kubernetes.io/name': 'app1' }, name: 'rdname' },
      spec: {
        resource: {
          apiVersion: 'v1',
          data: { JAVA_HOME: '/opt/java/jdk', 'application.properties': APPLICATION_PROPERTIES },
          kind: 'ConfigMap',
          metadata: { annotations: { dashboard: '1' }, name: 'cmname' },
        },
        targets: { includedNamespaces: { list: [{ name: 'ns-1' }] }, namespaceLabelSelector: { matchLabels: { group: 'test' } } },
      },
    });
  });

  it.each<[string, (c: GeneratorConfig) => void, Record<string, string | Buffer>, Record<string, unknown>]>([
    [
      'the documented env file',
      (c) => (c.resource.sources = { literals: [], files: [], envs: ['tracing.env'] }),
      { 'tracing.env': 'ENABLE_TRACING=true\nSAMPLER_TYPE=probabilistic\nSAMPLER_PARAMETERS=0.1\n' },
      { data: { ENABLE_TRACING: 'true', SAMPLER_PARAMETERS: '0.1', SAMPLER_TYPE: 'probabilistic' } },
    ],
    [
      'a binary file goes to binaryData',
      (c) => (c.resource.sources = { literals: ['A=b'], files: ['logo.png'], envs: [] }),
      { 'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]) },
      { data: { A: 'b' }, binaryData: { 'logo.png': 'iVBORw==' } },
    ],
    ['no sources: no data', (c) => (c.resource.sources = { literals: [], files: [], envs: [] }), {}, {}],
    [
      'immutable, with labels',
      (c) => {
        c.resource.sources.files = [];
        c.resource.options = { immutable: true, labels: { team: 'a' } };
      },
      {},
      { data: { JAVA_HOME: '/opt/java/jdk' }, immutable: true, metadata: { name: 'cmname', labels: { team: 'a' } } },
    ],
  ])('ConfigMap: %s', (_what, change, contents, expected) => {
    const resource = buildDistribution(config(change), files(contents)).spec.resource;
    expect(resource).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { annotations: { dashboard: '1' }, name: 'cmname' }, ...expected });
  });

  it.each<[string, (c: GeneratorConfig) => void, Record<string, unknown>]>([
    ['every value in base64, Opaque by default', () => undefined, { type: 'Opaque', data: { JAVA_HOME: 'L29wdC9qYXZhL2pkaw==', 'application.properties': 'Rk9PPUJhcgpGSVJTVD0xClNFQ09ORD0yCkxBU1Q9Mwo=' } }],
    ['its type', (c) => (c.resource.type = 'example.com/token'), { type: 'example.com/token' }],
    ['no sources: an empty data map', (c) => (c.resource.sources = { literals: [], files: [], envs: [] }), { data: {} }],
    ['a binary file as it is', (c) => (c.resource.sources = { literals: [], files: ['key.bin'], envs: [] }), { data: { 'key.bin': '/wABAg==' } }],
  ])('Secret: %s', (_what, change, expected) => {
    const resource = buildDistribution(
      config((c) => {
        c.resource.kind = 'Secret';
        change(c);
      }),
      files({ 'application.properties': APPLICATION_PROPERTIES, 'key.bin': Buffer.from([0xff, 0x00, 0x01, 0x02]) }),
    ).spec.resource;
    expect(resource).toMatchObject(expected);
  });

  it.each<[string, GeneratorConfig['targets'], Record<string, unknown>]>([
    ['all namespaces but some', { allNamespaces: true, excludedNamespaces: ['ns-2', 'ns-3'] }, { allNamespaces: true, excludedNamespaces: { list: [{ name: 'ns-2' }, { name: 'ns-3' }] } }],
    ['an empty list stays a list', { allNamespaces: false, includedNamespaces: [] }, { includedNamespaces: { list: [] } }],
    [
      'a selector with expressions',
      { allNamespaces: false, namespaceLabelSelector: { matchLabels: { z: '1', a: '2' }, matchExpressions: [{ key: 'env', operator: 'Exists' }] } },
      { namespaceLabelSelector: { matchExpressions: [{ key: 'env', operator: 'Exists' }], matchLabels: { a: '2', z: '1' } } },
    ],
    ['an empty selector is left out', { allNamespaces: true, namespaceLabelSelector: {} }, { allNamespaces: true }],
  ])('targets: %s', (_what, targets, expected) => {
    const built = buildDistribution(
      config((c) => (c.targets = targets)),
      files({ 'application.properties': '' }),
    );
    expect(built.spec.targets).toEqual(expected);
  });

  it('options label and annotate the ResourceDistribution, resourceOptions the distributed object', () => {
    const built = buildDistribution(
      config((c) => {
        c.options = { immutable: true, labels: { version: 'stable' }, annotations: { type: 'slave' } };
        c.resource.options = { immutable: false, labels: { environment: 'dev' }, annotations: { dashboard: '1' } };
      }),
      files({ 'application.properties': '' }),
    );
    expect(built.metadata).toEqual({ name: 'rdname', labels: { version: 'stable' }, annotations: { type: 'slave' } });
    expect(built.spec.resource.metadata).toEqual({ name: 'cmname', labels: { environment: 'dev' }, annotations: { dashboard: '1' } });
    expect(built.spec.resource.immutable).toBeUndefined();
  });

  it.each<[string, (c: GeneratorConfig) => void, string]>([
    ['a key the API server refuses', (c) => (c.resource.sources.literals = ['MY KEY=1']), 'spec.resource.data["MY KEY"]: "MY KEY" is not a valid key'],
    ['a name the API server refuses', (c) => (c.resource.name = 'CM_Name'), 'spec.resource.metadata.name: "CM_Name" is not a valid name'],
    ['a label value the API server refuses', (c) => (c.resource.options.labels = { team: 'a b' }), 'spec.resource.metadata.labels["team"]: "a b" is not a valid label value'],
    [
      'a TLS Secret without its keys',
      (c) => {
        c.resource.kind = 'Secret';
        c.resource.type = 'kubernetes.io/tls';
      },
      'spec.resource.data: a Secret of type "kubernetes.io/tls" needs the key "tls.crt" and "tls.key"',
    ],
  ])('what admission would refuse fails the build: %s', (_what, change, message) => {
    const build = (): unknown => buildDistribution(config(change), files({ 'application.properties': APPLICATION_PROPERTIES }));
    expect(build).toThrow(GeneratorError);
    expect(build).toThrow(message);
  });

  it('a key given twice fails the build', () => {
    const build = (): unknown =>
      buildDistribution(
        config((c) => (c.resource.sources.literals = ['application.properties=x'])),
        files({ 'application.properties': APPLICATION_PROPERTIES }),
      );
    expect(build).toThrow('ConfigMap cmname repeats the key "application.properties": from resource.literals[0] and from resource.files[0] "application.properties"');
  });
});
