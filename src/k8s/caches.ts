// The three things the controller watches: distributions, namespaces, and our copies (Secrets and
// ConfigMaps carrying the distribution label: never every Secret of the cluster).
import { createSourceCache, type SourceCache } from './source-cache.js';
import { apiVersionFor, CORE_REGISTRY, type ApiKind, type KindKey, type KindRegistry } from '../domain/kinds.js';
import { orphanIntent, type ObjectSync } from '../domain/object-sync.js';
import { isDistributionRef } from '../domain/ownership.js';
import { podCopyKey } from '../domain/pending-copies.js';
import { injectionMode } from '../domain/pod-injection.js';
import { candidateKeys, labelPairs } from '../domain/targets.js';
import type { NamespaceInfo, Resource, ResourceDistribution } from '../domain/types.js';
import { LABEL_DISTRIBUTION } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { ClusterApi, CopyRef, NamespaceObject } from './cluster-api.js';
import { Reflector, type ReflectorOptions } from './reflector.js';
import { createNamedObjects, type NamedObjects } from './named-objects.js';
import { createPartSharer, type PartSharer } from './shared-parts.js';
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

/**
 * Indexes of distributions for pod admission, which must not scan every distribution per pod:
 * by what a pod can name (podCopyKey), and those that inject image-pull Secrets (under `yes`).
 */
export const DISTRIBUTIONS_BY_POD_COPY = 'pod-copy';
/** Namespaces by each `key=value` label they carry: a pass over a selector looks up its candidates (see targetCandidates). */
export const NAMESPACES_BY_LABEL = 'label';
export const DISTRIBUTIONS_INJECTING = 'injecting';
/**
 * Distributions by where their targets can be (see candidateKeys): a namespace looks up its own
 * keys (namespaceKeys) to find those that may target it, instead of testing every distribution.
 */
export const DISTRIBUTIONS_BY_CANDIDATE = 'candidate';

const distributionIndexes = {
  [DISTRIBUTIONS_BY_POD_COPY]: (rd: ResourceDistribution): readonly string[] => {
    const key = podCopyKey(rd);
    return key === undefined ? [] : [key];
  },
  [DISTRIBUTIONS_INJECTING]: (rd: ResourceDistribution): readonly string[] => (injectionMode(rd) === undefined ? [] : ['yes']),
  [DISTRIBUTIONS_BY_CANDIDATE]: (rd: ResourceDistribution): readonly string[] => (rd.spec?.targets === undefined ? [] : candidateKeys(rd.spec.targets)),
};

function distributionLabel(copy: Resource): readonly string[] {
  const value = copy.metadata.labels?.[LABEL_DISTRIBUTION];
  return value === undefined ? [] : [value];
}

interface FollowedKind {
  store: Store<Resource>;
  reflector: Reflector<Resource>;
}

/**
 * Our copies, per kind, by (namespace, name) and by the distribution label. A kind is watched
 * (by our label only) from the first distribution of that kind until no distribution copies it
 * and no copy of it is still controlled by one (the last ones may be orphans to remove).
 */
export class CopyCache {
  private readonly share = createPartSharer();
  private readonly kinds = new Map<KindKey, FollowedKind>();

  constructor(
    /** `share` is what the store keeps of a copy: a list hands it each copy as its page arrives. */
    private readonly startWatch: (key: KindKey, store: Store<Resource>, share: PartSharer) => Reflector<Resource>,
    /**
     * A copy left the cache by our own delete (its watch event then changes nothing): a kind may no
     * longer need watching, and the other writers of its name may now write there. `copy` is the
     * copy removed, undefined when its watch event came first (which told them already).
     */
    private readonly onOwnDelete: (copy: Resource | undefined) => void = () => undefined,
  ) {}

  /** Our own successful delete, before its watch event arrives. */
  observeDelete(ref: CopyRef, uid: string): void {
    const key = `${ref.namespace}/${ref.name}`;
    const store = this.store(ref.kind);
    const held = store?.get(key);
    store?.observeDelete(key, uid);
    this.onOwnDelete(held?.metadata.uid === uid ? held : undefined);
  }

  /** The store of a followed kind; undefined for a kind nobody copies. */
  store(key: KindKey): Store<Resource> | undefined {
    return this.kinds.get(key)?.store;
  }

  get(ref: CopyRef): Resource | undefined {
    return this.store(ref.kind)?.get(`${ref.namespace}/${ref.name}`);
  }

  /** How many copies of the distribution are cached (a queue asks it for every name it starts). */
  countOf(name: string): number {
    let count = 0;
    for (const { store } of this.kinds.values()) count += store.countByIndex(BY_DISTRIBUTION, name);
    return count;
  }

  byDistribution(name: string): Resource[] {
    if (this.kinds.size === 1) for (const { store } of this.kinds.values()) return store.byIndex(BY_DISTRIBUTION, name);
    return [...this.kinds.values()].flatMap(({ store }) => store.byIndex(BY_DISTRIBUTION, name));
  }

  list(): Resource[] {
    return [...this.kinds.values()].flatMap(({ store }) => store.list());
  }

  /** The distributions the cached copies' labels name, from the index (no copy is looked at). */
  distributionNames(): Set<string> {
    const names = new Set<string>();
    for (const { store } of this.kinds.values()) for (const name of store.indexValues(BY_DISTRIBUTION)) names.add(name);
    return names;
  }

  get size(): number {
    return [...this.kinds.values()].reduce((sum, { store }) => sum + store.size, 0);
  }

  /** Whether the kind's copies are known (its first list answered). */
  synced(key: KindKey): boolean {
    return this.kinds.get(key)?.reflector.synced === true;
  }

  followed(): KindKey[] {
    return [...this.kinds.keys()];
  }

  /** Watches these kinds from now on, plus those still holding copies a distribution controls. */
  follow(wanted: ReadonlySet<KindKey>): void {
    for (const [key, entry] of this.kinds) {
      if (wanted.has(key) || entry.store.list().some(isControlledCopy)) continue;
      entry.reflector.stop();
      this.kinds.delete(key);
    }
    for (const key of wanted) {
      if (this.kinds.has(key)) continue;
      const store = new Store<Resource>({ [BY_DISTRIBUTION]: distributionLabel }, namespacedKey, this.share);
      this.kinds.set(key, { store, reflector: this.startWatch(key, store, this.share) });
    }
  }

  whenSynced(): Promise<void> {
    return Promise.all([...this.kinds.values()].map(({ reflector }) => reflector.whenSynced())).then(() => undefined);
  }

  stop(): void {
    for (const { reflector } of this.kinds.values()) reflector.stop();
    this.kinds.clear();
  }
}

function apiVersionOf(kind: ApiKind | undefined): string {
  return kind === undefined ? 'v1' : apiVersionFor(kind);
}

function isControlledCopy(copy: Resource): boolean {
  return copy.metadata.ownerReferences?.some((ref) => ref.controller === true && isDistributionRef(ref)) === true;
}

export type CacheChange =
  | { resource: 'distributions'; change: StoreChange<ResourceDistribution> }
  | { resource: 'objectsyncs'; change: StoreChange<ObjectSync> }
  | { resource: 'namespaces'; change: StoreChange<CachedNamespace> }
  | { resource: 'copies'; change: StoreChange<Resource> }
  | { resource: 'sources'; key: string }
  /** An object of a distributed kind and name without our label (see named-objects.ts). */
  | { resource: 'named'; kind: KindKey; name: string; change: StoreChange<Resource> }
  /** A kind's copies are known from now on: its distributions can be reconciled. */
  | { resource: 'kinds'; key: KindKey }
  /** We deleted a copy (see CopyCache.observeDelete). */
  | { resource: 'copy-deleted'; copy: Resource | undefined };

export interface CacheOptions {
  api: ClusterApi;
  log: Logger;
  onChange(change: CacheChange): void;
  /** The kinds copies may be of (default Secret and ConfigMap). */
  kinds?: KindRegistry;
  /** Whether the cluster serves ObjectSyncs (their CRD is installed): only then are they watched. */
  objectSyncs?: boolean;
  watchTimeoutSeconds?: number;
  stallGraceMs?: number;
}

export interface Caches {
  distributions: Store<ResourceDistribution>;
  /** Empty when the cluster does not serve them. */
  objectSyncs: Store<ObjectSync>;
  namespaces: Store<CachedNamespace>;
  copies: CopyCache;
  /** Sources of distributions, followed as distributions come and go (see createSourceCache). */
  sources: SourceCache;
  /** What else stands under each distributed kind and name (no label of ours), metadata only (see named-objects.ts). */
  named: NamedObjects;
  /** The kinds distributions may copy. */
  kinds: KindRegistry;
  start(): void;
  stop(): void;
  synced(): boolean;
  whenSynced(): Promise<void>;
}

/** An existence selector: every copy of every distribution, and nothing else. */
const COPY_SELECTOR = LABEL_DISTRIBUTION;

/** What every reflector of the caches is given alike. */
type ReflectorCommon = Pick<ReflectorOptions<Resource>, 'log' | 'watchTimeoutSeconds' | 'stallGraceMs'>;

/** Copies are watched per kind, from the moment a distribution first copies that kind. */
function createCopyCache(options: CacheOptions, kinds: KindRegistry, common: ReflectorCommon): CopyCache {
  const { api } = options;
  return new CopyCache((key, store, share) => {
    const kind = kinds.byKey(key);
    const reflector = new Reflector<Resource>({
      ...common,
      resource: key,
      store,
      // Every decision about a copy starts from its kind (which store, which API path, stray or not):
      // the store it lives in is the authority, whatever a list item carried.
      transform: (object) => (object.kind === kind?.kind ? object : { ...object, apiVersion: apiVersionOf(kind), kind: kind?.kind ?? key }),
      list: () => api.listCopies(key, COPY_SELECTOR, share),
      watch: (watchOptions, callbacks) => api.watch(key, { ...watchOptions, labelSelector: COPY_SELECTOR }, callbacks),
      onChange: (change) => options.onChange({ resource: 'copies', change }),
    });
    reflector.start();
    void reflector.whenSynced().then(() => options.onChange({ resource: 'kinds', key }));
    return reflector;
  }, (copy) => options.onChange({ resource: 'copy-deleted', copy }));
}

export function createCaches(options: CacheOptions): Caches {
  const { api, log } = options;
  const distributions = new Store<ResourceDistribution>(distributionIndexes);
  const objectSyncs = new Store<ObjectSync>(undefined, namespacedKey);
  const namespaces = new Store<CachedNamespace>({ [NAMESPACES_BY_LABEL]: (ns) => labelPairs(ns.info.labels) });
  const common = { log, watchTimeoutSeconds: options.watchTimeoutSeconds, stallGraceMs: options.stallGraceMs };
  const kinds = options.kinds ?? CORE_REGISTRY;
  const copies = createCopyCache(options, kinds, common);
  const sources = createSourceCache({ ...common, api, onChange: (key) => options.onChange({ resource: 'sources', key }) });
  const named = createNamedObjects({ ...common, api, onChange: (kind, name, change) => options.onChange({ resource: 'named', kind, name, change }) });

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
    ...(options.objectSyncs === true
      ? [
          new Reflector<ObjectSync>({
            ...common,
            resource: 'objectsyncs',
            store: objectSyncs,
            // Deleted with propagation Orphan: said by a finalizer the garbage collector soon removes.
            transform: (object) => orphanIntent(object, objectSyncs.get(namespacedKey(object))),
            list: () => api.listObjectSyncs(),
            watch: (watchOptions, callbacks) => api.watch('objectsyncs', watchOptions, callbacks),
            onChange: (change) => options.onChange({ resource: 'objectsyncs', change }),
          }),
        ]
      : []),
  ];

  return {
    distributions,
    objectSyncs,
    namespaces,
    copies,
    sources,
    named,
    kinds,
    start: () => reflectors.forEach((reflector) => reflector.start()),
    stop: () => {
      reflectors.forEach((reflector) => reflector.stop());
      copies.stop();
      sources.stop();
      named.stop();
    },
    synced: () => reflectors.every((reflector) => reflector.synced),
    whenSynced: async () => {
      await Promise.all(reflectors.map((reflector) => reflector.whenSynced()));
    },
  };
}
