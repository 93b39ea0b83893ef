// The two API adapters behind one catalog of distributions. ResourceDistributions are the model
// as they are; each ObjectSync stands for one distribution per destination name (see
// domain/object-sync.ts), whose statuses fold back into the ObjectSync's, and whose copies a
// finalizer on the ObjectSync holds. The reconciler, the generator and the triggers see only
// distributions, whichever API they came from.
import type { Clock } from '../domain/clock.js';
import { canonicalJson } from '../domain/hash.js';
import { podCopyKey, podReferenceKeys } from '../domain/pending-copies.js';
import { injectionMode } from '../domain/pod-injection.js';
import type { PodReferences } from '../domain/pod-references.js';
import { foldStatus, objectSyncKey, reportedDistributionsOf, LEGACY_FINALIZER, OBJECT_SYNC_FINALIZER, OBJECT_SYNC_PREFIX, type ObjectSync } from '../domain/object-sync.js';
import { toRfc3339 } from '../domain/timestamp.js';
import { ANNOTATION_FROM, ANNOTATION_OBJECT_SYNC, type DistributionStatus, type NamespaceInfo, type Resource, type ResourceDistribution } from '../domain/types.js';
import type { Logger } from '../log.js';
import { DISTRIBUTIONS_BY_CANDIDATE, DISTRIBUTIONS_BY_POD_COPY, DISTRIBUTIONS_INJECTING, type Caches } from '../k8s/caches.js';
import { candidateKeys, namespaceKeys } from '../domain/targets.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { isNotFound } from '../k8s/errors.js';

export interface DistributionCatalog {
  get(name: string): ResourceDistribution | undefined;
  list(): ResourceDistribution[];
  names(): string[];
  /** Those whose copy a pod naming these Secrets and ConfigMaps would use (looked up, never a scan of every distribution). */
  referencing(refs: PodReferences): ResourceDistribution[];
  /** Those that inject image-pull Secrets into pods (looked up likewise). */
  injecting(): ResourceDistribution[];
  /** Of those, the ones whose targets can include `ns` (their rules decide whether they do). */
  injectingInto(ns: NamespaceInfo): ResourceDistribution[];
  /** Those whose targets can include `ns` (looked up; their rules decide whether they do). */
  targeting(ns: Pick<NamespaceInfo, 'name' | 'labels'>): ResourceDistribution[];
  /**
   * A live answer for the one decision a lagging cache must not make alone (deleting every copy
   * of a distribution it no longer holds): whether it still exists. `copies` are its copies.
   */
  exists(name: string, copies: readonly Resource[]): Promise<boolean>;
  /** Whether the cache holds the object behind `rd` (its ResourceDistribution, or its ObjectSync) as the API server has it now. */
  current(rd: ResourceDistribution): Promise<boolean>;
  /** Writes the distribution's status where its API keeps it; false when its object is gone. */
  writeStatus(rd: ResourceDistribution, status: DistributionStatus): Promise<boolean>;
  /** Before its first copy: what keeps the copies from outliving it unnoticed (an ObjectSync's finalizer). */
  hold(rd: ResourceDistribution): Promise<void>;
  /** Its copies are gone: let its object go (an ObjectSync's finalizer is removed once all its copies are). */
  release(rd: ResourceDistribution): Promise<void>;
  /** The distribution is gone: drop what was remembered of it. */
  forget(name: string): void;
  /** Whose work it is: an ObjectSync's distributions share their ObjectSync's (`namespace/name`); others are their own. */
  groupOf(name: string): string;
}

export interface CatalogDeps {
  api: ClusterApi;
  caches: Pick<Caches, 'distributions' | 'objectSyncs' | 'copies' | 'kinds'>;
  clock: Clock;
  log: Logger;
}

const isReserved = (name: string): boolean => name.startsWith(OBJECT_SYNC_PREFIX);

/**
 * An ObjectSync's distribution keeps its name: a ResourceDistribution of the same name (admission
 * refuses new ones; one may predate that rule) is not served, so that nobody takes over an
 * ObjectSync's copies, status or finalizer by naming a distribution after them.
 */
function unshadowed(distributions: ResourceDistribution[], synced: readonly ResourceDistribution[]): ResourceDistribution[] {
  if (!distributions.some((rd) => isReserved(rd.metadata.name))) return distributions;
  const taken = new Set(synced.map((rd) => rd.metadata.name));
  return distributions.filter((rd) => !taken.has(rd.metadata.name));
}

/**
 * What the catalog remembers of ObjectSyncs between calls, and the reads over it: the lookups and
 * the writes both translate ObjectSyncs the same way and share what each has learned.
 */
interface ObjectSyncDistributions {
  /** The last status computed for each ObjectSync distribution: the ObjectSync keeps only their fold. */
  statuses: Map<string, DistributionStatus>;
  /** The status of each ObjectSync distribution in the fold the ObjectSync holds: what its passes compare with. */
  reported: Map<string, DistributionStatus>;
  /** Per ObjectSync (`namespace/name`), the write of its fold in flight: the next one waits for it. */
  folding: Map<string, Promise<unknown>>;
  /** The statuses a fold written held: its own pass or another name's may have written it. */
  written: WeakSet<DistributionStatus>;
  /** distribution name -> its ObjectSync (`namespace/name`), for every translation made. */
  origins: Map<string, string>;
  distributionsOfSync: (os: ObjectSync) => ResourceDistribution[];
  fromObjectSyncs: () => ResourceDistribution[];
  withStatus: (rd: ResourceDistribution) => ResourceDistribution;
  objectSyncOf: (rd: ResourceDistribution) => ObjectSync | undefined;
}

function objectSyncDistributions(caches: CatalogDeps['caches']): ObjectSyncDistributions {
  /** The distributions of each ObjectSync as last seen (the store replaces an object when it changes). */
  const translated = new WeakMap<ObjectSync, ResourceDistribution[]>();
  const statuses = new Map<string, DistributionStatus>();
  const reported = new Map<string, DistributionStatus>();
  const folding = new Map<string, Promise<unknown>>();
  const written = new WeakSet<DistributionStatus>();
  const origins = new Map<string, string>();

  function distributionsOfSync(os: ObjectSync): ResourceDistribution[] {
    let found = translated.get(os);
    if (found === undefined) {
      found = reportedDistributionsOf(os, caches.kinds);
      translated.set(os, found);
      for (const rd of found) origins.set(rd.metadata.name, objectSyncKey(os));
    }
    return found;
  }

  function fromObjectSyncs(): ResourceDistribution[] {
    return caches.objectSyncs.list().flatMap(distributionsOfSync);
  }

  /**
   * The same object as long as neither the distribution nor its status changes: what is
   * remembered per distribution object downstream (its resolved source, the template hash, copies
   * found in sync) holds for ObjectSyncs too, instead of being worked out again for every pod.
   */
  const withStatuses = new WeakMap<ResourceDistribution, ResourceDistribution>();
  const withStatus = (rd: ResourceDistribution): ResourceDistribution => {
    const status = reported.get(rd.metadata.name);
    if (status === undefined) return rd;
    const last = withStatuses.get(rd);
    if (last?.status === status) return last;
    const next = { ...rd, status };
    withStatuses.set(rd, next);
    return next;
  };

  function objectSyncOf(rd: ResourceDistribution): ObjectSync | undefined {
    return rd.origin === undefined ? undefined : caches.objectSyncs.get(`${rd.origin.namespace}/${rd.origin.name}`);
  }

  return { statuses, reported, folding, written, origins, distributionsOfSync, fromObjectSyncs, withStatus, objectSyncOf };
}

type CatalogLookups = Pick<DistributionCatalog, 'referencing' | 'injecting' | 'injectingInto' | 'targeting' | 'get' | 'list' | 'names' | 'groupOf'>;

/** The cached distributions of both APIs, as the reconciler, the generator and the triggers ask for them. */
function catalogLookups(caches: CatalogDeps['caches'], syncs: ObjectSyncDistributions): CatalogLookups {
  const { origins, fromObjectSyncs, withStatus } = syncs;

  /** Some of the cached ResourceDistributions, and the ObjectSync distributions that pass `keep`, as list() serves them. */
  function served(some: ResourceDistribution[], keep: (rd: ResourceDistribution) => boolean): ResourceDistribution[] {
    const synced = fromObjectSyncs();
    return [...unshadowed(some, synced), ...synced.filter(keep).map(withStatus)];
  }

  function targeting(ns: Pick<NamespaceInfo, 'name' | 'labels'>): ResourceDistribution[] {
    const keys = namespaceKeys(ns);
    const found = new Map<string, ResourceDistribution>();
    for (const key of keys) for (const rd of caches.distributions.byIndex(DISTRIBUTIONS_BY_CANDIDATE, key)) found.set(rd.metadata.name, rd);
    return served([...found.values()], (rd) => rd.spec?.targets !== undefined && candidateKeys(rd.spec.targets).some((key) => keys.includes(key)));
  }

  return {
    referencing: (refs) => {
      const keys = podReferenceKeys(refs);
      const indexed = keys.flatMap((key) => caches.distributions.byIndex(DISTRIBUTIONS_BY_POD_COPY, key));
      return served(indexed, (rd) => keys.includes(podCopyKey(rd) ?? ''));
    },
    injecting: () => served(caches.distributions.byIndex(DISTRIBUTIONS_INJECTING, 'yes'), (rd) => injectionMode(rd) !== undefined),
    injectingInto: (ns) => targeting(ns).filter((rd) => injectionMode(rd) !== undefined),
    targeting,
    get: (name) => {
      const rd = (isReserved(name) ? fromObjectSyncs().find((candidate) => candidate.metadata.name === name) : undefined) ?? caches.distributions.get(name);
      return rd === undefined ? undefined : withStatus(rd);
    },
    list: () => {
      const synced = fromObjectSyncs();
      return [...unshadowed(caches.distributions.list(), synced), ...synced.map(withStatus)];
    },
    names: () => [...new Set([...caches.distributions.keys(), ...fromObjectSyncs().map((rd) => rd.metadata.name)])],
    groupOf: (name) => {
      if (!isReserved(name)) return name;
      if (!origins.has(name)) fromObjectSyncs();
      return origins.get(name) ?? name;
    },
  };
}

/**
 * An ObjectSync's distribution reports its status: the ObjectSync gets the fold of its
 * distributions' latest ones. Its destination names' passes may end together; their writes go one
 * at a time, each folding what is known when it starts, so that the last to land holds every
 * name's latest status (two writes in flight could land in either order, the staler last). A
 * distribution's status counts as reported once a fold holding it is stored: a failed write
 * leaves it to the next pass to write again.
 */
async function writeObjectSyncStatus(deps: CatalogDeps, syncs: ObjectSyncDistributions, rd: ResourceDistribution, status: DistributionStatus): Promise<boolean> {
  const { statuses, folding } = syncs;
  statuses.set(rd.metadata.name, status);
  const os = syncs.objectSyncOf(rd);
  if (os === undefined) return false;
  // Each turn reads the ObjectSync again: an earlier turn's write may have changed it.
  const key = objectSyncKey(os);
  // A write before this one that failed is reported to its own pass: this one folds afresh either way.
  const turn = (folding.get(key) ?? Promise.resolve())
    .catch(() => undefined)
    .then(() => writeFold(deps, syncs, key));
  folding.set(key, turn);
  const done = (): void => {
    if (folding.get(key) === turn) folding.delete(key);
  };
  turn.then(done, done);
  await turn;
  return syncs.written.has(status);
}

/** Writes the fold of an ObjectSync's distributions' statuses, once each of its destination names has one. */
async function writeFold(deps: CatalogDeps, syncs: ObjectSyncDistributions, key: string): Promise<void> {
  const { api, caches } = deps;
  const { statuses, reported, written } = syncs;
  const os = caches.objectSyncs.get(key);
  if (os === undefined) return;
  const groups = syncs.distributionsOfSync(os).map((group) => group.metadata.name);
  const known = groups.map((name) => statuses.get(name));
  // Each destination name reports once it has been reconciled; the fold waits for all of them.
  if (known.some((status) => status === undefined)) return;
  const statusesNow = known as DistributionStatus[];
  const folded = foldStatus(os, statusesNow, toRfc3339(deps.clock()));
  const stored = (): void => groups.forEach((name, i) => reported.set(name, statusesNow[i]!));
  if (canonicalJson(folded) === canonicalJson(os.status ?? null)) return stored();
  try {
    const patched = await api.patchObjectSyncStatus(os.metadata.namespace, os.metadata.name, folded);
    caches.objectSyncs.observeWrite(patched, os.metadata.resourceVersion);
    for (const status of statusesNow) written.add(status);
    stored();
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

async function setFinalizers({ api, caches }: CatalogDeps, os: ObjectSync, finalizers: string[]): Promise<void> {
  try {
    const written = await api.patchObjectSyncFinalizers(os.metadata.namespace, os.metadata.name, finalizers, os.metadata.resourceVersion ?? '');
    caches.objectSyncs.observeWrite(written, os.metadata.resourceVersion);
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

type CatalogLifecycle = Pick<DistributionCatalog, 'exists' | 'current' | 'writeStatus' | 'hold' | 'release' | 'forget'>;

/** What the reconciler asks of the API behind a distribution: whether it still exists, its status, its finalizer. */
function catalogLifecycle(deps: CatalogDeps, syncs: ObjectSyncDistributions): CatalogLifecycle {
  const { api, caches, log } = deps;
  const { statuses, reported, origins, distributionsOfSync, objectSyncOf } = syncs;
  return {
    exists: async (name, copies) => {
      const named = copies.find((copy) => copy.metadata.annotations?.[ANNOTATION_FROM] === name)?.metadata.annotations?.[ANNOTATION_OBJECT_SYNC];
      if (named === undefined) return (await api.lookupDistribution(name)) !== undefined;
      const [namespace = '', objectSync = ''] = named.split('/');
      const os = await api.lookupObjectSync(namespace, objectSync);
      if (os === undefined || os.metadata.deletionTimestamp !== undefined) return false;
      // An ObjectSync of a kind this process does not allow is not ours to judge: its copies stay.
      const groups = reportedDistributionsOf(os, caches.kinds);
      return groups.length === 0 || groups.some((rd) => rd.metadata.name === name);
    },
    current: async (rd) => {
      const { origin } = rd;
      const live = origin === undefined ? await api.lookupDistribution(rd.metadata.name) : await api.lookupObjectSync(origin.namespace, origin.name);
      return live !== undefined && live.metadata.resourceVersion === rd.metadata.resourceVersion;
    },
    writeStatus: async (rd, status) => {
      if (rd.origin !== undefined) return writeObjectSyncStatus(deps, syncs, rd, status);
      try {
        const written = await api.patchDistributionStatus(rd.metadata.name, status);
        caches.distributions.observeWrite(written, rd.metadata.resourceVersion);
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
    hold: async (rd) => {
      const os = objectSyncOf(rd);
      const finalizers = os?.metadata.finalizers ?? [];
      if (os === undefined || os.metadata.deletionTimestamp !== undefined) return;
      if (finalizers.includes(OBJECT_SYNC_FINALIZER) && !finalizers.includes(LEGACY_FINALIZER)) return;
      await setFinalizers(deps, os, [...finalizers.filter((finalizer) => finalizer !== LEGACY_FINALIZER && finalizer !== OBJECT_SYNC_FINALIZER), OBJECT_SYNC_FINALIZER]);
    },
    forget: (name) => {
      statuses.delete(name);
      reported.delete(name);
      origins.delete(name);
    },
    release: async (rd) => {
      const os = objectSyncOf(rd);
      const finalizers = os?.metadata.finalizers ?? [];
      const held: string[] = finalizers.filter((finalizer) => finalizer === OBJECT_SYNC_FINALIZER || finalizer === LEGACY_FINALIZER);
      if (os?.metadata.deletionTimestamp === undefined || held.length === 0) return;
      const left = distributionsOfSync(os).some((group) => caches.copies.byDistribution(group.metadata.name).length > 0);
      if (left) return;
      log.info({ objectSync: objectSyncKey(os) }, 'copies gone, finalizer removed');
      for (const group of distributionsOfSync(os)) {
        statuses.delete(group.metadata.name);
        reported.delete(group.metadata.name);
      }
      await setFinalizers(
        deps,
        os,
        finalizers.filter((finalizer) => !held.includes(finalizer)),
      );
    },
  };
}

export function createDistributionCatalog(deps: CatalogDeps): DistributionCatalog {
  const syncs = objectSyncDistributions(deps.caches);
  return { ...catalogLookups(deps.caches, syncs), ...catalogLifecycle(deps, syncs) };
}
