// Fluent-ish builders of the cluster snapshots the soak's checker reads: a correct world by default,
// each test breaking one thing.
import { templateHash } from '../../soak/canonical-hash.js';
import type { Expectations } from '../../soak/expectations.js';
import { ANNOTATION_FROM, ANNOTATION_HASH, ANNOTATION_OBJECT_SYNC, ANNOTATION_TIMESTAMP, CONDITION_ORDER, LABEL_DISTRIBUTION, RD_KIND, RD_OWNER_API_VERSION, SOURCE_CONDITION } from '../../soak/markers.js';
import type { ClusterSnapshot, Condition, DistributionSnapshot, NamespaceSnapshot, ObjectSnapshot, ObjectSyncSnapshot, Targets, Template } from '../../soak/snapshot-types.js';

export const OWN = 'rd-system';

export function namespace(name: string, labels: Record<string, string> = {}, terminating = false): NamespaceSnapshot {
  return { name, labels, terminating };
}

export function configMap(name: string, data: Record<string, string>, labels: Record<string, string> = {}): Template {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data };
}

export function secret(name: string, data: Record<string, string>, type = 'Opaque'): Template {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data, type };
}

export interface StatusOf {
  desired: number;
  succeeded: number;
  conflicts?: string[];
  missing?: string[];
  sourceMissing?: boolean;
}

function condition(type: string, namespaces: string[] | undefined, on = namespaces !== undefined && namespaces.length > 0): Condition {
  if (!on) return { type, status: 'False', reason: 'Succeeded' };
  return { type, status: 'True', reason: 'Failed', ...(namespaces ? { failedNamespace: namespaces } : {}) };
}

export function distribution(name: string, spec: DistributionSnapshot['spec'], status: StatusOf): DistributionSnapshot {
  const conditions = CONDITION_ORDER.map((type) => {
    if (type === 'ConflictOccurred') return condition(type, status.conflicts);
    if (type === 'NamespaceNotExists') return condition(type, status.missing);
    return condition(type, undefined);
  });
  if (spec.source) conditions.push(condition(SOURCE_CONDITION, undefined, status.sourceMissing === true));
  // What the builder makes fail (conflicts, missing namespaces, a missing source) all waits on someone.
  const failing = conditions.some((c) => c.status === 'True');
  conditions.push(failing ? { type: 'Ready', status: 'False', reason: 'Failed' } : { type: 'Ready', status: 'True', reason: 'Synced' });
  conditions.push(condition('Stalled', undefined, failing));
  return {
    name,
    uid: `uid-${name}`,
    generation: 1,
    deleting: false,
    spec,
    status: { observedGeneration: 1, desired: status.desired, succeeded: status.succeeded, failed: status.desired - status.succeeded, conditions },
  };
}

export function listed(...names: string[]): Targets {
  return { includedNamespaces: { list: names.map((name) => ({ name })) } };
}

/** A correct copy of `rd`'s template (or of `content` for a source) in `namespace`. */
export function copyOf(rd: DistributionSnapshot, namespace: string, content?: Template): ObjectSnapshot {
  const template = content ?? rd.spec.resource;
  if (!template) throw new Error('copyOf needs a template');
  return {
    kind: template.kind,
    namespace,
    name: template.metadata.name,
    uid: `copy-${namespace}`,
    labels: { ...(template.metadata.labels ?? {}), [LABEL_DISTRIBUTION]: rd.name },
    annotations: {
      ...(template.metadata.annotations ?? {}),
      [ANNOTATION_FROM]: rd.name,
      [ANNOTATION_HASH]: content ? 'source-hash' : templateHash(template),
      [ANNOTATION_TIMESTAMP]: '2026-11-26T00:00:00Z',
    },
    ownerReferences: [{ apiVersion: RD_OWNER_API_VERSION, kind: RD_KIND, name: rd.name, uid: rd.uid, controller: true, blockOwnerDeletion: true }],
    data: template.data ?? {},
    ...(template.kind === 'Secret' ? { type: template.type ?? 'Opaque' } : {}),
  };
}

/** An object someone else made: no markers. */
export function foreignObject(kind: 'Secret' | 'ConfigMap', namespace: string, name: string, data: Record<string, string>): ObjectSnapshot {
  return { kind, namespace, name, uid: `foreign-${namespace}`, labels: { 'soak.example/foreign': 'yes' }, annotations: {}, ownerReferences: [], data };
}

export function world(parts: Partial<ClusterSnapshot>): ClusterSnapshot {
  return { namespaces: [], distributions: [], objectSyncs: [], objects: [], events: [], ...parts };
}

export function expectations(parts: Partial<Expectations> = {}): Expectations {
  return { ownNamespace: OWN, orphaned: new Set(), foreign: [], adoptable: [], authored: new Set(), ...parts };
}

/** An ObjectSync in `namespace` copying `source` there to `destinations`, its status as given. */
export function objectSync(
  namespace: string,
  name: string,
  source: { kind: 'Secret' | 'ConfigMap'; name: string },
  destinations: { namespace: string; name?: string }[],
  status: { desired: number; succeeded: number },
): ObjectSyncSnapshot {
  const inSync = status.desired === status.succeeded ? 'True' : 'False';
  return {
    namespace,
    name,
    uid: `uid-${name}`,
    generation: 1,
    deleting: false,
    spec: { source: { group: '', ...source }, destinations },
    status: { observedGeneration: 1, ...status, failed: status.desired - status.succeeded, conditions: [{ type: 'Ready', status: inSync }, { type: 'InSync', status: inSync }] },
  };
}

/** A plain object (a source, say) with no markers. */
export function plainObject(kind: 'Secret' | 'ConfigMap', namespace: string, name: string, data: Record<string, string>, labels: Record<string, string> = {}): ObjectSnapshot {
  return { kind, namespace, name, uid: `${namespace}-${name}`, labels, annotations: {}, ownerReferences: [], data, ...(kind === 'Secret' ? { type: 'Opaque' } : {}) };
}

/** A correct copy of `source` written for ObjectSync `os` in `namespace` (as `name`, by default the source's). */
export function syncCopy(os: ObjectSyncSnapshot, source: ObjectSnapshot, namespace: string, name = source.name): ObjectSnapshot {
  return {
    ...source,
    namespace,
    name,
    uid: `sync-${namespace}-${name}`,
    labels: { ...source.labels, [LABEL_DISTRIBUTION]: 'objectsync-0123' },
    annotations: { ...source.annotations, [ANNOTATION_FROM]: 'objectsync-0123', [ANNOTATION_OBJECT_SYNC]: `${os.namespace}/${os.name}` },
  };
}
