// Conversion between the two served versions of ResourceDistribution: apps.kruise.io/v1alpha1 and
// v1beta1 (OpenKruise's storage version since it promoted the API). They say the same things; two
// fields are spelled differently. v1beta1 is the hub, which holds every field: a field v1alpha1 has
// no place for (one a later v1beta1 adds) is kept in an annotation of the v1alpha1 object and put
// back when it is converted to v1beta1, as Kubernetes does for its own APIs. No conversion loses
// anything, whichever way and however often it runs.
import { asRecord, type UnknownRecord } from './field-problem.js';
import { GROUP, KIND, type DistributionStatus, type ResourceDistribution } from './types.js';

export const V1ALPHA1 = 'v1alpha1';
export const V1BETA1 = 'v1beta1';
/** What the API server stores, and what the controller reads and writes. */
export const STORAGE_VERSION = V1BETA1;
export const SERVED_VERSIONS: readonly string[] = [V1ALPHA1, V1BETA1];

/** On an object converted to a version without a place for some of its fields: those fields, as JSON. */
export const ANNOTATION_CONVERSION = 'resource-distributor.io/conversion-preserved';

type Version = typeof V1ALPHA1 | typeof V1BETA1;
/** A field's position: object keys, and indexes into status.conditions. */
type Path = (string | number)[];
interface Preserved {
  path: Path;
  value: unknown;
}

/** The fields each version spells its own way: where, and the spelling in each. */
const RENAMES: { place: string; v1alpha1: string; v1beta1: string }[] = [
  { place: 'spec.targets', v1alpha1: 'namespaceLabelSelector', v1beta1: 'namespaceSelector' },
  { place: 'status.conditions[]', v1alpha1: 'failedNamespace', v1beta1: 'failedNamespaces' },
];

/**
 * The fields each version has at the places where the versions may differ (deeper fields are
 * the same in both). Kept equal to the CRD's schemas by a test.
 */
const COMMON_FIELDS: Record<string, readonly string[]> = {
  '': ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
  spec: ['resource', 'source', 'targets', 'writePolicy', 'imagePullSecretInjection', 'copyData', 'copyMetadata', 'syncPolicy'],
  'spec.targets': ['allNamespaces', 'includedNamespaces', 'excludedNamespaces'],
  status: ['desired', 'succeeded', 'failed', 'observedGeneration', 'conditions'],
  'status.conditions[]': ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
};

/** The fields `version` has at `place`. */
export function fieldsAt(version: Version, place: string): readonly string[] {
  const renamed = RENAMES.filter((rename) => rename.place === place).map((rename) => rename[version]);
  return [...(COMMON_FIELDS[place] ?? []), ...renamed];
}

export type ConversionResult = { ok: true; object: UnknownRecord } | { ok: false; message: string };

function versionOf(apiVersion: unknown): Version | undefined {
  if (apiVersion === `${GROUP}/${V1ALPHA1}`) return V1ALPHA1;
  if (apiVersion === `${GROUP}/${V1BETA1}`) return V1BETA1;
  return undefined;
}

/** Each place of `object` that is there, with its path (every condition for `status.conditions[]`). */
function placesOf(object: UnknownRecord): { place: string; path: Path; record: UnknownRecord }[] {
  const spec = asRecord(object.spec);
  const status = asRecord(object.status);
  const found: { place: string; path: Path; record: UnknownRecord | undefined }[] = [
    { place: '', path: [], record: object },
    { place: 'spec', path: ['spec'], record: spec },
    { place: 'spec.targets', path: ['spec', 'targets'], record: asRecord(spec?.targets) },
    { place: 'status', path: ['status'], record: status },
  ];
  const conditions = Array.isArray(status?.conditions) ? status.conditions : [];
  conditions.forEach((condition, index) => found.push({ place: 'status.conditions[]', path: ['status', 'conditions', index], record: asRecord(condition) }));
  return found.filter((entry): entry is { place: string; path: Path; record: UnknownRecord } => entry.record !== undefined);
}

/**
 * A copy of `object` down to the places where versions differ; what lies deeper (the template,
 * which may be large and deep) is shared, never changed.
 */
function copyPlaces(object: UnknownRecord): UnknownRecord {
  const copy = { ...object };
  const spec = asRecord(copy.spec);
  if (spec !== undefined) {
    const targets = asRecord(spec.targets);
    copy.spec = targets === undefined ? { ...spec } : { ...spec, targets: { ...targets } };
  }
  const status = asRecord(copy.status);
  if (status !== undefined) {
    const conditions: unknown = status.conditions;
    copy.status = Array.isArray(conditions) ? { ...status, conditions: conditions.map((c: unknown) => (asRecord(c) === undefined ? c : { ...asRecord(c) })) } : { ...status };
  }
  return copy;
}

const PLACES = new Set(['', 'spec', 'spec.targets', 'status', 'status.conditions[]']);

function placeOf(path: Path): string {
  return path.map((step) => (typeof step === 'number' ? '[]' : step)).join('.').replace(/\.\[\]/g, '[]');
}

function recordAt(object: UnknownRecord, path: Path): UnknownRecord | undefined {
  let at: unknown = object;
  for (const step of path) at = typeof step === 'number' ? (Array.isArray(at) ? at[step] : undefined) : asRecord(at)?.[step];
  return asRecord(at);
}

/** The fields an earlier conversion kept in the annotation; undefined when there is none, an Error when it is not ours to read. */
function readPreserved(object: UnknownRecord): Preserved[] | Error | undefined {
  const text = asRecord(asRecord(object.metadata)?.annotations)?.[ANNOTATION_CONVERSION];
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = typeof text === 'string' ? JSON.parse(text) : undefined;
    if (Array.isArray(parsed) && parsed.every((entry) => Array.isArray(asRecord(entry)?.path) && 'value' in (entry as object))) return parsed as Preserved[];
  } catch {
    // Said below.
  }
  return new Error(`metadata.annotations["${ANNOTATION_CONVERSION}"] is not a list of preserved fields`);
}

function writeAnnotation(object: UnknownRecord, preserved: Preserved[]): void {
  const metadata = asRecord(object.metadata) ?? {};
  const annotations = { ...asRecord(metadata.annotations) };
  if (preserved.length > 0) annotations[ANNOTATION_CONVERSION] = JSON.stringify(preserved);
  else delete annotations[ANNOTATION_CONVERSION];
  const rest = { ...metadata };
  delete rest.annotations;
  object.metadata = Object.keys(annotations).length > 0 ? { ...rest, annotations } : rest;
}

function rename(object: UnknownRecord, from: Version, to: Version): void {
  for (const { place, record } of placesOf(object)) {
    for (const spelling of RENAMES.filter((r) => r.place === place)) {
      if (!(spelling[from] in record) || spelling[to] in record) continue;
      record[spelling[to]] = record[spelling[from]];
      delete record[spelling[from]];
    }
  }
}

/** In the hub, puts back the kept fields (where their parent still is); returns those it could not. */
function restore(object: UnknownRecord, preserved: Preserved[], to: Version): Preserved[] {
  if (to !== V1BETA1) return preserved;
  return preserved.filter(({ path, value }) => {
    const key = path.at(-1);
    // Only where a conversion takes fields from: deeper records are shared with the input.
    const parent = PLACES.has(placeOf(path.slice(0, -1))) ? recordAt(object, path.slice(0, -1)) : undefined;
    if (typeof key !== 'string' || parent === undefined) return true;
    if (!(key in parent)) parent[key] = value;
    return false;
  });
}

/** Out of the spoke (v1alpha1), takes the fields it has no place for, to be kept in the annotation. */
function takeUnplaced(object: UnknownRecord, to: Version): Preserved[] {
  if (to !== V1ALPHA1) return [];
  const taken: Preserved[] = [];
  for (const { place, path, record } of placesOf(object)) {
    const known = fieldsAt(V1ALPHA1, place);
    for (const key of Object.keys(record).filter((field) => !known.includes(field))) {
      taken.push({ path: [...path, key], value: record[key] });
      delete record[key];
    }
  }
  return taken;
}

/**
 * `object` (a ResourceDistribution in either version) in `desiredApiVersion`. Only the fields
 * spelled differently change, and the annotation that keeps what the other version cannot hold;
 * the rest of metadata is never touched (the API server refuses conversions that change it).
 */
export function convertDistribution(object: UnknownRecord, desiredApiVersion: string): ConversionResult {
  const from = versionOf(object.apiVersion);
  const to = versionOf(desiredApiVersion);
  if (to === undefined) return { ok: false, message: `cannot convert to ${desiredApiVersion}: only ${SERVED_VERSIONS.map((v) => `${GROUP}/${v}`).join(' and ')} are served` };
  if (from === undefined) return { ok: false, message: `cannot convert from apiVersion ${JSON.stringify(object.apiVersion)}` };
  if (from === to) return { ok: true, object };
  const converted = copyPlaces(object);
  const kept = readPreserved(converted);
  if (kept instanceof Error) return { ok: false, message: kept.message };
  converted.apiVersion = desiredApiVersion;
  rename(converted, from, to);
  const stillKept = restore(converted, kept ?? [], to);
  const preserved = [...stillKept, ...takeUnplaced(converted, to)];
  if (kept !== undefined || preserved.length > 0) writeAnnotation(converted, preserved);
  return { ok: true, object: converted };
}

/** The version the domain's model spells its fields in (namespaceLabelSelector, failedNamespace). */
const MODEL_API_VERSION = `${GROUP}/${V1ALPHA1}`;

/**
 * A distribution as the API server sent it, in either version, as the domain's model: the
 * controller and admission work on one form, whatever version the cluster stores or the author wrote.
 */
export function distributionModel(object: UnknownRecord): ResourceDistribution {
  const converted = convertDistribution(object, MODEL_API_VERSION);
  return (converted.ok ? converted.object : object) as unknown as ResourceDistribution;
}

/** A status of the model in `version`'s words (failedNamespaces in v1beta1). */
export function statusInVersion(status: DistributionStatus, version: string): UnknownRecord {
  const converted = convertDistribution({ apiVersion: MODEL_API_VERSION, kind: KIND, status }, `${GROUP}/${version}`);
  return asRecord(converted.ok ? converted.object.status : status) ?? {};
}

const WORDS = RENAMES.map((rename) => ({ model: new RegExp(`\\b${rename.v1alpha1}\\b`, 'g'), v1beta1: rename.v1beta1 }));

/** A message about the model in the words of `version`: its fields as an author of that version writes them. */
export function inVersionWords(text: string, version: string): string {
  if (version !== V1BETA1) return text;
  return WORDS.reduce((said, word) => said.replace(word.model, word.v1beta1), text);
}
