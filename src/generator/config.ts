// The ResourceDistributionGenerator config of OpenKruise's kruise-tools, read as it reads it: a
// kustomize exec function whose functionConfig names the ResourceDistribution (metadata.name),
// the Secret or ConfigMap it distributes (resource: kind, name, literals, files, envs, options)
// and its targets as plain lists of namespace names. Every problem is reported at once.
import { asRecord, quote, type FieldProblem, type UnknownRecord } from '../domain/field-problem.js';
import type { LabelSelector, LabelSelectorOperator, LabelSelectorRequirement } from '../domain/types.js';

export const GENERATOR_KIND = 'ResourceDistributionGenerator';

/** A config or a source the generator cannot use; its message says what and where. */
export class GeneratorError extends Error {
  override readonly name = 'GeneratorError';
}

export function problemsError(what: string, problems: readonly FieldProblem[]): GeneratorError {
  return new GeneratorError([what, ...problems.map((problem) => `  ${problem.path}: ${problem.message}`)].join('\n'));
}

/** kustomize's generatorOptions, as far as they apply: labels, annotations, immutable. */
export interface MetadataOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  immutable: boolean;
}

/** Where the data comes from, in kustomize's configMapGenerator syntax. */
export interface KeyValueSources {
  /** `KEY=VALUE` */
  literals: string[];
  /** `path` (keyed by its base name) or `key=path` */
  files: string[];
  /** env files: `KEY=VALUE` lines */
  envs: string[];
}

export interface GeneratorTargets {
  allNamespaces: boolean;
  includedNamespaces?: string[];
  excludedNamespaces?: string[];
  namespaceLabelSelector?: LabelSelector;
}

export interface GeneratorConfig {
  /** The ResourceDistribution's name. */
  name: string;
  resource: {
    kind: 'ConfigMap' | 'Secret';
    name: string;
    /** A Secret's type (Opaque when absent). */
    type?: string;
    sources: KeyValueSources;
    options: MetadataOptions;
  };
  /** For the ResourceDistribution itself. */
  options: MetadataOptions;
  targets: GeneratorTargets;
}

export interface ParsedConfig {
  config: GeneratorConfig;
  /** Fields that kruise-tools would ignore too: most likely a typo. */
  warnings: string[];
}

const KNOWN_FIELDS = {
  top: ['apiVersion', 'kind', 'metadata', 'resource', 'targets', 'options'],
  resource: ['resourceKind', 'resourceName', 'type', 'literals', 'files', 'envs', 'env', 'resourceOptions'],
  options: ['labels', 'annotations', 'immutable', 'disableNameSuffixHash'],
  targets: ['allNamespaces', 'includedNamespaces', 'excludedNamespaces', 'namespaceLabelSelector'],
  selector: ['matchLabels', 'matchExpressions'],
  expression: ['key', 'operator', 'values'],
} as const;

const OPERATORS: readonly LabelSelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** Reads one config: the problems and warnings it finds, each with the field's path. */
class Reader {
  readonly problems: FieldProblem[] = [];
  readonly warnings: string[] = [];

  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  record(value: unknown, path: string, known: readonly string[]): UnknownRecord | undefined {
    if (value === undefined || value === null) return undefined;
    const record = asRecord(value);
    if (record === undefined) {
      this.problem(path, 'must be a map');
      return undefined;
    }
    for (const key of Object.keys(record).filter((field) => !known.includes(field))) {
      this.warnings.push(`${path}.${key} is not a field of ${GENERATOR_KIND} (ignored; known: ${known.join(', ')})`);
    }
    return record;
  }

  string(value: unknown, path: string): string | undefined {
    if (value === undefined || value === null) return undefined;
    // A scalar read into a Go string field keeps its text: `true` is "true" (numbers keep their
    // source text already, see resource-list.ts).
    if (typeof value === 'string' || typeof value === 'boolean') return String(value);
    this.problem(path, `${quote(value)} must be a string`);
    return undefined;
  }

  required(value: unknown, path: string, what: string): string {
    const text = this.string(value, path);
    if (text === undefined || text === '') this.problem(path, `is required: ${what}`);
    return text ?? '';
  }

  boolean(value: unknown, path: string): boolean {
    if (value === undefined || value === null) return false;
    if (typeof value === 'boolean') return value;
    this.problem(path, `${quote(value)} must be true or false`);
    return false;
  }

  strings(value: unknown, path: string, what: string): string[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) {
      this.problem(path, `must be a list of ${what}`);
      return undefined;
    }
    return value.flatMap((item, i) => {
      const text = this.string(item, `${path}[${i}]`);
      return text === undefined ? [] : [text];
    });
  }

  /** A map of strings (a null value is the empty string, as in Go). */
  stringMap(value: unknown, path: string): Record<string, string> | undefined {
    if (value === undefined || value === null) return undefined;
    const record = asRecord(value);
    if (record === undefined) {
      this.problem(path, 'must be a map of strings');
      return undefined;
    }
    const map: Record<string, string> = {};
    for (const [key, item] of Object.entries(record)) {
      const text = item === null ? '' : this.string(item, `${path}.${key}`);
      if (text !== undefined) map[key] = text;
    }
    return map;
  }
}

/** The object without its undefined fields. */
function definedOnly<T extends object>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as T;
}

function readSelector(reader: Reader, value: unknown): LabelSelector | undefined {
  const path = 'targets.namespaceLabelSelector';
  const record = reader.record(value, path, KNOWN_FIELDS.selector);
  if (record === undefined) return undefined;
  const selector: LabelSelector = {};
  const matchLabels = reader.stringMap(record.matchLabels, `${path}.matchLabels`);
  if (matchLabels !== undefined) selector.matchLabels = matchLabels;
  const expressions = record.matchExpressions;
  if (expressions !== undefined && expressions !== null && !Array.isArray(expressions)) reader.problem(`${path}.matchExpressions`, 'must be a list');
  else if (Array.isArray(expressions)) {
    const read = expressions.map((item, i) => readExpression(reader, item, `${path}.matchExpressions[${i}]`));
    // Sorted by key, as kruise-tools writes them (stable: expressions of one key keep their order).
    selector.matchExpressions = read.filter((item) => item !== undefined).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
  return selector;
}

function readOptions(reader: Reader, value: unknown, path: string): MetadataOptions {
  const record = reader.record(value, path, KNOWN_FIELDS.options);
  // disableNameSuffixHash is accepted and changes nothing: generated names never get a hash suffix.
  reader.boolean(record?.disableNameSuffixHash, `${path}.disableNameSuffixHash`);
  return definedOnly<MetadataOptions>({
    immutable: reader.boolean(record?.immutable, `${path}.immutable`),
    labels: reader.stringMap(record?.labels, `${path}.labels`),
    annotations: reader.stringMap(record?.annotations, `${path}.annotations`),
  });
}

function readKind(reader: Reader, value: unknown): 'ConfigMap' | 'Secret' {
  const kind = reader.required(value, 'resource.resourceKind', 'ConfigMap or Secret');
  if (kind === 'ConfigMap' || kind === 'Secret') return kind;
  if (kind !== '') reader.problem('resource.resourceKind', `${quote(kind)} is not supported: ConfigMap or Secret`);
  return 'ConfigMap';
}

function readSources(reader: Reader, resource: UnknownRecord | undefined): KeyValueSources {
  const envs = reader.strings(resource?.envs, 'resource.envs', 'env file paths') ?? [];
  // The older singular form of envs, which kustomize merges into envs.
  const env = reader.string(resource?.env, 'resource.env');
  return {
    literals: reader.strings(resource?.literals, 'resource.literals', 'KEY=VALUE literals') ?? [],
    files: reader.strings(resource?.files, 'resource.files', 'file paths (or key=path)') ?? [],
    envs: env === undefined || env === '' ? envs : [...envs, env],
  };
}

function readResource(reader: Reader, value: unknown): GeneratorConfig['resource'] {
  const record = reader.record(value, 'resource', KNOWN_FIELDS.resource);
  if (value === undefined || value === null) reader.problem('resource', 'is required: resourceKind, resourceName and the data (literals, files, envs)');
  const kind = readKind(reader, record?.resourceKind);
  const resource: GeneratorConfig['resource'] = {
    kind,
    name: reader.required(record?.resourceName, 'resource.resourceName', 'the name of the distributed ConfigMap or Secret'),
    sources: readSources(reader, record),
    options: readOptions(reader, record?.resourceOptions, 'resource.resourceOptions'),
  };
  const type = reader.string(record?.type, 'resource.type');
  if (type !== undefined && type !== '' && kind === 'Secret') resource.type = type;
  return resource;
}

/** In and NotIn need values: none empty, none twice. */
function checkValues(reader: Reader, values: readonly string[] | undefined, operator: LabelSelectorOperator, path: string): void {
  if (values === undefined || values.length === 0) reader.problem(path, `is required for ${operator}`);
  if (values?.includes('')) reader.problem(path, 'must not hold an empty value');
  const repeated = values?.find((item, i) => values.indexOf(item) !== i);
  if (repeated !== undefined) reader.problem(path, `repeats ${quote(repeated)}`);
}

/** One matchExpressions entry, checked as kruise-tools checks it; its values sorted. */
function readExpression(reader: Reader, value: unknown, path: string): LabelSelectorRequirement | undefined {
  const record = reader.record(value, path, KNOWN_FIELDS.expression);
  const key = reader.required(record?.key, `${path}.key`, 'the label key');
  const operator = reader.string(record?.operator, `${path}.operator`) as LabelSelectorOperator | undefined;
  if (operator === undefined || !OPERATORS.includes(operator)) {
    reader.problem(`${path}.operator`, `${quote(operator ?? '')} is not an operator: ${OPERATORS.join(', ')}`);
    return undefined;
  }
  const values = reader.strings(record?.values, `${path}.values`, 'label values');
  if (operator === 'Exists' || operator === 'DoesNotExist') {
    if (values !== undefined) reader.problem(`${path}.values`, `must be absent for ${operator}`);
    return { key, operator };
  }
  checkValues(reader, values, operator, `${path}.values`);
  return { key, operator, values: [...(values ?? [])].sort() };
}

function readTargets(reader: Reader, value: unknown): GeneratorTargets {
  const record = reader.record(value, 'targets', KNOWN_FIELDS.targets);
  const targets = definedOnly<GeneratorTargets>({
    allNamespaces: reader.boolean(record?.allNamespaces, 'targets.allNamespaces'),
    includedNamespaces: reader.strings(record?.includedNamespaces, 'targets.includedNamespaces', 'namespace names'),
    excludedNamespaces: reader.strings(record?.excludedNamespaces, 'targets.excludedNamespaces', 'namespace names'),
    namespaceLabelSelector: readSelector(reader, record?.namespaceLabelSelector),
  });
  const selector = targets.namespaceLabelSelector;
  const selects = selector?.matchLabels !== undefined || selector?.matchExpressions !== undefined;
  if (!targets.allNamespaces && targets.includedNamespaces === undefined && targets.excludedNamespaces === undefined && !selects) {
    reader.problem('targets', 'is required: allNamespaces, includedNamespaces, excludedNamespaces or namespaceLabelSelector');
  }
  return targets;
}

/** The generator config kustomize passes as functionConfig; throws a GeneratorError listing every problem. */
export function parseGeneratorConfig(value: unknown): ParsedConfig {
  const reader = new Reader();
  const record = reader.record(value, 'functionConfig', KNOWN_FIELDS.top);
  if (record?.kind !== GENERATOR_KIND) {
    throw new GeneratorError(`expected a ${GENERATOR_KIND} as the function config, got ${quote(record?.kind ?? value ?? 'nothing')}`);
  }
  const metadata = asRecord(record.metadata);
  const config: GeneratorConfig = {
    name: reader.required(metadata?.name, 'metadata.name', 'the name of the ResourceDistribution'),
    resource: readResource(reader, record.resource),
    options: readOptions(reader, record.options, 'options'),
    targets: readTargets(reader, record.targets),
  };
  const name = config.name === '' ? '' : ` ${config.name}`;
  if (reader.problems.length > 0) throw problemsError(`${GENERATOR_KIND}${name} is not valid:`, reader.problems);
  return { config, warnings: reader.warnings };
}
