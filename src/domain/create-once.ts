// spec.syncPolicy CreateOnce: a copy is created where it is missing, then left to its namespace.
// The plan stays level-triggered: what it does in a namespace follows from the copy found there and
// the policy, never from which event brought the pass. See docs/concepts/create-once.md.
import { classifyExisting, controllerRefTo, isControlledBy, isOursInSync } from './copy.js';
import { isDistributionRef } from './ownership.js';
import { desiredView } from './render.js';
import {
  ANNOTATION_ADOPT,
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_TEMPLATE_METADATA,
  ANNOTATION_TIMESTAMP,
  LABEL_DISTRIBUTION,
  type Action,
  type Resource,
  type ResolvedDistribution,
  type ResourceDistribution,
} from './types.js';

export function createsOnce(rd: ResourceDistribution): boolean {
  return rd.spec.syncPolicy === 'CreateOnce';
}

/**
 * What CreateOnce decides for an object in a target namespace, undefined when it decides as Sync
 * does (someone else's object: a conflict, or taken over under writePolicy overwrite or adopt).
 * Our copy, under this distribution's controller reference: present, whatever it now holds.
 * Ours but not under it (kept with --cascade=orphan, or of an earlier distribution of that name),
 * or without our label (removed by hand): `claim`, which puts our label, `from` annotation and
 * controller reference back and leaves its content alone.
 */
export function createOnceDecision(rd: ResolvedDistribution, existing: Resource): 'present' | 'claim' | undefined {
  if (classifyExisting(rd, existing).kind !== 'ours') return undefined;
  if (rd.origin !== undefined) return 'present';
  // Our label is how the controller's caches find its copies: without it, every pass would plan a create.
  return isControlledBy(rd, existing) && existing.metadata.labels?.[LABEL_DISTRIBUTION] === rd.metadata.name ? 'present' : 'claim';
}

/** The copy as found, with our label, `from` annotation and controller reference: its content stays the namespace's. */
export function claimedCopy(rd: ResolvedDistribution, existing: Resource): Resource {
  const { metadata } = existing;
  return {
    ...existing,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, [LABEL_DISTRIBUTION]: rd.metadata.name },
      annotations: { ...metadata.annotations, [ANNOTATION_FROM]: rd.metadata.name },
      ownerReferences: [...(metadata.ownerReferences ?? []).filter((ref) => !isDistributionRef(ref, rd.metadata.name)), controllerRefTo(rd)],
    },
  };
}

const OUR_ANNOTATIONS = [ANNOTATION_FROM, ANNOTATION_HASH, ANNOTATION_TIMESTAMP, ANNOTATION_TEMPLATE_METADATA, ANNOTATION_ADOPT];

/** The copy with nothing of ours left on it (markers, record, controller reference): from now on the namespace's object. */
export function releasedCopy(rd: ResourceDistribution, existing: Resource): Resource {
  const metadata = { ...existing.metadata };
  const labels = { ...metadata.labels };
  delete labels[LABEL_DISTRIBUTION];
  const annotations = { ...metadata.annotations };
  for (const key of OUR_ANNOTATIONS) delete annotations[key];
  const owners = (metadata.ownerReferences ?? []).filter((ref) => !isDistributionRef(ref, rd.metadata.name));
  delete metadata.labels;
  delete metadata.annotations;
  delete metadata.ownerReferences;
  return {
    ...existing,
    metadata: {
      ...metadata,
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ...(owners.length > 0 ? { ownerReferences: owners } : {}),
    },
  };
}

function keysWithin(actual: Record<string, string> | undefined, desired: Record<string, string> | undefined): boolean {
  return Object.keys(actual ?? {}).every((key) => desired?.[key] !== undefined);
}

/**
 * The copy is exactly what the distribution would write now: its hash names the current template,
 * content and our metadata match it (isOursInSync), and it carries no label or annotation we did
 * not put there. A copy written from an earlier template, or edited in any way, is not.
 */
export function untouchedCopy(rd: ResolvedDistribution, existing: Resource, hash: string): boolean {
  if (!isOursInSync(rd, existing, hash)) return false;
  const desired = desiredView(rd, hash).metadata;
  return keysWithin(existing.metadata.labels, desired.labels) && keysWithin(existing.metadata.annotations, desired.annotations);
}

/**
 * Our copy in a namespace no longer targeted: deleted when untouched (nothing of the namespace's
 * is lost; the delete holds only while the copy is unchanged since it was read), else released.
 */
export function leaveNamespace(rd: ResolvedDistribution, existing: Resource, hash: string): Action {
  const { namespace = '', name = '', uid = '', resourceVersion } = existing.metadata;
  if (untouchedCopy(rd, existing, hash)) return { type: 'delete', namespace, name, uid, ...(resourceVersion === undefined ? {} : { resourceVersion }) };
  return { type: 'release', namespace, object: releasedCopy(rd, existing) };
}
