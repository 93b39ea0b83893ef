// Our cluster interface (src/k8s/cluster-api.ts) over the generated world: lists are generated on
// each call, watches stay open and deliver only what the simulation pushes, and writes are
// acknowledged at once (a new resourceVersion, nothing kept). The product's caches, catalog,
// planner and reconciler run over it unchanged; the API server's own cost is not simulated.
import type { ClusterApi, ListResult, NamespaceObject, WatchCallbacks, WatchedResource, WatchEvent } from '../src/k8s/cluster-api.js';
import type { Resource } from '../src/domain/types.js';
import { copiesOfKind, distributionAt, distributionCount, namespaceAt, type WorldShape } from './synthetic-world.js';

function notServed(what: string): never {
  throw new Error(`the simulated cluster does not serve ${what}`);
}

export class SyntheticCluster {
  private version = 1;
  private uids = 0;
  private readonly watchers = new Map<WatchedResource, Set<WatchCallbacks>>();
  /** Writes acknowledged, by method. */
  readonly writes = new Map<string, number>();

  /** Told of every copy created (the simulation times a new namespace's copies by it). */
  onCreate: ((object: Resource) => void) | undefined;

  constructor(private readonly shape: WorldShape) {}

  /** Delivers an event to every open watch of that resource (a namespace created, say). */
  push(resource: WatchedResource, event: WatchEvent): void {
    for (const watcher of this.watchers.get(resource) ?? []) watcher.onEvent(event);
  }

  nextVersion(): string {
    this.version += 1;
    return String(this.version);
  }

  private list<T>(items: T[]): ListResult<T> {
    return { items, resourceVersion: String(this.version) };
  }

  private acknowledge<T extends { metadata: { uid?: string; resourceVersion?: string } }>(method: string, object: T, fresh: boolean): T {
    this.writes.set(method, (this.writes.get(method) ?? 0) + 1);
    const metadata = { ...object.metadata, resourceVersion: this.nextVersion(), ...(fresh ? { uid: `written-${++this.uids}` } : {}) };
    return { ...object, metadata };
  }

  readonly api: ClusterApi = {
    listDistributions: () => Promise.resolve(this.list(Array.from({ length: distributionCount(this.shape) }, (_, i) => distributionAt(this.shape, i)))),
    listNamespaces: () => Promise.resolve(this.list(Array.from({ length: this.shape.namespaces }, (_, i) => namespaceAt(this.shape, i)))),
    listCopies: (kind) => Promise.resolve(this.list<Resource>([...copiesOfKind(this.shape, kind)])),
    listObjectSyncs: () => Promise.resolve(this.list([])),
    listSource: () => Promise.resolve(this.list([])),
    watch: (resource, _options, callbacks) => {
      const set = this.watchers.get(resource) ?? new Set<WatchCallbacks>();
      set.add(callbacks);
      this.watchers.set(resource, set);
      return Promise.resolve({ stop: () => set.delete(callbacks) });
    },
    // Everything there is, is listed: a live read finds nothing the lists did not bring.
    getNamespace: () => Promise.resolve<NamespaceObject | undefined>(undefined),
    lookupDistribution: () => Promise.resolve(undefined),
    // The generated world holds nothing but the copies it lists: a namespace without one holds nothing.
    getCopy: () => Promise.resolve(undefined),
    createCopy: (object) => {
      const written = this.acknowledge('createCopy', object, true);
      this.onCreate?.(written);
      return Promise.resolve(written);
    },
    replaceCopy: (object) => Promise.resolve(this.acknowledge('replaceCopy', object, false)),
    deleteCopy: () => {
      this.writes.set('deleteCopy', (this.writes.get('deleteCopy') ?? 0) + 1);
      return Promise.resolve();
    },
    patchDistributionStatus: (name, status) => {
      const index = Number(name.replace(/^rd-/, ''));
      return Promise.resolve(this.acknowledge('patchDistributionStatus', { ...distributionAt(this.shape, index), status }, false));
    },
    lookupObjectSync: () => Promise.resolve(undefined),
    patchObjectSyncStatus: () => notServed('ObjectSyncs'),
    patchObjectSyncFinalizers: () => notServed('ObjectSyncs'),
    createEvent: () => {
      this.writes.set('createEvent', (this.writes.get('createEvent') ?? 0) + 1);
      return Promise.resolve();
    },
    getLease: () => notServed('leases'),
    createLease: () => notServed('leases'),
    replaceLease: () => notServed('leases'),
  };
}
