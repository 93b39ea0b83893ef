// The three things the controller watches: distributions, namespaces, and our copies (Secrets and
// ConfigMaps carrying the distribution label: never every Secret of the cluster).
import { createSourceCache, type SourceCache } from './source-cache.js';
import type { DistributedKind, NamespaceInfo, Resource, ResourceDistribution } from '../domain/types.js';
import { LABEL_DISTRIBUTION } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { ClusterApi, CopyRef, NamespaceObject, WatchedResource } from './cluster-api.js';
import { Reflector } from './reflector.js';
import { createPartSharer } from './shared-parts.js';
import { namespacedKey, Store, type StoreChange } from './store.js';

/** A namespace as kept in memory: what targeting needs, plus identity. */
export interface CachedNamespace {
  metadata: { name: string; uid?: string; resourceVersion?: string };
  info: NamespaceInfo;
}

export function toCachedNamespace(ns: NamespaceObject): CachedNamespace {
  return {
    metadata: { name: ns.metadata.name, uid: ns.metadata.uid, resourceVersion: ns.metadata.resourceVersion },
    info: {
      name: ns.metadata.name,
      labels: ns.metadata.labels ?? {},
      terminating: ns.metadata.deletionTimestamp !== undefined || ns.status?.phase === 'Terminating',
    },
  };
}

const BY_DISTRIBUTION = 'distribution';

function distributionLabel(copy: Resource): readonly string[] {
  const value = copy.metadata.labels?.[LABEL_DISTRIBUTION];
  return value === undefined ? [] : [value];
}

/** Our copies of both kinds, by (kind, namespace, name) and by the distribution label. */
export class CopyCache {
  private readonly share = createPartSharer();
  readonly secrets = new Store<Resource>({ [BY_DISTRIBUTION]: distributionLabel }, namespacedKey, this.share);
  readonly configMaps = new Store<Resource>({ [BY_DISTRIBUTION]: distributionLabel }, namespacedKey, this.share);

  storeFor(kind: string): Store<Resource> {
    return kind === 'Secret' ? this.secrets : this.configMaps;
  }

  get(ref: CopyRef): Resource | undefined {
    return this.storeFor(ref.kind).get(`${ref.namespace}/${ref.name}`);
  }

  byDistribution(name: string): Resource[] {
    return [...this.secrets.byIndex(BY_DISTRIBUTION, name), ...this.configMaps.byIndex(BY_DISTRIBUTION, name)];
  }

  get size(): number {
    return this.secrets.size + this.configMaps.size;
  }
}

export type CacheChange =
  | { resource: 'distributions'; change: StoreChange<ResourceDistribution> }
  | { resource: 'namespaces'; change: StoreChange<CachedNamespace> }
  | { resource: 'copies'; change: StoreChange<Resource> }
  | { resource: 'sources'; key: string };

export interface CacheOptions {
  api: ClusterApi;
  log: Logger;
  onChange(change: CacheChange): void;
  watchTimeoutSeconds?: number;
  stallGraceMs?: number;
}

export interface Caches {
  distributions: Store<ResourceDistribution>;
  namespaces: Store<CachedNamespace>;
  copies: CopyCache;
  /** Sources of distributions, followed as distributions come and go (see createSourceCache). */
  sources: SourceCache;
  start(): void;
  stop(): void;
  synced(): boolean;
  whenSynced(): Promise<void>;
}

/** An existence selector: every copy of every distribution, and nothing else. */
const COPY_SELECTOR = LABEL_DISTRIBUTION;

export function createCaches(options: CacheOptions): Caches {
  const { api, log } = options;
  const distributions = new Store<ResourceDistribution>();
  const namespaces = new Store<CachedNamespace>();
  const copies = new CopyCache();
  const common = { log, watchTimeoutSeconds: options.watchTimeoutSeconds, stallGraceMs: options.stallGraceMs };
  const sources = createSourceCache({ ...common, api, onChange: (key) => options.onChange({ resource: 'sources', key }) });

  const copyReflector = (kind: DistributedKind, resource: WatchedResource): Reflector<Resource> =>
    new Reflector<Resource>({
      ...common,
      resource,
      store: copies.storeFor(kind),
      // Every decision about a copy starts from its kind (which store, which API path, stray or not):
      // the store it lives in is the authority, whatever a list item carried.
      transform: (object) => (object.kind === kind ? object : { ...object, apiVersion: 'v1', kind }),
      list: () => api.listCopies(kind, COPY_SELECTOR),
      watch: (watchOptions, callbacks) => api.watch(resource, { ...watchOptions, labelSelector: COPY_SELECTOR }, callbacks),
      onChange: (change) => options.onChange({ resource: 'copies', change }),
    });

  const reflectors = [
    new Reflector<ResourceDistribution>({
      ...common,
      resource: 'distributions',
      store: distributions,
      list: () => api.listDistributions(),
      watch: (watchOptions, callbacks) => api.watch('distributions', watchOptions, callbacks),
      onChange: (change) => options.onChange({ resource: 'distributions', change }),
    }),
    new Reflector<CachedNamespace>({
      ...common,
      resource: 'namespaces',
      store: namespaces,
      // The list and the watch give full namespaces; only the trimmed form is kept.
      transform: (object) => toCachedNamespace(object),
      list: async () => {
        const result = await api.listNamespaces();
        return { ...result, items: result.items as unknown as CachedNamespace[] };
      },
      watch: (watchOptions, callbacks) => api.watch('namespaces', watchOptions, callbacks),
      onChange: (change) => options.onChange({ resource: 'namespaces', change }),
    }),
    copyReflector('Secret', 'secrets'),
    copyReflector('ConfigMap', 'configmaps'),
  ];

  return {
    distributions,
    namespaces,
    copies,
    sources,
    start: () => reflectors.forEach((reflector) => reflector.start()),
    stop: () => {
      reflectors.forEach((reflector) => reflector.stop());
      sources.stop();
    },
    synced: () => reflectors.every((reflector) => reflector.synced),
    whenSynced: async () => {
      await Promise.all(reflectors.map((reflector) => reflector.whenSynced()));
    },
  };
}
