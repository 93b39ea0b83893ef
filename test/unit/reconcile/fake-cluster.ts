// An in-memory double of our ClusterApi: objects with uids and resourceVersions, the API server's
// preconditions (AlreadyExists, Conflict, NotFound, delete by uid), watches, and failure injection.
import type {
  ClusterApi,
  CopyRef,
  EventObject,
  LeaseObject,
  NamespaceObject,
  WatchCallbacks,
  WatchOptions,
  WatchedResource,
  WatchEvent,
} from '../../../src/k8s/cluster-api.js';
import { kindKeyOf } from '../../../src/domain/kinds.js';
import { objectSyncKey, type ObjectSync } from '../../../src/domain/object-sync.js';
import type { DistributionStatus, Resource, ResourceDistribution } from '../../../src/domain/types.js';

/** Thrown like client-node's ApiException: numeric `code`, Status as a JSON string in `body`. */
export class FakeApiError extends Error {
  readonly body: string;
  constructor(
    readonly code: number,
    reason: string,
    message = reason,
  ) {
    super(`HTTP ${code} ${reason}`);
    this.body = JSON.stringify({ kind: 'Status', code, reason, message });
  }
}

export type Failure = (method: keyof ClusterApi, args: readonly unknown[]) => Error | undefined;

type Kept = { metadata: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } };

export class FakeCluster {
  readonly distributions = new Map<string, ResourceDistribution>();
  /** By `namespace/name`. */
  readonly objectSyncs = new Map<string, ObjectSync>();
  readonly namespaces = new Map<string, NamespaceObject>();
  readonly copies = new Map<string, Resource>();
  readonly leases = new Map<string, LeaseObject>();
  readonly events: EventObject[] = [];
  readonly calls: { method: keyof ClusterApi; args: readonly unknown[] }[] = [];
  private readonly watchers = new Map<WatchedResource, Map<WatchCallbacks, WatchOptions>>();
  private failures: Failure[] = [];
  private version = 100;
  private uids = 0;

  /** Makes matching calls fail (first matching rule wins) until `clearFailures()`. */
  failWhen(failure: Failure): void {
    this.failures.push(failure);
  }

  clearFailures(): void {
    this.failures = [];
  }

  nextVersion(): string {
    this.version += 1;
    return String(this.version);
  }

  private stamp<T extends Kept>(object: T, fresh: boolean): T {
    const copy = structuredClone(object);
    if (fresh) copy.metadata.uid = `uid-${++this.uids}`;
    copy.metadata.resourceVersion = this.nextVersion();
    return copy;
  }

  /** `sources`: only the watches of one object by name (others: every watch of the resource but those). */
  private emit(resource: WatchedResource, type: WatchEvent['type'], object: Kept, sources = false): void {
    for (const [watcher, options] of this.watchers.get(resource) ?? []) {
      if ((options.fieldSelector !== undefined) !== sources) continue;
      // A source's watch: its namespace and `metadata.name=<name>` only, as the API server filters.
      const name = options.fieldSelector?.replace(/^metadata\.name=/, '');
      if (options.namespace !== undefined && object.metadata?.namespace !== options.namespace) continue;
      if (name !== undefined && object.metadata?.name !== name) continue;
      watcher.onEvent({ type, object: structuredClone(object) });
    }
  }

  /** Seeds or changes objects directly (as another client would), with watch events. */
  putNamespace(name: string, labels: Record<string, string> = {}, terminating = false, silent = false): NamespaceObject {
    const old = this.namespaces.get(name);
    const ns = this.stamp<NamespaceObject>(
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, uid: old?.metadata.uid, labels, ...(terminating ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
      },
      old === undefined,
    );
    this.namespaces.set(name, ns);
    // silent: as if the watch had missed it.
    if (!silent) this.emit('namespaces', old ? 'MODIFIED' : 'ADDED', ns);
    return ns;
  }

  /** `silent`: as if the watch had not delivered it yet (`emitDistribution` delivers it later). */
  putDistribution<T extends ResourceDistribution>(rd: T, silent = false): T {
    const old = this.distributions.get(rd.metadata.name);
    const stored = this.stamp(rd, old === undefined && rd.metadata.uid === undefined);
    if (old) stored.metadata.uid = old.metadata.uid;
    this.distributions.set(rd.metadata.name, stored);
    if (!silent) this.emit('distributions', old ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  /** The watch event of a distribution's current state, late. */
  emitDistribution(name: string): void {
    const stored = this.distributions.get(name);
    if (stored) this.emit('distributions', 'MODIFIED', stored);
  }

  deleteDistribution(name: string): void {
    const old = this.distributions.get(name);
    if (!old) return;
    this.distributions.delete(name);
    this.emit('distributions', 'DELETED', old);
  }

  /** What the garbage collector does with an object deleted with propagation Orphan that owns nothing: removes its `orphan` finalizer. */
  collectOrphan(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const held = this.objectSyncs.get(key);
    if (!held) return;
    const updated = this.stamp({ ...held, metadata: { ...held.metadata, finalizers: (held.metadata.finalizers ?? []).filter((f) => f !== 'orphan') } }, false);
    this.objectSyncs.set(key, updated);
    this.emit('objectsyncs', 'MODIFIED', updated);
  }

  putObjectSync(os: ObjectSync): ObjectSync {
    const key = objectSyncKey(os);
    const old = this.objectSyncs.get(key);
    const stored = this.stamp(os, old === undefined && os.metadata.uid === undefined);
    if (old) stored.metadata = { ...stored.metadata, uid: old.metadata.uid, finalizers: old.metadata.finalizers, generation: (old.metadata.generation ?? 1) + 1 };
    else stored.metadata.generation = 1;
    this.objectSyncs.set(key, stored);
    this.emit('objectsyncs', old ? 'MODIFIED' : 'ADDED', stored);
    return stored;
  }

  /**
   * As the API server deletes: an object with finalizers only gets its deletionTimestamp; with
   * propagation Orphan it gets the `orphan` finalizer too (which the garbage collector removes: `collectOrphan`).
   */
  deleteObjectSync(namespace: string, name: string, propagation?: 'Orphan'): void {
    const key = `${namespace}/${name}`;
    const old = this.objectSyncs.get(key);
    if (!old) return;
    if ((old.metadata.finalizers ?? []).length > 0) {
      const finalizers = [...(old.metadata.finalizers ?? []), ...(propagation === 'Orphan' ? ['orphan'] : [])];
      const marked = this.stamp({ ...old, metadata: { ...old.metadata, finalizers, deletionTimestamp: '2024-05-01T10:00:00Z' } }, false);
      this.objectSyncs.set(key, marked);
      this.emit('objectsyncs', 'MODIFIED', marked);
      return;
    }
    this.objectSyncs.delete(key);
    this.emit('objectsyncs', 'DELETED', old);
  }

  /** `sourceLate`: as if the watches of one object by name (sources) had not delivered it yet (`emitToSourceWatch` does later). */
  putObject(object: Resource, sourceLate = false): Resource {
    const key = keyOf(object.kind, object.metadata.namespace ?? '', object.metadata.name ?? '');
    const old = this.copies.get(key);
    const stored = this.stamp(object, old === undefined);
    if (old) stored.metadata.uid = old.metadata.uid;
    this.copies.set(key, stored);
    this.emitCopy(stored, old);
    if (!sourceLate) this.emit(watchedKind(stored), old ? 'MODIFIED' : 'ADDED', stored, true);
    return stored;
  }

  emitToSourceWatch(kind: string, namespace: string, name: string): void {
    const stored = this.copies.get(keyOf(kind, namespace, name));
    if (stored) this.emit(watchedKind(stored), 'MODIFIED', stored, true);
  }

  removeObject(kind: string, namespace: string, name: string): void {
    const key = keyOf(kind, namespace, name);
    const old = this.copies.get(key);
    if (!old) return;
    this.copies.delete(key);
    if (labelled(old)) this.emit(watchedKind(old), 'DELETED', old);
    this.emit(watchedKind(old), 'DELETED', old, true);
  }

  object(kind: string, namespace: string, name: string): Resource | undefined {
    return this.copies.get(keyOf(kind, namespace, name));
  }

  callsOf(method: keyof ClusterApi): number {
    return this.calls.filter((call) => call.method === method).length;
  }

  /**
   * As the API server's watch cache serves a label-selector watch (ours): an object that starts
   * matching is ADDED, one that stops matching is DELETED (previous content, new resourceVersion).
   */
  private emitCopy(current: Resource, old: Resource | undefined): void {
    const was = old !== undefined && labelled(old);
    if (labelled(current)) this.emit(watchedKind(current), was ? 'MODIFIED' : 'ADDED', current);
    else if (was) this.emit(watchedKind(old), 'DELETED', { ...old, metadata: { ...old.metadata, resourceVersion: current.metadata.resourceVersion } });
  }

  /** Records the call; rejects when a failure rule matches. */
  private check(method: keyof ClusterApi, args: readonly unknown[]): Promise<void> {
    this.calls.push({ method, args });
    for (const failure of this.failures) {
      const error = failure(method, args);
      if (error) return Promise.reject(error);
    }
    return Promise.resolve();
  }

  readonly api: ClusterApi = {
    listDistributions: async () => {
      await this.check('listDistributions', []);
      return { items: [...this.distributions.values()].map((rd) => structuredClone(rd)), resourceVersion: String(this.version) };
    },
    listNamespaces: async () => {
      await this.check('listNamespaces', []);
      return { items: [...this.namespaces.values()].map((ns) => structuredClone(ns)), resourceVersion: String(this.version) };
    },
    listCopies: async (kind, labelSelector) => {
      await this.check('listCopies', [kind, labelSelector]);
      const items = [...this.copies.values()].filter(
        (object) => object.kind === kind && object.metadata.labels?.[labelSelector] !== undefined,
      );
      return { items: items.map((object) => structuredClone(object)), resourceVersion: String(this.version) };
    },
    listSource: async (ref) => {
      await this.check('listSource', [ref]);
      const found = this.copies.get(keyOf(ref.kind, ref.namespace, ref.name));
      return { items: found ? [structuredClone(found)] : [], resourceVersion: String(this.version) };
    },
    watch: async (resource, options, callbacks) => {
      await this.check('watch', [resource, options]);
      const set = this.watchers.get(resource) ?? new Map<WatchCallbacks, WatchOptions>();
      set.set(callbacks, options);
      this.watchers.set(resource, set);
      return { stop: () => set.delete(callbacks) };
    },
    getNamespace: async (name) => {
      await this.check('getNamespace', [name]);
      const ns = this.namespaces.get(name);
      return ns ? structuredClone(ns) : undefined;
    },
    lookupDistribution: async (name) => {
      await this.check('lookupDistribution', [name]);
      const rd = this.distributions.get(name);
      return rd ? structuredClone(rd) : undefined;
    },
    getCopy: async (ref) => {
      await this.check('getCopy', [ref]);
      const found = this.copies.get(keyOf(ref.kind, ref.namespace, ref.name));
      return found ? structuredClone(found) : undefined;
    },
    createCopy: async (object) => {
      await this.check('createCopy', [object]);
      const ns = object.metadata.namespace ?? '';
      if (!this.namespaces.has(ns)) throw new FakeApiError(404, 'NotFound', `namespaces "${ns}" not found`);
      if (this.object(object.kind, ns, object.metadata.name ?? '')) throw new FakeApiError(409, 'AlreadyExists');
      return structuredClone(this.putObject(object));
    },
    replaceCopy: async (object) => {
      await this.check('replaceCopy', [object]);
      const held = this.object(object.kind, object.metadata.namespace ?? '', object.metadata.name ?? '');
      if (!held) throw new FakeApiError(404, 'NotFound');
      if (held.metadata.resourceVersion !== object.metadata.resourceVersion) throw new FakeApiError(409, 'Conflict');
      return structuredClone(this.putObject(object));
    },
    deleteCopy: async (ref: CopyRef, uid, resourceVersion) => {
      await this.check('deleteCopy', [ref, uid]);
      const current = this.object(ref.kind, ref.namespace, ref.name);
      if (current && resourceVersion !== undefined && current.metadata.resourceVersion !== resourceVersion) {
        throw new FakeApiError(409, 'Conflict', 'Precondition failed: ResourceVersion in precondition');
      }
      const held = this.object(ref.kind, ref.namespace, ref.name);
      if (!held) throw new FakeApiError(404, 'NotFound');
      if (held.metadata.uid !== uid) throw new FakeApiError(409, 'Conflict', 'Precondition failed: UID in precondition');
      this.removeObject(ref.kind, ref.namespace, ref.name);
    },
    patchDistributionStatus: async (name, status: DistributionStatus) => {
      await this.check('patchDistributionStatus', [name, status]);
      const held = this.distributions.get(name);
      if (!held) throw new FakeApiError(404, 'NotFound');
      const updated = { ...held, status: structuredClone(status) };
      updated.metadata = { ...held.metadata, resourceVersion: this.nextVersion() };
      this.distributions.set(name, updated);
      this.emit('distributions', 'MODIFIED', updated);
      return structuredClone(updated);
    },
    listObjectSyncs: async () => {
      await this.check('listObjectSyncs', []);
      return { items: [...this.objectSyncs.values()].map((os) => structuredClone(os)), resourceVersion: String(this.version) };
    },
    lookupObjectSync: async (namespace, name) => {
      await this.check('lookupObjectSync', [namespace, name]);
      const os = this.objectSyncs.get(`${namespace}/${name}`);
      return os ? structuredClone(os) : undefined;
    },
    patchObjectSyncStatus: async (namespace, name, status) => {
      await this.check('patchObjectSyncStatus', [namespace, name, status]);
      const held = this.objectSyncs.get(`${namespace}/${name}`);
      if (!held) throw new FakeApiError(404, 'NotFound');
      const updated = { ...held, status: structuredClone(status), metadata: { ...held.metadata, resourceVersion: this.nextVersion() } };
      this.objectSyncs.set(`${namespace}/${name}`, updated);
      this.emit('objectsyncs', 'MODIFIED', updated);
      return structuredClone(updated);
    },
    patchObjectSyncFinalizers: async (namespace, name, finalizers, resourceVersion) => {
      await this.check('patchObjectSyncFinalizers', [namespace, name, finalizers, resourceVersion]);
      const key = `${namespace}/${name}`;
      const held = this.objectSyncs.get(key);
      if (!held) throw new FakeApiError(404, 'NotFound');
      if (held.metadata.resourceVersion !== resourceVersion) throw new FakeApiError(409, 'Conflict');
      if (finalizers.length === 0 && held.metadata.deletionTimestamp) {
        this.objectSyncs.delete(key);
        this.emit('objectsyncs', 'DELETED', held);
        return structuredClone(held);
      }
      const updated = { ...held, metadata: { ...held.metadata, finalizers: [...finalizers], resourceVersion: this.nextVersion() } };
      this.objectSyncs.set(key, updated);
      this.emit('objectsyncs', 'MODIFIED', updated);
      return structuredClone(updated);
    },
    createEvent: async (event) => {
      await this.check('createEvent', [event]);
      this.events.push(event);
    },
    getLease: async (namespace, name) => {
      await this.check('getLease', [namespace, name]);
      const lease = this.leases.get(`${namespace}/${name}`);
      return lease ? structuredClone(lease) : undefined;
    },
    createLease: async (lease) => {
      await this.check('createLease', [lease]);
      const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
      if (this.leases.has(key)) throw new FakeApiError(409, 'AlreadyExists');
      const stored = this.stamp<LeaseObject>(lease, true);
      this.leases.set(key, stored);
      return structuredClone(stored);
    },
    replaceLease: async (lease) => {
      await this.check('replaceLease', [lease]);
      const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
      const held = this.leases.get(key);
      if (!held) throw new FakeApiError(404, 'NotFound');
      if (held.metadata.resourceVersion !== lease.metadata.resourceVersion) throw new FakeApiError(409, 'Conflict');
      const stored = this.stamp<LeaseObject>(lease, false);
      this.leases.set(key, stored);
      return structuredClone(stored);
    },
  };
}

function labelled(object: Resource): boolean {
  return object.metadata.labels?.['resource-distributor.io/distribution'] !== undefined;
}

function watchedKind(object: Resource): WatchedResource {
  return kindKeyOf(object.apiVersion, object.kind);
}

export function keyOf(kind: string, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}
