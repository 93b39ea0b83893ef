import { describe, expect, it } from 'vitest';
import { documented } from '../../test/unit/generator-documented.js';
import { GeneratorError, parseGeneratorConfig, type GeneratorConfig } from './config.js';

const resource = (changes: Record<string, unknown>): Record<string, unknown> => ({ ...(documented().resource as object), ...changes });

function problemOf(value: unknown): string {
  try {
    parseGeneratorConfig(value);
  } catch (error) {
    expect(error).toBeInstanceOf(GeneratorError);
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

describe('parseGeneratorConfig', () => {
  it('reads the documented complete use case', () => {
    expect(parseGeneratorConfig(documented())).toEqual({
      config: {
        name: 'rdname',
        resource: {
          kind: 'ConfigMap',
          name: 'cmname',
          sources: { literals: ['JAVA_HOME=/opt/java/jdk'], files: ['application.properties'], envs: [] },
          options: { immutable: false, annotations: { dashboard: '1' } },
        },
        options: { immutable: false, labels: { 'app.kubernetes.io/name': 'app1' } },
        targets: { allNamespaces: false, includedNamespaces: ['ns-1'], namespaceLabelSelector: { matchLabels: { group: 'test' } } },
      } satisfies GeneratorConfig,
      warnings: [],
    });
  });

  it.each<[string, Record<string, unknown>, (config: GeneratorConfig) => unknown, unknown]>([
    ['a Secret with its type', { resource: resource({ resourceKind: 'Secret', type: 'kubernetes.io/tls' }) }, (c) => c.resource.type, 'kubernetes.io/tls'],
    ['a ConfigMap has no type', { resource: resource({ type: 'kubernetes.io/tls' }) }, (c) => c.resource.type, undefined],
    ['envs, and the older singular env after them', { resource: resource({ envs: ['a.env'], env: 'b.env' }) }, (c) => c.resource.sources.envs, ['a.env', 'b.env']],
    ['immutable in resourceOptions', { resource: resource({ resourceOptions: { immutable: true } }) }, (c) => c.resource.options, { immutable: true }],
    ['disableNameSuffixHash is accepted', { options: { disableNameSuffixHash: true } }, (c) => c.options, { immutable: false }],
    ['a true label value is read as text, a null one as empty', { options: { labels: { a: true, b: null } } }, (c) => c.options.labels, { a: 'true', b: '' }],
    ['a true literal is read as text (and then refused as one)', { resource: resource({ literals: [true] }) }, (c) => c.resource.sources.literals, ['true']],
    ['allNamespaces and excluded names', { targets: { allNamespaces: true, excludedNamespaces: ['kube-system'] } }, (c) => c.targets, { allNamespaces: true, excludedNamespaces: ['kube-system'] }],
    ['excluded names alone (as kruise-tools allows)', { targets: { excludedNamespaces: ['ns-2'] } }, (c) => c.targets, { allNamespaces: false, excludedNamespaces: ['ns-2'] }],
    [
      'matchExpressions sorted by key, their values sorted',
      { targets: { namespaceLabelSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold', 'bronze'] }, { key: 'env', operator: 'Exists' }] } } },
      (c) => c.targets.namespaceLabelSelector,
      { matchExpressions: [{ key: 'env', operator: 'Exists' }, { key: 'tier', operator: 'In', values: ['bronze', 'gold'] }] },
    ],
  ])('%s', (_what, changes, pick, expected) => {
    expect(pick(parseGeneratorConfig(documented(changes)).config)).toEqual(expected);
  });

  it.each<[string, unknown, string[]]>([
    ['another kind', { ...documented(), kind: 'ConfigMapGenerator' }, ['expected a ResourceDistributionGenerator as the function config, got "ConfigMapGenerator"']],
    ['no function config', undefined, ['got "nothing"']],
    ['no name', documented({ metadata: {} }), ['metadata.name: is required']],
    ['no resource', documented({ resource: undefined }), ['resource: is required', 'resource.resourceKind: is required', 'resource.resourceName: is required']],
    ['another resource kind', documented({ resource: resource({ resourceKind: 'Deployment' }) }), ['resource.resourceKind: "Deployment" is not supported: ConfigMap or Secret']],
    ['files not a list', documented({ resource: resource({ files: 'application.properties' }) }), ['resource.files: must be a list of file paths (or key=path)']],
    ['a literal that is a map', documented({ resource: resource({ literals: [{ A: 'b' }] }) }), ['resource.literals[0]: "{\\"A\\":\\"b\\"}" must be a string']],
    ['labels not a map', documented({ options: { labels: ['a=b'] } }), ['options.labels: must be a map of strings']],
    ['immutable not a boolean', documented({ resource: resource({ resourceOptions: { immutable: 'yes' } }) }), ['resource.resourceOptions.immutable: "yes" must be true or false']],
    ['no targets', documented({ targets: undefined }), ['targets: is required']],
    ['targets that select nothing', documented({ targets: { allNamespaces: false, namespaceLabelSelector: {} } }), ['targets: is required']],
    ['included namespaces in the API form', documented({ targets: { includedNamespaces: { list: [{ name: 'ns-1' }] } } }), ['targets.includedNamespaces: must be a list of namespace names']],
    ['an unknown operator', documented({ targets: { namespaceLabelSelector: { matchExpressions: [{ key: 'a', operator: 'Gt' }] } } }), ['matchExpressions[0].operator: "Gt" is not an operator']],
    ['In without values', documented({ targets: { namespaceLabelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } } }), ['matchExpressions[0].values: is required for In']],
    ['Exists with values', documented({ targets: { namespaceLabelSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] } } }), ['matchExpressions[0].values: must be absent for Exists']],
    ['a value twice, and an empty one', documented({ targets: { namespaceLabelSelector: { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['x', '', 'x'] }] } } }), ['values: must not hold an empty value', 'values: repeats "x"']],
    ['an expression without key', documented({ targets: { namespaceLabelSelector: { matchExpressions: [{ operator: 'Exists' }] } } }), ['matchExpressions[0].key: is required']],
  ])('refuses %s, naming the field', (_what, value, messages) => {
    const message = problemOf(value);
    for (const part of messages) expect(message).toContain(part);
  });

  it('reports every problem at once, under the generator name', () => {
    const message = problemOf(documented({ resource: resource({ resourceName: '', files: 'x' }), targets: {} }));
    expect(message.split('\n')).toEqual([
      'ResourceDistributionGenerator rdname is not valid:',
      '  resource.resourceName: is required: the name of the distributed ConfigMap or Secret',
      '  resource.files: must be a list of file paths (or key=path)',
      '  targets: is required: allNamespaces, includedNamespaces, excludedNamespaces or namespaceLabelSelector',
    ]);
  });

  it('warns about fields kruise-tools ignores as well (most likely a typo), and reads the rest', () => {
    const { config, warnings } = parseGeneratorConfig(documented({ resource: resource({ literal: ['A=b'] }), option: {} }));
    expect(warnings).toEqual([
      'functionConfig.option is not a field of ResourceDistributionGenerator (ignored; known: apiVersion, kind, metadata, resource, targets, options)',
      'resource.literal is not a field of ResourceDistributionGenerator (ignored; known: resourceKind, resourceName, type, literals, files, envs, env, resourceOptions)',
    ]);
    expect(config.resource.sources.literals).toEqual(['JAVA_HOME=/opt/java/jdk']);
  });
});
