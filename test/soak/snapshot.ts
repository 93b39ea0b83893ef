// Reads what the checker looks at: every namespace, every distribution with its status, every
// Secret and ConfigMap of a name the soak uses, every Event.
import type { CoreV1Api, CustomObjectsApi, V1ObjectMeta } from '@kubernetes/client-node';
import { OBJECT_SYNC } from './markers.js';
import { NAME_PREFIX } from './model.js';
import { RD } from './soak-kube.js';
import type { ClusterSnapshot, DistributionSnapshot, ObjectSnapshot, ObjectSyncSnapshot, OwnerReference } from './snapshot-types.js';

interface RawDistribution {
  metadata: { name: string; uid: string; generation?: number; deletionTimestamp?: string };
  spec: DistributionSnapshot['spec'];
  status?: DistributionSnapshot['status'];
}

function objectOf(kind: 'Secret' | 'ConfigMap', meta: V1ObjectMeta = {}, data: Record<string, string> = {}, type?: string): ObjectSnapshot {
  const ownerReferences = (meta.ownerReferences ?? []).map(
    (ref): OwnerReference => ({ apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name, uid: ref.uid, controller: ref.controller, blockOwnerDeletion: ref.blockOwnerDeletion }),
  );
  const { namespace = '', name = '', uid = '', labels = {}, annotations = {} } = meta;
  return {
    kind,
    namespace,
    name,
    uid,
    labels,
    annotations,
    ownerReferences,
    data,
    ...(type === undefined ? {} : { type }),
  };
}

interface RawObjectSync {
  metadata: { name: string; namespace: string; uid: string; generation?: number; deletionTimestamp?: string };
  spec: ObjectSyncSnapshot['spec'];
  status?: ObjectSyncSnapshot['status'];
}

const ours = (metadata: V1ObjectMeta | undefined): boolean => metadata?.name?.startsWith(NAME_PREFIX) ?? false;

function objectSyncOf(os: RawObjectSync): ObjectSyncSnapshot {
  const { name, namespace, uid, generation = 0, deletionTimestamp } = os.metadata;
  return { name, namespace, uid, generation, deleting: deletionTimestamp !== undefined, spec: os.spec, ...(os.status ? { status: os.status } : {}) };
}

/**
 * The cluster now, or (`resourceVersion`) exactly as it was at that revision (read from etcd: the
 * API server runs without a watch cache; 410 once compacted). Events only for now.
 */
export async function readSnapshot(core: CoreV1Api, custom: CustomObjectsApi, resourceVersion?: string): Promise<ClusterSnapshot> {
  const at = resourceVersion === undefined ? {} : { resourceVersion, resourceVersionMatch: 'Exact' };
  const [namespaces, distributions, objectSyncs, secrets, configMaps, events] = await Promise.all([
    core.listNamespace(at),
    custom.listClusterCustomObject({ ...RD, ...at }) as Promise<{ items: RawDistribution[] }>,
    custom.listCustomObjectForAllNamespaces({ ...OBJECT_SYNC, ...at }) as Promise<{ items: RawObjectSync[] }>,
    core.listSecretForAllNamespaces(at),
    core.listConfigMapForAllNamespaces(at),
    resourceVersion === undefined ? core.listEventForAllNamespaces() : { items: [] },
  ]);
  return {
    namespaces: namespaces.items.map((ns) => ({
      name: ns.metadata?.name ?? '',
      labels: ns.metadata?.labels ?? {},
      terminating: ns.metadata?.deletionTimestamp !== undefined || ns.status?.phase === 'Terminating',
    })),
    distributions: distributions.items.map((rd) => ({
      name: rd.metadata.name,
      uid: rd.metadata.uid,
      generation: rd.metadata.generation ?? 0,
      deleting: rd.metadata.deletionTimestamp !== undefined,
      spec: rd.spec,
      ...(rd.status ? { status: rd.status } : {}),
    })),
    objectSyncs: objectSyncs.items.map(objectSyncOf),
    objects: [
      ...secrets.items.filter((s) => ours(s.metadata)).map((s) => objectOf('Secret', s.metadata, s.data, s.type)),
      ...configMaps.items.filter((c) => ours(c.metadata)).map((c) => objectOf('ConfigMap', c.metadata, c.data)),
    ],
    events: events.items.map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', involved: `${e.involvedObject.kind ?? ''}/${e.involvedObject.name ?? ''}` })),
  };
}
