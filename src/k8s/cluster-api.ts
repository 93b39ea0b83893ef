// Our own narrow view of the Kubernetes API: every call the controller makes, and nothing else.
// The real implementation sits over @kubernetes/client-node (client-cluster-api.ts); unit tests use
// an in-memory double; a counting wrapper measures requests by verb.
import { kindKeyOf, type KindKey } from '../domain/kinds.js';
import type { ObjectSync, ObjectSyncStatus } from '../domain/object-sync.js';
import type { DistributionStatus, ObjectMeta, Resource, ResourceDistribution, SourceRef } from '../domain/types.js';

/**
 * What the caches list and watch: 'distributions', 'objectsyncs', 'namespaces', or the key of an allowed kind
 * (`Secret`, `NetworkPolicy.networking.k8s.io`: keys start upper-case, so they never clash).
 */
export type WatchedResource = KindKey;

/** A namespace as the API returns it, reduced to what the controller reads. */
export interface NamespaceObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta & { name: string };
  status?: { phase?: string };
}

export interface CopyRef {
  /** `Secret`, `NetworkPolicy.networking.k8s.io` (see kindKey). */
  kind: KindKey;
  namespace: string;
  name: string;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface WatchOptions {
  resourceVersion: string;
  labelSelector?: string;
  /** Copied kinds: one namespace only, and `metadata.name=<name>` (a distribution's source). */
  namespace?: string;
  fieldSelector?: string;
  /** Metadata only (PartialObjectMetadata): objects that are not ours, whose content we never read. */
  metadataOnly?: boolean;
  /** The API server ends the watch after this long; the caller then resumes from the last resourceVersion. */
  timeoutSeconds: number;
  /**
   * Whether the caller already holds the object under this key ("namespace/name", or "name") at
   * this resourceVersion, as after our own write: its event is then passed on as a BOOKMARK of that
   * version instead of being decoded (the same no-change the caller would make of it, for less CPU).
   */
  held?: (key: string, resourceVersion: string) => boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent {
  type: WatchEventType;
  /** The object; for ERROR a Status (`code` 410 means the resourceVersion is too old). */
  object: { metadata?: ObjectMeta; code?: number; reason?: string; message?: string; [key: string]: unknown };
}

export interface WatchHandle {
  stop(): void;
}

export interface WatchCallbacks {
  onEvent(event: WatchEvent): void;
  /** Called once when the watch ends: `error` undefined for a normal close by the server. */
  onDone(error?: unknown): void;
}

/** coordination.k8s.io/v1 Lease, reduced to the fields leader election uses. */
export interface LeaseObject {
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: LeaseSpec;
}

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  /** RFC 3339 with microseconds (MicroTime). */
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** A core v1 Event about a distribution. Never carries object data. */
export interface EventObject {
  namespace: string;
  generateName: string;
  /** `namespace` for a namespaced object (the API server refuses an Event elsewhere than its object's namespace). */
  involvedObject: { apiVersion: string; kind: string; name: string; namespace?: string; uid?: string; resourceVersion?: string };
  reason: string;
  message: string;
  type: 'Normal' | 'Warning';
  component: string;
  instance: string;
  time: Date;
}

export interface ClusterApi {
  listDistributions(): Promise<ListResult<ResourceDistribution>>;
  listNamespaces(): Promise<ListResult<NamespaceObject>>;
  /**
   * Always with a label selector: we never list every Secret of the cluster. Each copy is passed
   * through `keep` as its page arrives: a restart lists every copy, and held as parsed until the
   * last page they would add up (hundreds of MiB at 100,000 copies).
   */
  listCopies(kind: KindKey, labelSelector: string, keep?: (copy: Resource) => Resource): Promise<ListResult<Resource>>;
  watch(resource: WatchedResource, options: WatchOptions, callbacks: WatchCallbacks): Promise<WatchHandle>;
  /** The source object alone (a list by name in its namespace, so that it can be watched from there). */
  listSource(ref: SourceRef): Promise<ListResult<Resource>>;
  /**
   * Every object of a kind and name without our label, in every namespace (`metadata.name=<name>`,
   * metadata only), each trimmed to its identity and version (trimmedMeta): what else stands where
   * a distribution writes that name.
   * Optional: without it such objects are seen only by the passes that read them.
   */
  listNamed?(kind: KindKey, name: string): Promise<ListResult<Resource>>;

  getNamespace(name: string): Promise<NamespaceObject | undefined>;
  /**
   * A live read, for the one decision a lagging cache must not make alone: deleting every copy.
   * A list by name, so that it needs no more RBAC than the cache (list, watch).
   */
  lookupDistribution(name: string): Promise<ResourceDistribution | undefined>;

  /** undefined when the object does not exist. */
  getCopy(ref: CopyRef): Promise<Resource | undefined>;
  createCopy(object: Resource): Promise<Resource>;
  /** A replace (PUT) carrying `metadata.resourceVersion`: fails with Conflict if the object changed meanwhile. */
  replaceCopy(object: Resource): Promise<Resource>;
  /**
   * What the API server would store of `object` in its namespace: a create as a server-side dry
   * run, under a generated name (one of that name may exist), nothing persisted. Optional: without
   * it copies of other kinds are compared by the fields their template sets.
   */
  dryRunCopy?(object: Resource): Promise<Resource>;
  /** Deletes only the object with that uid (precondition). NotFound is thrown; callers decide. */
  deleteCopy(ref: CopyRef, uid: string, resourceVersion?: string): Promise<void>;

  /** Writes `status` through the status subresource (merge patch). */
  patchDistributionStatus(name: string, status: DistributionStatus): Promise<ResourceDistribution>;

  listObjectSyncs(): Promise<ListResult<ObjectSync>>;
  /** A live read, as lookupDistribution (a list by name in its namespace). */
  lookupObjectSync(namespace: string, name: string): Promise<ObjectSync | undefined>;
  patchObjectSyncStatus(namespace: string, name: string, status: ObjectSyncStatus): Promise<ObjectSync>;
  /** Sets metadata.finalizers, if the object is still at `resourceVersion` (Conflict otherwise). */
  patchObjectSyncFinalizers(namespace: string, name: string, finalizers: readonly string[], resourceVersion: string): Promise<ObjectSync>;

  createEvent(event: EventObject): Promise<void>;

  getLease(namespace: string, name: string): Promise<LeaseObject | undefined>;
  createLease(lease: LeaseObject): Promise<LeaseObject>;
  replaceLease(lease: LeaseObject): Promise<LeaseObject>;
}

/** The verb of each ClusterApi method, as RBAC and the request metrics name it. */
export const API_VERBS = {
  listDistributions: 'list',
  listNamespaces: 'list',
  listCopies: 'list',
  watch: 'watch',
  listSource: 'list',
  listNamed: 'list',
  getNamespace: 'get',
  lookupDistribution: 'list',
  getCopy: 'get',
  createCopy: 'create',
  replaceCopy: 'update',
  deleteCopy: 'delete',
  // Nothing is written: not counted with the writes.
  dryRunCopy: 'dryrun',
  patchDistributionStatus: 'patch',
  listObjectSyncs: 'list',
  lookupObjectSync: 'list',
  patchObjectSyncStatus: 'patch',
  patchObjectSyncFinalizers: 'patch',
  createEvent: 'create',
  getLease: 'get',
  createLease: 'create',
  replaceLease: 'update',
} as const satisfies Record<keyof ClusterApi, string>;

export type ApiVerb = (typeof API_VERBS)[keyof typeof API_VERBS];

export function copyRefOf(object: Resource): CopyRef {
  return {
    kind: kindKeyOf(object.apiVersion, object.kind),
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name ?? '',
  };
}
