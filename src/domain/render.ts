// The desired copy of a distribution's template in one namespace.
import { hashResource } from './hash.js';
import { toRfc3339 } from './timestamp.js';
import {
  ANNOTATION_ADOPT,
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_TIMESTAMP,
  API_VERSION,
  KIND,
  LABEL_DISTRIBUTION,
  type ObjectMeta,
  type OwnerReference,
  type Resource,
  type ResourceDistribution,
} from './types.js';

/** Metadata the API server sets: a template copied from a live object may carry it, a copy must not. */
const SERVER_SET_METADATA = [
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
] as const;

export function controllerRefTo(rd: ResourceDistribution): OwnerReference {
  return {
    apiVersion: API_VERSION,
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
  if (resource.kind !== 'Secret' || stringData === undefined) return;
  const data = { ...resource.data };
  for (const [key, value] of Object.entries(stringData)) data[key] = utf8ToBase64(value);
  resource.data = data;
}

function copyMetadata(template: ObjectMeta, rd: ResourceDistribution, namespace: string, now: Date): ObjectMeta {
  const metadata: ObjectMeta = { ...template };
  for (const key of SERVER_SET_METADATA) delete metadata[key];
  const annotations: Record<string, string> = {
    ...template.annotations,
    [ANNOTATION_FROM]: rd.metadata.name,
    [ANNOTATION_HASH]: hashResource(rd.spec.resource),
    [ANNOTATION_TIMESTAMP]: toRfc3339(now),
  };
  delete annotations[ANNOTATION_ADOPT];
  return {
    ...metadata,
    namespace,
    labels: { ...template.labels, [LABEL_DISTRIBUTION]: rd.metadata.name },
    annotations,
    ownerReferences: [controllerRefTo(rd)],
  };
}

/** The desired copy in `namespace` (no resourceVersion/uid): template + our metadata. */
export function renderCopy(rd: ResourceDistribution, namespace: string, now: Date): Resource {
  const template = structuredClone(rd.spec.resource);
  const copy: Resource = { ...template, metadata: copyMetadata(template.metadata ?? {}, rd, namespace, now) };
  foldStringData(copy);
  if (copy.kind === 'Secret') copy.type ??= 'Opaque';
  return copy;
}
