// The largest ResourceDistribution there can be, built to a byte budget: every list at the CRD's
// maxItems, every name, key and value at its maxLength, then selector values until the JSON
// reaches the budget. The CRD bounds nothing else (spec.resource is free-form), so what finally
// caps a distribution is a request size, and there are two:
// - what a webhook can be asked about: the API server accepts requests up to 3 MiB, and the
//   product reads admission reviews up to its body limit (RD_BODY_LIMIT, 8Mi by default);
// - what a cluster can store: etcd refuses writes over its --max-request-bytes (1.5 MiB by
//   default, which the local control plane keeps), the status the product writes included.
// Bounds are read from the CRD itself, so that a changed bound changes what "largest" means here.
import { type LabelSelectorRequirement, type Resource, type ResourceDistribution } from '../src/domain/types.js';
import { loadCrdSchema } from '../src/k8s/crd-schema.js';

/** The API server's limit on a request body: no CREATE review it sends can carry more. */
export const API_SERVER_REQUEST_BYTES = 3 * 2 ** 20;
/** etcd's default --max-request-bytes; test/control-plane/server-args.ts does not change it. */
export const ETCD_REQUEST_BYTES = 1.5 * 2 ** 20;
/**
 * Room left under etcd's limit for what the API server adds to a created object (uid, timestamps,
 * managedFields) and the status the product writes (six conditions, Ready and Stalled, no
 * namespace lists when every target exists): a few KiB measured, kept generous.
 */
export const STORAGE_HEADROOM_BYTES = 16 * 2 ** 10;
/** Keys in both data and stringData of the admission template (the quadratic check of b459995 froze on these). */
export const SHARED_KEYS = 16_384;
/** Label present on every namespace (set by the API server); the selector pins its targets with it. */
const NAME_LABEL = 'kubernetes.io/metadata.name';

export interface CrdBounds {
  /** maxItems of includedNamespaces.list and excludedNamespaces.list. */
  listItems: number;
  nameLength: number;
  matchLabels: number;
  expressions: number;
  valuesPerExpression: number;
  keyLength: number;
  valueLength: number;
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode;
  maxItems?: number;
  maxLength?: number;
  maxProperties?: number;
}

/** `a.b[].c`: properties, with `[]` for array items. */
function at(root: SchemaNode, path: string): SchemaNode {
  let node: SchemaNode | undefined = root;
  for (const part of path.split('.')) {
    const items = part.endsWith('[]');
    node = node?.properties?.[items ? part.slice(0, -2) : part];
    if (items) node = node?.items;
  }
  if (node === undefined) throw new Error(`the CRD schema has no ${path}`);
  return node;
}

function bound(value: number | undefined, what: string): number {
  // Unbounded, "largest" would only be the request size: the bench would have to say so.
  if (value === undefined) throw new Error(`the CRD no longer bounds ${what}: decide what the largest distribution is`);
  return value;
}

export function crdBounds(): CrdBounds {
  const targets = at(loadCrdSchema(), 'spec.targets');
  const list = (field: string): SchemaNode => at(targets, `${field}.list`);
  const selector = at(targets, 'namespaceLabelSelector');
  const expression = at(selector, 'matchExpressions[]');
  return {
    listItems: Math.min(bound(list('includedNamespaces').maxItems, 'includedNamespaces'), bound(list('excludedNamespaces').maxItems, 'excludedNamespaces')),
    nameLength: bound(at(targets, 'includedNamespaces.list[].name').maxLength, 'namespace names'),
    matchLabels: bound(at(selector, 'matchLabels').maxProperties, 'matchLabels'),
    expressions: bound(at(selector, 'matchExpressions').maxItems, 'matchExpressions'),
    valuesPerExpression: bound(at(expression, 'values').maxItems, 'expression values'),
    keyLength: bound(at(expression, 'key').maxLength, 'expression keys'),
    valueLength: bound(at(selector, 'matchLabels').additionalProperties?.maxLength, 'label values'),
  };
}

/** `prefix-00042-xxx...`: a valid DNS label (and label value) of exactly `length` characters. */
function padded(prefix: string, index: number, length: number): string {
  return `${prefix}-${String(index).padStart(5, '0')}-`.padEnd(length, 'x');
}

/** A label key of `length` characters: a dotted DNS-subdomain prefix, '/', a 63-character name. */
function longKey(index: number, length: number): string {
  const name = padded('key', index, 63);
  const prefixLength = Math.min(253, length - name.length - 1);
  const prefix = `k${index}.`.padEnd(prefixLength - 'example.io'.length - 1, 'x');
  return `${prefix}.example.io/${name}`;
}

export interface Shape {
  includedEntries: number;
  excludedEntries: number;
  matchLabels: number;
  expressions: number;
  /** Expression values, over all expressions. */
  values: number;
  /** Keys in both data and stringData (0 when the template is a small ConfigMap). */
  sharedKeys: number;
  /** The JSON that carries it (the admission review, or the distribution as created). */
  bytes: number;
}

/**
 * Adds values (of the bound's length) to `fillable` expressions, spread evenly, until `encode()`
 * reaches `budget` bytes; returns the final encoding. Encodings are ASCII: length = bytes.
 */
function fillValues(fillable: LabelSelectorRequirement[], bounds: CrdBounds, budget: number, encode: () => string): string {
  let text = encode();
  const perValue = bounds.valueLength + 3; // quotes and comma
  let room = Math.floor((budget - text.length) / perValue);
  for (let round = 0; room > 0; round++) {
    const open = fillable.filter((e) => (e.values?.length ?? 0) < bounds.valuesPerExpression);
    if (open.length === 0) break;
    const each = Math.max(1, Math.floor(room / open.length));
    for (const [i, expression] of open.entries()) {
      const values = expression.values ?? [];
      const add = Math.min(each, bounds.valuesPerExpression - values.length, room);
      for (let k = 0; k < add; k++) values.push(padded(`v${round}-${i}`, values.length, bounds.valueLength));
      expression.values = values;
      room -= add;
    }
  }
  text = encode();
  // The estimate is exact but for the first value of a list (no comma); trim until it fits.
  for (let i = 0; text.length > budget; i = (i + 1) % fillable.length) {
    fillable[i]?.values?.pop();
    text = encode();
  }
  // In and NotIn need a value: a budget too small for one each would build an invalid selector.
  if (fillable.some((e) => (e.values?.length ?? 0) === 0)) throw new Error(`${budget} bytes leave no room for a value per expression`);
  return text;
}

function countValues(expressions: readonly LabelSelectorRequirement[]): number {
  return expressions.reduce((sum, e) => sum + (e.values?.length ?? 0), 0);
}

/**
 * A Secret whose keys are all in both data and stringData (stringData wins, as the API server
 * merges them): 16 bytes per value, far within the 1 MiB a Secret may hold, so that the bytes go
 * to keys rather than values.
 */
function sharedKeysSecret(name: string, keys: number): Resource {
  const data: Record<string, string> = {};
  const stringData: Record<string, string> = {};
  for (let i = 0; i < keys; i++) {
    const key = `shared-${String(i).padStart(5, '0')}`;
    data[key] = Buffer.from(`old-${String(i).padStart(8, '0')}`).toString('base64');
    stringData[key] = `new-${String(i).padStart(12, '0')}`;
  }
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data, stringData };
}

/**
 * The largest distribution an admission review can carry: both name lists full of missing
 * namespaces (admission only warns about them), every matchLabels entry and expression at its
 * longest, the shared-keys Secret, then expression values up to `budget` bytes of `wrap(rd)`.
 */
export function largestForAdmission(bounds: CrdBounds, budget: number, wrap: (rd: ResourceDistribution) => string): { body: string; shape: Shape } {
  const name = 'bench-largest-admission';
  const expressions: LabelSelectorRequirement[] = Array.from({ length: bounds.expressions }, (_, i) => ({
    key: longKey(i, bounds.keyLength),
    operator: i % 2 === 0 ? 'In' : 'NotIn',
    values: [],
  }));
  const rd: ResourceDistribution = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ResourceDistribution',
    metadata: { name },
    spec: {
      resource: sharedKeysSecret(name, SHARED_KEYS),
      targets: {
        includedNamespaces: { list: Array.from({ length: bounds.listItems }, (_, i) => ({ name: padded('included', i, bounds.nameLength) })) },
        excludedNamespaces: { list: Array.from({ length: bounds.listItems }, (_, i) => ({ name: padded('excluded', i, bounds.nameLength) })) },
        namespaceLabelSelector: {
          matchLabels: Object.fromEntries(Array.from({ length: bounds.matchLabels }, (_, i) => [longKey(100 + i, bounds.keyLength), padded('label', i, bounds.valueLength)])),
          matchExpressions: expressions,
        },
      },
    },
  };
  const body = fillValues(expressions, bounds, budget, () => wrap(rd));
  const shape = { includedEntries: bounds.listItems, excludedEntries: bounds.listItems, matchLabels: bounds.matchLabels, expressions: expressions.length, values: countValues(expressions), sharedKeys: SHARED_KEYS, bytes: body.length };
  return { body, shape };
}

/**
 * The largest distribution a cluster can store that still converges over `targets` (existing
 * namespaces): every one of its 10,000 included entries names one of them (repeated: the API and
 * the product accept duplicates), because an included namespace that does not exist counts in
 * `desired` and is never `succeeded`; 10,000 excluded names (missing namespaces, harmless there);
 * a selector over the same targets (`labels`, and the metadata.name label In the targets) whose
 * other expressions are NotIn keys no namespace has, filled with values up to the storage budget.
 * The name and template are `base`'s: this measures the targets, not the size of the copies.
 */
export function largestStorable(
  bounds: CrdBounds,
  base: ResourceDistribution,
  labels: Record<string, string>,
  targets: readonly string[],
): { rd: ResourceDistribution; shape: Shape } {
  const fillable: LabelSelectorRequirement[] = Array.from({ length: bounds.expressions - 1 }, (_, i) => ({ key: longKey(i, bounds.keyLength), operator: 'NotIn', values: [] }));
  const expressions = [{ key: NAME_LABEL, operator: 'In' as const, values: [...targets] }, ...fillable];
  const rd: ResourceDistribution = {
    ...base,
    spec: {
      ...base.spec,
      targets: {
        includedNamespaces: { list: Array.from({ length: bounds.listItems }, (_, i) => ({ name: targets[i % targets.length] ?? '' })) },
        excludedNamespaces: { list: Array.from({ length: bounds.listItems }, (_, i) => ({ name: padded('excluded', i, bounds.nameLength) })) },
        namespaceLabelSelector: { matchLabels: labels, matchExpressions: expressions },
      },
    },
  };
  const bytes = fillValues(fillable, bounds, ETCD_REQUEST_BYTES - STORAGE_HEADROOM_BYTES, () => JSON.stringify(rd)).length;
  const shape = {
    includedEntries: bounds.listItems,
    excludedEntries: bounds.listItems,
    matchLabels: Object.keys(labels).length,
    expressions: expressions.length,
    values: countValues(expressions),
    sharedKeys: 0,
    bytes,
  };
  return { rd, shape };
}
