// What the controller does with each cache change, as controller-runtime's builder wires watches to
// handlers: map the change to distribution names (pure triggers) and enqueue them (leader only);
// hand namespace changes to the generator first; and keep the sources and copied kinds that are
// watched in line with what the distributions name.
import type { Metrics } from '../metrics.js';
import type { CacheChange, Caches } from '../k8s/caches.js';
import type { DistributionCatalog } from './distribution-catalog.js';
import type { Generator } from './generator.js';
import { kindKeyOf } from '../domain/kinds.js';
import type { Resource } from '../domain/types.js';
import {
  copyTriggers,
  distributionTriggers,
  kindsOf,
  kindTriggers,
  namedObjectTriggers,
  namedTargetsOf,
  namespaceTriggers,
  objectSyncTriggers,
  sourcesOf,
  sourceTriggers,
} from './triggers.js';

export interface CacheRoutingDeps {
  caches: Pick<Caches, 'sources' | 'copies' | 'kinds' | 'named'>;
  catalog: Pick<DistributionCatalog, 'list' | 'targeting'>;
  generator: Pick<Generator, 'namespaceChanged' | 'settled'>;
  metrics: Pick<Metrics, 'kindsWatched' | 'sourcesWatched' | 'namesWatched'>;
  forbiddenNamespaces: readonly string[];
  /** `namespace`: the change concerns that namespace alone (see pass-scopes.ts). */
  enqueue(names: readonly string[], namespace?: string): void;
  leading(): boolean;
  stopping(): boolean;
}

export interface CacheRouting {
  onCacheChange(event: CacheChange): void;
  /** Watches the sources and the copied kinds the distributions name, and no others. */
  follow(): void;
}

/** Distributions name sources and kinds; a copy gone may have been the last of its kind. */
function changesWhatIsFollowed(event: CacheChange): boolean {
  if (event.resource === 'copies') return event.change.current === undefined;
  return event.resource === 'distributions' || event.resource === 'objectsyncs' || event.resource === 'copy-deleted';
}

/**
 * A copy concerns its distribution; a copy or any other object under a distributed name, every
 * distribution writing that name (it may have been in conflict with it, or be one to adopt).
 */
function objectTriggers(deps: CacheRoutingDeps, event: Extract<CacheChange, { resource: 'copies' | 'named' }>): string[] {
  if (event.resource === 'named') return namedObjectTriggers(event.change, deps.caches.named.concerned(event.kind, event.name));
  return [...new Set([...copyTriggers(event.change), ...namedObjectTriggers(event.change, writersOf(deps, event.change.current ?? event.change.old))])];
}

/** The distributions writing an object's kind and name. */
function writersOf(deps: CacheRoutingDeps, object: Resource | undefined): readonly string[] {
  return object === undefined ? [] : deps.caches.named.concerned(kindKeyOf(object.apiVersion, object.kind), object.metadata.name ?? '');
}

/**
 * A copy we deleted, before its watch event: the other distributions writing its name (one may
 * have been in conflict with it). Its own distribution is the one that deleted it.
 */
function deletedCopyTriggers(deps: CacheRoutingDeps, copy: Resource | undefined): string[] {
  return copy === undefined ? [] : namedObjectTriggers({ old: copy, current: undefined }, writersOf(deps, copy));
}

/** The namespace a change concerns alone: a copy's, or that of an object under a distributed name; undefined for every target. */
function namespaceOf(event: CacheChange): string | undefined {
  if (event.resource === 'copy-deleted') return event.copy?.metadata.namespace;
  if (event.resource !== 'copies' && event.resource !== 'named') return undefined;
  return (event.change.current ?? event.change.old)?.metadata.namespace;
}

/** Only the distributions that may target the namespace, before or after: looked up, not all of them. */
function namespaceNames(deps: CacheRoutingDeps, event: Extract<CacheChange, { resource: 'namespaces' }>): string[] {
  const { old, current } = { old: event.change.old?.info, current: event.change.current?.info };
  const concerned = [...(old ? deps.catalog.targeting(old) : []), ...(current ? deps.catalog.targeting(current) : [])];
  return namespaceTriggers({ old, current }, concerned, deps.forbiddenNamespaces);
}

/** The distribution names a change concerns. */
function namesFor(deps: CacheRoutingDeps, event: CacheChange): string[] {
  switch (event.resource) {
    case 'distributions':
      return distributionTriggers(event.change);
    case 'namespaces':
      return namespaceNames(deps, event);
    case 'copies':
    case 'named':
      return objectTriggers(deps, event);
    case 'sources':
      return sourceTriggers(event.key, deps.catalog.list());
    case 'kinds':
      return kindTriggers(event.key, deps.catalog.list());
    case 'objectsyncs':
      return objectSyncTriggers(event.change, deps.caches.kinds);
    case 'copy-deleted':
      return deletedCopyTriggers(deps, event.copy);
  }
}

export function createCacheRouting(deps: CacheRoutingDeps): CacheRouting {
  const { caches, metrics } = deps;

  function follow(): void {
    const distributions = deps.catalog.list();
    caches.sources.follow(sourcesOf(distributions, caches.kinds));
    const before = caches.copies.followed();
    caches.copies.follow(kindsOf(distributions, caches.kinds));
    caches.named.follow(namedTargetsOf(distributions, caches.kinds));
    metrics.namesWatched.set(caches.named.size().names);
    const after = caches.copies.followed();
    for (const kind of before) if (!after.includes(kind)) metrics.kindsWatched.set({ kind }, 0);
    for (const kind of after) metrics.kindsWatched.set({ kind }, 1);
    metrics.sourcesWatched.set(caches.sources.size());
  }

  // Every replica follows them: its namespace generator copies too. Once per burst of changes (a
  // relist brings every distribution at once), not once per change.
  let followScheduled = false;
  function followSoon(): void {
    if (followScheduled) return;
    followScheduled = true;
    queueMicrotask(() => {
      followScheduled = false;
      if (!deps.stopping()) follow();
    });
  }

  function onCacheChange(event: CacheChange): void {
    // A deleted copy may have been the last one holding its kind's watch.
    if (changesWhatIsFollowed(event)) followSoon();
    if (event.resource !== 'namespaces') {
      if (deps.leading()) deps.enqueue(namesFor(deps, event), namespaceOf(event));
      return;
    }
    const name = event.change.current?.info.name ?? event.change.old?.info.name ?? '';
    deps.generator.namespaceChanged(name);
    if (!deps.leading()) return;
    // A namespace the generator is writing copies into: reconcile once it is done, so that the
    // reconciler finds those copies in the cache instead of racing to write the same objects.
    void deps.generator.settled(name).then(() => {
      if (deps.leading()) deps.enqueue(namesFor(deps, event), name);
    });
  }

  return { onCacheChange, follow };
}
