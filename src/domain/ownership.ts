// Who owns a same-named object in a target namespace, and whether our copy drifted.
// Re-exported by copy.ts (the contract's module); split out to keep files small.
import { SERVED_VERSIONS } from './conversion.js';
import { hashResource } from './hash.js';
import { isCoreDataKind } from './kinds.js';
import { LEGACY_SOURCE_ANNOTATION } from './object-sync.js';
import { desiredView } from './render.js';
import {
  ANNOTATION_ADOPT,
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_TEMPLATE_METADATA,
  ANNOTATION_TIMESTAMP,
  FORBIDDEN_SECRET_TYPES,
  GROUP,
  KIND,
  type ConflictReason,
  type OwnerReference,
  type Resource,
  type ResolvedDistribution,
  type StoredForm,
  type ResourceDistribution,
} from './types.js';

export type Classification = { kind: 'ours' } | { kind: 'adoptable' } | { kind: 'conflict'; reason: ConflictReason };

export function isForbiddenSecretType(type: string | undefined): boolean {
  return type !== undefined && FORBIDDEN_SECRET_TYPES.includes(type);
}

export function controllerOf(object: Resource): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

const GROUP_PREFIX = `${GROUP}/`;
const SERVED_API_VERSIONS = SERVED_VERSIONS.map((version) => `${GROUP}/${version}`);

/** Any version of our group counts: the name is what identifies a cluster-scoped distribution. */
export function isDistributionRef(ref: OwnerReference, name?: string): boolean {
  return ref.kind === KIND && (ref.apiVersion === GROUP || ref.apiVersion.startsWith(GROUP_PREFIX)) && (name === undefined || ref.name === name);
}

/**
 * Controlled by this very distribution: its controller reference names it and carries its uid.
 * Only such an object may be deleted where the distribution no longer targets: a copy without
 * that reference was orphaned on purpose (deletion with propagation Orphan) or belongs to an
 * earlier distribution of the same name, and the author of this one may have no rights there.
 */
export function isControlledBy(rd: ResourceDistribution, object: Resource): boolean {
  // An ObjectSync's copies: the distribution's name is unique to that ObjectSync (uid) and destination name.
  if (rd.origin !== undefined) return controllerOf(object) === undefined && object.metadata.annotations?.[ANNOTATION_FROM] === rd.metadata.name;
  const ref = controllerOf(object);
  return ref !== undefined && isDistributionRef(ref, rd.metadata.name) && rd.metadata.uid !== undefined && ref.uid === rd.metadata.uid;
}

/** The object is controlled by a different ResourceDistribution (taking it over would start a tug of war). */
export function isControlledByOtherDistribution(rd: ResourceDistribution, object: Resource): boolean {
  const ref = controllerOf(object);
  return ref !== undefined && isDistributionRef(ref) && ref.name !== rd.metadata.name;
}

/** A copy k8s-object-syncer made of the same source, for the ObjectSync this distribution stands for. */
function isLegacyCopy(rd: ResourceDistribution, existing: Resource): boolean {
  const source = rd.spec.source;
  return rd.origin !== undefined && source !== undefined && existing.metadata.annotations?.[LEGACY_SOURCE_ANNOTATION] === `${source.namespace}/${source.name}`;
}

/**
 * Explicit consent by whoever owns the object wins over any other claim on it. An ObjectSync's
 * distributions have generated names: consent names the ObjectSync, `<namespace>/<name>`; and
 * k8s-object-syncer's own copies of the same source are taken over as they are.
 */
function consents(rd: ResourceDistribution, existing: Resource): boolean {
  const adopt = existing.metadata.annotations?.[ANNOTATION_ADOPT];
  if (adopt === (rd.origin === undefined ? rd.metadata.name : `${rd.origin.namespace}/${rd.origin.name}`)) return true;
  return isLegacyCopy(rd, existing) && controllerOf(existing) === undefined;
}

export function classifyExisting(rd: ResourceDistribution, existing: Resource): Classification {
  if (existing.kind === 'Secret' && isForbiddenSecretType(existing.type)) {
    return { kind: 'conflict', reason: 'forbidden-type' };
  }
  const name = rd.metadata.name;
  const controller = controllerOf(existing);
  // A controller reference to an earlier distribution of the same name (stale uid) is still
  // ours: the update that follows points it at the current one.
  const controlledByUs = controller === undefined || isDistributionRef(controller, name);
  const annotations = existing.metadata.annotations ?? {};
  const from = annotations[ANNOTATION_FROM];
  if (from === name && controlledByUs) return { kind: 'ours' };
  if (consents(rd, existing)) return { kind: 'adoptable' };
  if (from !== undefined && from !== name) return { kind: 'conflict', reason: 'from-changed' };
  if (!controlledByUs) return { kind: 'conflict', reason: 'owned-by-other' };
  return { kind: 'conflict', reason: 'foreign-object' };
}

type StringMap = Record<string, string> | undefined;

export function mapsEqual(a: StringMap, b: StringMap): boolean {
  const left = Object.entries(a ?? {});
  const right = b ?? {};
  return left.length === Object.keys(right).length && left.every(([key, value]) => right[key] === value);
}

function includesAll(actual: StringMap, wanted: StringMap, ignore: readonly string[] = []): boolean {
  return Object.entries(wanted ?? {}).every(([key, value]) => ignore.includes(key) || actual?.[key] === value);
}

/** The API server defaults a Secret's type to Opaque; a ConfigMap has none. */
export function effectiveType(object: Resource): string | undefined {
  return object.kind === 'Secret' ? (object.type ?? 'Opaque') : object.type;
}

/** Fields that are not content: identity, metadata (compared on its own), and what the server reports. */
const NOT_CONTENT = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/**
 * Every field `wanted` sets holds the same value in `actual`; fields only `actual` has are the API
 * server's defaults (a NetworkPolicy's policyTypes, a port's protocol) and not ours to compare.
 * Lists must have the same length, item by item.
 */
export function contains(actual: unknown, wanted: unknown): boolean {
  if (wanted === null || typeof wanted !== 'object') return actual === wanted;
  if (Array.isArray(wanted)) {
    return Array.isArray(actual) && actual.length === wanted.length && wanted.every((item, i) => contains(actual[i], item));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const held = actual as Record<string, unknown>;
  return Object.entries(wanted).every(([key, value]) => value === undefined || contains(held[key], value));
}

/** The same value, whole: a field or an item only one side has is a difference. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  const left = Object.entries(a).filter(([, value]) => value !== undefined);
  const right = b as Record<string, unknown>;
  return left.length === Object.values(right).filter((value) => value !== undefined).length && left.every(([key, value]) => sameValue(right[key], value));
}

/** Every content field of either object holds the same value in the other. */
export function sameContent(a: Resource, b: Resource): boolean {
  for (const field of new Set([...Object.keys(a), ...Object.keys(b)])) if (!NOT_CONTENT.has(field) && !sameValue(a[field], b[field])) return false;
  return true;
}

/**
 * The content of a Secret or ConfigMap is compared whole (a key someone added is drift); that of
 * any other kind whole against what the API server stores of the template (`stored`) when that is
 * known, else by the fields the template sets.
 */
export function contentEqual(desired: Resource, existing: Resource, stored?: StoredForm): boolean {
  if (!isCoreDataKind(desired.apiVersion, desired.kind)) {
    if (stored !== undefined && !stored.storedOtherwiseIn.has(existing.metadata.namespace ?? '')) return sameContent(stored.object, existing);
    return Object.entries(desired).every(([field, value]) => NOT_CONTENT.has(field) || contains(existing[field], value));
  }
  return (
    mapsEqual(desired.data, existing.data) &&
    mapsEqual(desired.binaryData, existing.binaryData) &&
    effectiveType(desired) === effectiveType(existing) &&
    (desired.immutable ?? false) === (existing.immutable ?? false)
  );
}

function controllerRefCurrent(rd: ResourceDistribution, existing: Resource): boolean {
  const ref = controllerOf(existing);
  if (rd.origin !== undefined) return ref === undefined;
  return (
    ref !== undefined &&
    isDistributionRef(ref, rd.metadata.name) &&
    // Either served version names the same owner (OpenKruise's later releases write v1beta1): no rewrite for it.
    SERVED_API_VERSIONS.includes(ref.apiVersion) &&
    (rd.metadata.uid === undefined || ref.uid === rd.metadata.uid) &&
    ref.blockOwnerDeletion === true
  );
}

/**
 * No drift in what we own; the timestamp annotation and others' labels/annotations are not ours to
 * compare. `hash` as for renderCopy.
 */
export function isInSync(rd: ResolvedDistribution, existing: Resource, hash: string = hashResource(rd.spec.resource)): boolean {
  const desired = desiredView(rd, hash);
  return (
    contentEqual(desired, existing, rd.stored) &&
    includesAll(existing.metadata.labels, desired.metadata.labels) &&
    includesAll(existing.metadata.annotations, desired.metadata.annotations, [ANNOTATION_TIMESTAMP]) &&
    // A record the desired copy no longer has: keys of an earlier template are still on the copy.
    (existing.metadata.annotations?.[ANNOTATION_TEMPLATE_METADATA] === undefined || desired.metadata.annotations?.[ANNOTATION_TEMPLATE_METADATA] !== undefined) &&
    controllerRefCurrent(rd, existing)
  );
}

/**
 * What decides whether a copy is ours and in sync, besides the copy: the template (by its hash),
 * the distribution's name and uid, its origin and source, and what copies are compared with
 * (classifyExisting and isInSync read no other field). A status write brings a new distribution object and changes none of them.
 */
function verdictKey(rd: ResolvedDistribution, hash: string): string {
  const known = verdictKeys.get(rd);
  if (known?.hash === hash) return known.key;
  const key = JSON.stringify([hash, rd.metadata.name, rd.metadata.uid ?? null, rd.origin ?? null, rd.spec.source ?? null, storedKey(rd.stored)]);
  verdictKeys.set(rd, { hash, key });
  return key;
}

const verdictKeys = new WeakMap<ResolvedDistribution, { hash: string; key: string }>();

/** Whether copies are compared with a stored form, and where not. */
function storedKey(stored: StoredForm | undefined): string | null {
  return stored === undefined ? null : [...stored.storedOtherwiseIn].sort().join(',');
}

/**
 * Copies found ours and in sync, with the verdict key they were judged by. Cached objects are
 * replaced when they change, never changed in place: a pass over 10,000 copies that are all in
 * sync then compares none of them again, only looks each up.
 */
const foundInSync = new WeakMap<Resource, string>();

/** classifyExisting says ours and isInSync holds, remembered per copy object (see foundInSync). */
export function isOursInSync(rd: ResolvedDistribution, existing: Resource, hash: string): boolean {
  // A copy rendered from another template says so in its hash annotation, which the desired copy
  // carries: it is not in sync, whatever else it holds (every copy, after a template change).
  if (existing.metadata.annotations?.[ANNOTATION_HASH] !== hash) return false;
  const key = verdictKey(rd, hash);
  if (foundInSync.get(existing) === key) return true;
  const inSync = classifyExisting(rd, existing).kind === 'ours' && isInSync(rd, existing, hash);
  if (inSync) foundInSync.set(existing, key);
  return inSync;
}
