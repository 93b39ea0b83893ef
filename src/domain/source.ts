// A distribution that copies an object of the cluster (spec.source): what its copies hold is the
// source as read, minus what the API server owns and what marks the source as someone's copy.
import { applyCopyData, sourceSelectionWarning } from './copy-data.js';
import { applyCopyMetadata, withoutSourceMarkers } from './copy-metadata.js';
import { isCoreDataKind } from './kinds.js';
import { isForbiddenSecretType } from './ownership.js';
import {
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_TIMESTAMP,
  LABEL_DISTRIBUTION,
  type CopyDataRules,
  type ObjectMeta,
  type ResolvedDistribution,
  type Resource,
  type ResourceDistribution,
  type SourceRef,
} from './types.js';

/** Metadata the API server (or a client tool) owns: never carried over to a copy. */
const SERVER_OWNED_METADATA: readonly string[] = [
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'ownerReferences',
  'finalizers',
  'selfLink',
  'generateName',
];
// A source that is itself a distributed copy: its copies are ours, not the other distribution's.
// (Other tools' markers: copy-metadata.ts.)
const DROPPED_ANNOTATIONS: readonly string[] = [
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_TIMESTAMP,
];
const DROPPED_LABELS: readonly string[] = [LABEL_DISTRIBUTION];

/** `Secret/team-a/registry`: how sources are keyed in caches and logs. */
export function sourceKey(ref: SourceRef): string {
  return `${ref.kind}/${ref.namespace}/${ref.name}`;
}

function without(map: Record<string, string> | undefined, keys: readonly string[]): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  const kept = Object.fromEntries(Object.entries(map).filter(([key]) => !keys.includes(key)));
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/**
 * The template a source stands for. Deterministic, so that the hash of the result (the copies'
 * hashcode annotation) changes only when the source's content or own metadata do.
 */
export function normaliseSource(source: Resource): Resource {
  const { status: _status, ...content } = source;
  const metadata = withoutSourceMarkers(source.metadata);
  const kept: ObjectMeta = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (!SERVER_OWNED_METADATA.includes(key) && value !== undefined) kept[key] = value;
  }
  const labels = without(metadata.labels, DROPPED_LABELS);
  const annotations = without(metadata.annotations, DROPPED_ANNOTATIONS);
  delete kept.labels;
  delete kept.annotations;
  return {
    ...content,
    metadata: { ...kept, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
  };
}

/** The distribution with its source's content as template. */
export function withSource(rd: ResourceDistribution, source: Resource): ResolvedDistribution {
  let resource = applyCopyData(applyCopyMetadata(normaliseSource(source), rd.spec.copyMetadata), rd.spec.copyData);
  if (rd.spec.rename !== undefined) resource = { ...resource, metadata: { ...resource.metadata, name: rd.spec.rename } };
  return { ...rd, spec: { ...rd.spec, resource } };
}

/**
 * Why a source that exists is never copied (a Secret of a type bound to one namespace or one
 * tool), in words that say it was found; undefined when it may be copied. Its data is never read.
 */
export function undistributableSource(ref: SourceRef, source: Pick<Resource, 'apiVersion' | 'kind' | 'type'>): string | undefined {
  if (!isCoreDataKind(source.apiVersion, source.kind) || source.kind !== 'Secret' || !isForbiddenSecretType(source.type)) return undefined;
  return `source ${sourceKey(ref).replace('/', ' ')} exists but is of type ${source.type}, which is never distributed: nothing is copied from it`;
}

/** What admission reads of a source: never its data. `null`: it does not exist. */
export type SourceFound = Pick<Resource, 'apiVersion' | 'kind' | 'type'> | null;

/**
 * The warnings for a source as admission found it: one that does not exist yet is allowed (it may
 * be created next), as is one that is never copied (it may be replaced), or one whose type
 * requires a key the distribution's spec.copyData leaves out (its type may change), each said.
 */
export function sourceWarnings(ref: SourceRef, found: SourceFound, copyData?: CopyDataRules): string[] {
  if (found === null) return [`spec.source: ${ref.kind} ${ref.namespace}/${ref.name} does not exist yet: its copies appear once it does`];
  const undistributable = undistributableSource(ref, found);
  if (undistributable !== undefined) return [`spec.source: ${undistributable}`];
  const selection = sourceSelectionWarning(`source ${sourceKey(ref).replace('/', ' ')}`, found, copyData);
  return selection === undefined ? [] : [selection];
}
