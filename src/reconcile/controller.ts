// The controller: caches on every replica (admission asks them whether namespaces exist; the
// generator reads them), the work queue and the sweep only on the leader.
import type { Clock } from '../domain/clock.js';
import type { KindRegistry } from '../domain/kinds.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { createCaches, type CacheChange, type Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { countRequests, type CountingClusterApi } from '../k8s/counting-cluster-api.js';
import { createEventRecorder } from '../k8s/event-recorder.js';
import { LeaderElector, leaseStoreFromApi, type LeaseSettings } from '../k8s/leader-election.js';
import { createCopyWriter } from './copy-writer.js';
import { createGenerator } from './generator.js';
import { createPodInjector, type PodInjector } from './pod-injector.js';
import { createPlanPreviewer, type PlanPreviewer } from './plan-previewer.js';
import { createPodMaterializer, type PodMaterializer } from './pod-materializer.js';
import { WorkQueue } from './queue.js';
import { createReconciler } from './reconciler.js';
import { createSweeper } from './sweeper.js';
import { createDistributionCatalog } from './distribution-catalog.js';
import { copyTriggers, distributionTriggers, kindsOf, kindTriggers, namespaceTriggers, objectSyncTriggers, sourcesOf, sourceTriggers } from './triggers.js';

/** A distribution with this many copies reconciles long enough to be kept off the last free worker. */
const HEAVY_COPIES = 100;

export interface ControllerSettings {
  sweepIntervalMs: number;
  /** Off: admitted namespaces are not generated at once (the watch-driven reconciler still writes their copies). */
  namespaceGeneration?: boolean;
  /** How long a pod admission waits for the copies it references (default 1.5 s). */
  podWaitMs?: number;
  concurrency: number;
  applyParallelism: number;
  forbiddenNamespaces: readonly string[];
  leaderElection: LeaseSettings & { enabled: boolean };
}

export interface ControllerDeps {
  log: Logger;
  clock: Clock;
  metrics: Metrics;
  settings: ControllerSettings;
  /** The API the controller reads and writes through (tests: an in-memory double, or a wrapped client). */
  clusterApi: ClusterApi;
  /** The kinds distributions may copy (default Secret and ConfigMap). */
  kinds?: KindRegistry;
  /** Whether the cluster serves ObjectSyncs (default: not watched). */
  objectSyncs?: boolean;
  /** Watch timeouts and stall detection (defaults: 300 s, +30 s). */
  watchTimeoutSeconds?: number;
  stallGraceMs?: number;
}

export interface Controller {
  start(): Promise<void>;
  stop(): Promise<void>;
  synced(): boolean;
  isLeader(): boolean;
  namespaceAdmitted(ns: { name: string; uid: string }): void;
  namespaceExists(name: string): boolean | undefined;
  /** What a distribution being admitted would do, from the caches; undefined when they cannot tell. */
  previewPlan: PlanPreviewer;
  /** A pod is being admitted: write the copies it references that are still missing (see PodMaterializer). */
  podAdmitted: PodMaterializer['materialize'];
  /** A pod is being created: the image-pull Secrets it gets named (see PodInjector). */
  podInjection: PodInjector['inject'];
}

/** What tests and tools may use beyond the contract. */
export interface RunningController extends Controller {
  /** Every API request made so far, by verb (counts reset with `requests.reset()`). */
  requests: CountingClusterApi;
  caches: Caches;
  /** Enqueues every distribution now (leader only). */
  sweepNow(): void;
  /** Resolves when the queue is empty and no reconcile or generation runs. */
  idle(): Promise<void>;
}

export function createController(deps: ControllerDeps): RunningController {
  const { log, clock, metrics, settings } = deps;
  const election = settings.leaderElection;
  const requests = countRequests(deps.clusterApi, metrics, deps.kinds);
  const api = requests.api;
  let leading = false;
  let stopping = false;

  const caches: Caches = createCaches({
    api,
    kinds: deps.kinds,
    objectSyncs: deps.objectSyncs,
    log,
    onChange: (change) => onCacheChange(change),
    watchTimeoutSeconds: deps.watchTimeoutSeconds,
    stallGraceMs: deps.stallGraceMs,
  });
  const writer = createCopyWriter({ api, log, copies: caches.copies });
  const catalog = createDistributionCatalog({ api, caches, clock, log });
  const reconciler = createReconciler({
    api,
    caches,
    catalog,
    writer,
    events: createEventRecorder({ api, clock, log, instance: election.identity }),
    clock,
    log,
    metrics,
    applyParallelism: settings.applyParallelism,
    forbiddenNamespaces: settings.forbiddenNamespaces,
  });
  const queue = new WorkQueue({
    concurrency: Math.max(1, settings.concurrency),
    process: (name, signal) => reconciler.reconcile(name, signal),
    log,
    onDepth: (depth) => metrics.queueDepth.set(depth),
    groupOf: (name) => catalog.groupOf(name),
    isHeavy: (name) => caches.copies.countOf(name) >= HEAVY_COPIES,
  });
  // What the generator, the pod materializer and the pod injector share: they write (or name) copies outside the reconciler.
  const outside = { api, caches, catalog, writer, clock, log, metrics, forbiddenNamespaces: settings.forbiddenNamespaces };
  const generator = createGenerator({ ...outside, parallelism: settings.applyParallelism });
  const materializer = createPodMaterializer({ ...outside, waitMs: settings.podWaitMs ?? 1_500 });
  const injector = createPodInjector(outside);
  // Distributions, and names copies point at (a deleted distribution's leftovers are orphans to remove).
  const allNames = (): Set<string> =>
    new Set([
      ...catalog.names(),
      ...caches.copies.list().flatMap((copy) => copyTriggers({ current: copy })),
    ]);
  const sweeper = createSweeper({ intervalMs: settings.sweepIntervalMs, names: allNames, enqueue: (names) => queue.addAll(names) });

  /** Watches the sources and the copied kinds the distributions name, and no others. */
  function follow(): void {
    const distributions = catalog.list();
    caches.sources.follow(sourcesOf(distributions));
    const before = caches.copies.followed();
    caches.copies.follow(kindsOf(distributions));
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
      if (!stopping) follow();
    });
  }

  /** Distributions name sources and kinds; a copy gone may have been the last of its kind. */
  function changesWhatIsFollowed(event: CacheChange): boolean {
    if (event.resource === 'copies') return event.change.current === undefined;
    return event.resource === 'distributions' || event.resource === 'objectsyncs' || event.resource === 'copy-deleted';
  }

  function onCacheChange(event: CacheChange): void {
    // A deleted copy may have been the last one holding its kind's watch.
    if (changesWhatIsFollowed(event)) followSoon();
    if (event.resource !== 'namespaces') {
      if (leading) queue.addAll(namesFor(event));
      return;
    }
    const name = event.change.current?.info.name ?? event.change.old?.info.name ?? '';
    generator.namespaceChanged(name);
    if (!leading) return;
    // A namespace the generator is writing copies into: reconcile once it is done, so that the
    // reconciler finds those copies in the cache instead of racing to write the same objects.
    void generator.settled(name).then(() => {
      if (leading) queue.addAll(namesFor(event));
    });
  }

  function namesFor(event: CacheChange): string[] {
    switch (event.resource) {
      case 'distributions':
        return distributionTriggers(event.change);
      case 'namespaces':
        return namespaceTriggers(
          { old: event.change.old?.info, current: event.change.current?.info },
          catalog.list(),
          settings.forbiddenNamespaces,
        );
      case 'copies':
        return copyTriggers(event.change);
      case 'sources':
        return sourceTriggers(event.key, catalog.list());
      case 'kinds':
        return kindTriggers(event.key, catalog.list());
      case 'objectsyncs':
        return objectSyncTriggers(event.change, caches.kinds);
      case 'copy-deleted':
        return [];
    }
  }

  function startLeading(): void {
    if (stopping) return;
    leading = true;
    metrics.isLeader.set(1);
    queue.start();
    sweeper.start();
  }

  /** Resolves once no reconcile runs, also when leadership already ended (stop() must wait for those). */
  function stopLeading(): Promise<void> {
    if (leading) {
      leading = false;
      metrics.isLeader.set(0);
      sweeper.stop();
    }
    return queue.stop();
  }

  const elector = election.enabled
    ? new LeaderElector({
        ...election,
        store: leaseStoreFromApi(api, election.leaseNamespace, election.leaseName),
        clock,
        log,
        onStartedLeading: startLeading,
        onStoppedLeading: () => void stopLeading(),
      })
    : undefined;

  return {
    requests,
    caches,
    start: async () => {
      caches.start();
      await caches.whenSynced();
      follow();
      await caches.copies.whenSynced();
      log.info({ distributions: caches.distributions.size, namespaces: caches.namespaces.size, copies: caches.copies.size }, 'caches synced');
      // Only now: a leader reconciling from empty caches would take every copy for an orphan.
      if (elector) elector.start();
      else startLeading();
    },
    stop: async () => {
      stopping = true;
      // Finish the writes in flight while the lease is still ours, then hand it over.
      await stopLeading();
      await elector?.stop();
      await generator.stop();
      caches.stop();
    },
    synced: () => caches.synced(),
    isLeader: () => leading,
    namespaceAdmitted: (ns) => {
      if (settings.namespaceGeneration !== false) generator.namespaceAdmitted(ns);
    },
    podAdmitted: (namespace, refs, options) => materializer.materialize(namespace, refs, options),
    podInjection: (namespace, pod) => injector.inject(namespace, pod),
    previewPlan: createPlanPreviewer({ caches, clock, forbiddenNamespaces: settings.forbiddenNamespaces }),
    namespaceExists: (name) => {
      if (!caches.synced()) return undefined;
      const ns = caches.namespaces.get(name);
      return ns !== undefined && !ns.info.terminating;
    },
    sweepNow: () => {
      if (leading) sweeper.sweep();
    },
    idle: async () => {
      // Generations first: a namespace's reconciles are queued once its generation is done.
      await generator.idle();
      await new Promise((resolve) => setImmediate(resolve));
      await queue.idle();
    },
  };
}
