// Copies: render, merge over an existing object, ownership and drift.
import { effectiveType, isDistributionRef, mapsEqual } from './ownership.js';
import { mergedKeys, recordedTemplateKeys } from './template-metadata.js';
import { ANNOTATION_ADOPT, ANNOTATION_TEMPLATE_METADATA, type OwnerReference, type Resource } from './types.js';

export { renderCopy, controllerRefTo } from './render.js';
export {
  classifyExisting,
  isInSync,
  isOursInSync,
  isForbiddenSecretType,
  isControlledBy,
  isControlledByOtherDistribution,
  controllerOf,
  type Classification,
} from './ownership.js';

function union(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] | undefined {
  if (a === undefined && b === undefined) return undefined;
  return [...new Set([...(a ?? []), ...(b ?? [])])];
}

/** Owner references to keep: not a controller (there can be only one: ours), not a stale one of ours. */
function otherOwners(existing: Resource, ours: readonly OwnerReference[]): OwnerReference[] {
  return (existing.metadata.ownerReferences ?? []).filter(
    (ref) => ref.controller !== true && !(isDistributionRef(ref) && ours.some((own) => own.name === ref.name)),
  );
}

/** Annotations a write never keeps from the object it replaces: its record is the template's (or none), adoption is consumed. */
const REPLACED_ANNOTATIONS = [ANNOTATION_TEMPLATE_METADATA, ANNOTATION_ADOPT];

/**
 * What to PUT over `existing`: the desired copy wins; labels and annotations others added are
 * kept, as are finalizers and non-controller owner references, while those the previous template
 * put there (its record) and the current one no longer has are removed. Carries the existing
 * resourceVersion so that a concurrent change makes the write fail and retry. Taking an object
 * over consumes its adopt annotation.
 */
export function mergeCopy(desired: Resource, existing: Resource): Resource {
  // Its metadata is built anew; its maps are the desired copy's, shared (see renderCopy).
  const merged: Resource = { ...desired };
  const ours = desired.metadata.ownerReferences ?? [];
  const previous = recordedTemplateKeys(existing.metadata);
  const want = desired.metadata;
  merged.metadata = {
    ...merged.metadata,
    labels: mergedKeys(existing.metadata.labels, previous.labels, want.labels),
    annotations: mergedKeys(existing.metadata.annotations, previous.annotations, want.annotations, REPLACED_ANNOTATIONS),
    ownerReferences: [...otherOwners(existing, ours), ...ours],
  };
  const finalizers = union(existing.metadata.finalizers, desired.metadata.finalizers);
  if (finalizers !== undefined) merged.metadata.finalizers = finalizers;
  const { resourceVersion } = existing.metadata;
  if (resourceVersion !== undefined) merged.metadata.resourceVersion = resourceVersion;
  return merged;
}

/**
 * Changes an update cannot make: a Secret's type is immutable, and so is the content of an
 * object marked immutable (including clearing the mark). Those need delete + create.
 */
export function needsRecreate(desired: Resource, existing: Resource): boolean {
  if (desired.kind === 'Secret' && effectiveType(desired) !== effectiveType(existing)) return true;
  if (existing.immutable !== true) return false;
  return (
    desired.immutable !== true ||
    !mapsEqual(desired.data, existing.data) ||
    !mapsEqual(desired.binaryData, existing.binaryData)
  );
}
