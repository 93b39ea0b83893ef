// The desired copy of a distribution's template in one namespace.
import { V1BETA1 } from './conversion.js';
import { hashResource } from './hash.js';
import { templateKeysRecord } from './template-metadata.js';
import { isCoreDataKind } from './kinds.js';
import { toRfc3339 } from './timestamp.js';
import {
  ANNOTATION_ADOPT,
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_OBJECT_SYNC,
  ANNOTATION_TEMPLATE_METADATA,
  ANNOTATION_TIMESTAMP,
  GROUP,
  KIND,
  LABEL_DISTRIBUTION,
  type ObjectMeta,
  type OwnerReference,
  type Resource,
  type ResolvedDistribution,
  type ResourceDistribution,
} from './types.js';

/** Metadata the API server sets: a template copied from a live object may carry it, a copy must not. */
const SERVER_SET_METADATA: ReadonlySet<string> = new Set([
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'ownerReferences',
  'generation',
  'generateName',
  'selfLink',
  'namespace',
]);

/**
 * The version a copy's owner reference names: the one discovery prefers (the highest served), which
 * the garbage collector watches. A reference in another version makes the collector verify each
 * new copy's owner with a GET in that version, converted by our webhook: one read and one
 * conversion per copy created, for nothing. Either version counts as ours when read back.
 */
export const OWNER_API_VERSION = `${GROUP}/${V1BETA1}`;

export function controllerRefTo(rd: ResourceDistribution): OwnerReference {
  return {
    apiVersion: OWNER_API_VERSION,
    kind: KIND,
    name: rd.metadata.name,
    uid: rd.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

function utf8ToBase64(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64');
}

/**
 * stringData is write-only: the API server folds it into data (base64, stringData winning) and
 * never returns it. Doing the same here keeps the copy comparable with what the server returns.
 */
function foldStringData(resource: Resource): void {
  const { stringData } = resource;
  delete resource.stringData;
  if (stringData === undefined || resource.kind !== 'Secret' || !isCoreDataKind(resource.apiVersion, resource.kind)) return;
  const data = { ...resource.data };
  for (const [key, value] of Object.entries(stringData)) data[key] = utf8ToBase64(value);
  resource.data = data;
}

/** A ResourceDistribution owns its copies; a namespaced origin (an ObjectSync) is named by an annotation instead. */
function ownership(rd: ResourceDistribution): { annotations: Record<string, string>; ownerReferences: OwnerReference[] } {
  if (rd.origin === undefined) return { annotations: {}, ownerReferences: [controllerRefTo(rd)] };
  return { annotations: { [ANNOTATION_OBJECT_SYNC]: `${rd.origin.namespace}/${rd.origin.name}` }, ownerReferences: [] };
}

/** Keys of ours on a copy: a template (or a source that is itself a copy) never owns them. */
const OUR_ANNOTATIONS = [ANNOTATION_FROM, ANNOTATION_HASH, ANNOTATION_TIMESTAMP, ANNOTATION_OBJECT_SYNC, ANNOTATION_ADOPT, ANNOTATION_TEMPLATE_METADATA];

function without(map: Record<string, string> | undefined, keys: readonly string[]): Record<string, string> | undefined {
  if (map === undefined || !keys.some((key) => key in map)) return map;
  const rest = { ...map };
  for (const key of keys) delete rest[key];
  return rest;
}

// Per template metadata object: a steady-state pass renders the same template for every copy.
const recordCache = new WeakMap<ObjectMeta, { record: string | undefined }>();

/** The record of the keys the template puts on copies (see template-metadata.ts). */
function templateRecord(template: ObjectMeta): string | undefined {
  let cached = recordCache.get(template);
  if (cached === undefined) {
    cached = { record: templateKeysRecord(without(template.labels, [LABEL_DISTRIBUTION]), without(template.annotations, OUR_ANNOTATIONS)) };
    recordCache.set(template, cached);
  }
  return cached.record;
}

/** A copy's metadata in no namespace yet; frozen, with frozen maps (every copy of a pass shares them). */
function sharedMetadata(template: ObjectMeta, rd: ResourceDistribution, now: Date, hash: string): ObjectMeta {
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) if (!SERVER_SET_METADATA.has(key)) kept[key] = value;
  const metadata = kept as ObjectMeta;
  const owner = ownership(rd);
  const record = templateRecord(template);
  metadata.labels = Object.freeze({ ...template.labels, [LABEL_DISTRIBUTION]: rd.metadata.name });
  metadata.annotations = Object.freeze({
    ...without(template.annotations, OUR_ANNOTATIONS),
    ...owner.annotations,
    ...(record === undefined ? {} : { [ANNOTATION_TEMPLATE_METADATA]: record }),
    [ANNOTATION_FROM]: rd.metadata.name,
    [ANNOTATION_HASH]: hash,
    [ANNOTATION_TIMESTAMP]: toRfc3339(now),
  });
  metadata.ownerReferences = Object.freeze(owner.ownerReferences.map((ref) => Object.freeze(ref))) as OwnerReference[];
  return Object.freeze(metadata);
}

/**
 * Nothing of a copy's metadata but its namespace depends on the namespace: a pass over many
 * namespaces (one template, distribution, hash and time) builds it once, per template object.
 */
const shared = new WeakMap<ObjectMeta, { rd: ResourceDistribution; hash: string; ms: number; metadata: ObjectMeta }>();

function copyMetadata(template: ObjectMeta, rd: ResourceDistribution, namespace: string, now: Date, hash: string): ObjectMeta {
  let known = shared.get(template);
  if (known === undefined || known.rd !== rd || known.hash !== hash || known.ms !== now.getTime()) {
    known = { rd, hash, ms: now.getTime(), metadata: sharedMetadata(template, rd, now, hash) };
    shared.set(template, known);
  }
  return { ...known.metadata, namespace };
}

/**
 * Base64 as the API server stores it: it decodes (skipping line breaks, as Go does, and ignoring
 * the unused bits of the last character) and encodes again. A template written otherwise (e.g.
 * the wrapped output of the base64 tool) would otherwise never look in sync, and be rewritten at
 * every pass. Only line breaks and the last four characters can differ, so only they are redone.
 */
function canonicalBase64(value: string): string {
  const unwrapped = /[\r\n]/.test(value) ? value.replace(/[\r\n]/g, '') : value;
  if (unwrapped.length % 4 !== 0) return unwrapped; // invalid: the API server rejects it anyway
  const tail = unwrapped.slice(-4);
  const canonicalTail = Buffer.from(tail, 'base64').toString('base64');
  return tail === canonicalTail ? unwrapped : `${unwrapped.slice(0, -4)}${canonicalTail}`;
}

function canonicalMap(map: Record<string, string> | undefined): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  let changed: Record<string, string> | undefined;
  for (const [key, value] of Object.entries(map)) {
    const canonical = canonicalBase64(value);
    if (canonical !== value) (changed ??= { ...map })[key] = canonical;
  }
  return changed ?? map;
}

/** The base64 maps of the copy (Secret data, ConfigMap binaryData) in the server's stored form. */
function canonicalizeBase64(copy: Resource): void {
  if (!isCoreDataKind(copy.apiVersion, copy.kind)) return;
  const field = copy.kind === 'Secret' ? 'data' : 'binaryData';
  const map = canonicalMap(copy[field]);
  if (map !== undefined) copy[field] = map;
}

/** Never mutates `template`: the copy's metadata is its own object, and any map it changes is a new one. */
function render(template: Resource, rd: ResourceDistribution, namespace: string, now: Date, hash: string): Resource {
  const copy: Resource = { ...template, metadata: copyMetadata(template.metadata ?? {}, rd, namespace, now, hash) };
  canonicalizeBase64(copy);
  foldStringData(copy);
  if (copy.kind === 'Secret' && isCoreDataKind(copy.apiVersion, copy.kind)) copy.type ??= 'Opaque';
  return copy;
}

/**
 * The desired copy in `namespace` (no resourceVersion/uid): template + our metadata. `hash` is
 * hashResource(rd.spec.resource); a caller rendering many namespaces passes it in, because hashing
 * a large template once per namespace would dominate a pass. Like `desiredView`, it shares the
 * template's data maps (a clone per namespace of a 1 MiB template would dominate it too), and
 * copies rendered with the same time share their labels, annotations and ownerReferences (frozen):
 * its metadata object is its own, its maps are never to be changed in place.
 */
export function renderCopy(
  rd: ResolvedDistribution,
  namespace: string,
  now: Date,
  hash: string = hashResource(rd.spec.resource),
): Resource {
  return render(rd.spec.resource, rd, namespace, now, hash);
}

/**
 * The desired copy for comparison only, in no namespace: it shares the template's data maps
 * instead of cloning them (a steady-state pass compares every copy, and templates reach 1 MiB).
 * Nothing compared depends on the namespace, so it is rendered once per distribution object and
 * hash (cached distributions are replaced when they change, never changed in place), not once per
 * copy. Frozen: never mutate it.
 */
export function desiredView(rd: ResolvedDistribution, hash: string): Resource {
  const known = views.get(rd);
  if (known?.hash === hash) return known.view;
  const view = Object.freeze(render(rd.spec.resource, rd, '', new Date(0), hash));
  views.set(rd, { hash, view });
  return view;
}

const views = new WeakMap<ResolvedDistribution, { hash: string; view: Resource }>();
