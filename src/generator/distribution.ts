// The ResourceDistribution a generator config stands for, as kruise-tools builds it: the Secret or
// ConfigMap in spec.resource (names as given, never a hash suffix), the plain name lists turned
// into the API's `list: [{name}]`. The distributed object is checked by the rules admission
// applies, so that what the cluster would refuse fails the build instead.
import type { FieldProblem } from '../domain/field-problem.js';
import { API_VERSION, KIND, type LabelSelector, type NamespaceNameList, type Resource, type Targets } from '../domain/types.js';
import { validateResource } from '../domain/validate-resource.js';
import { problemsError, type GeneratorConfig, type GeneratorTargets, type MetadataOptions } from './config.js';
import { base64Lines, collectKeyValues, configMapValue } from './key-values.js';

export interface GeneratedDistribution {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { resource: Resource; targets: Targets };
}

function metadata(name: string, options: MetadataOptions): GeneratedDistribution['metadata'] {
  return {
    name,
    ...(options.labels === undefined ? {} : { labels: options.labels }),
    ...(options.annotations === undefined ? {} : { annotations: options.annotations }),
  };
}

const sortedKeys = <T>(map: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

function resourceOf(config: GeneratorConfig, contents: ReadonlyMap<string, Buffer>): Resource {
  const { kind, name, type, sources, options } = config.resource;
  const pairs = collectKeyValues(sources, contents, `${kind} ${name}`);
  const resource: Resource = { apiVersion: 'v1', kind, metadata: metadata(name, options) };
  if (kind === 'Secret') {
    resource.type = type ?? 'Opaque';
    resource.data = sortedKeys(Object.fromEntries(pairs.map((pair) => [pair.key, base64Lines(pair.value)])));
  } else {
    const maps: Record<'data' | 'binaryData', Record<string, string>> = { data: {}, binaryData: {} };
    for (const pair of pairs) {
      const { field, text } = configMapValue(pair.value);
      maps[field][pair.key] = text;
    }
    for (const field of ['data', 'binaryData'] as const) {
      if (Object.keys(maps[field]).length > 0) resource[field] = sortedKeys(maps[field]);
    }
  }
  if (options.immutable) resource.immutable = true;
  return resource;
}

const nameList = (names: readonly string[]): NamespaceNameList => ({ list: names.map((name) => ({ name })) });

function targetsOf(targets: GeneratorTargets): Targets {
  const result: Targets = {};
  if (targets.allNamespaces) result.allNamespaces = true;
  if (targets.excludedNamespaces !== undefined) result.excludedNamespaces = nameList(targets.excludedNamespaces);
  if (targets.includedNamespaces !== undefined) result.includedNamespaces = nameList(targets.includedNamespaces);
  const selector = targets.namespaceLabelSelector;
  if (selector?.matchLabels !== undefined || selector?.matchExpressions !== undefined) {
    result.namespaceLabelSelector = {
      ...(selector.matchExpressions === undefined ? {} : { matchExpressions: selector.matchExpressions }),
      ...(selector.matchLabels === undefined ? {} : { matchLabels: sortedKeys(selector.matchLabels) }),
    } satisfies LabelSelector;
  }
  return result;
}

/**
 * The ResourceDistribution of a parsed config, its data from `contents` (each file the config
 * names, by the path written in it). Throws a GeneratorError for a key given twice, a source that
 * is not valid, or a Secret or ConfigMap the cluster would refuse.
 */
export function buildDistribution(config: GeneratorConfig, contents: ReadonlyMap<string, Buffer>): GeneratedDistribution {
  const resource = resourceOf(config, contents);
  const problems: FieldProblem[] = validateResource(resource, []);
  if (problems.length > 0) {
    throw problemsError(`the ${resource.kind} ${config.resource.name} of ResourceDistribution ${config.name} would be refused:`, problems);
  }
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: metadata(config.name, config.options),
    spec: { resource, targets: targetsOf(config.targets) },
  };
}
