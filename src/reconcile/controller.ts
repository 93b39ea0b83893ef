// The controller: caches on every replica (admission asks them whether namespaces exist; the
// generator reads them), the work queue and the sweep only on the leader. Composed as
// controller-runtime's builder composes one: the parts (caches, catalog, reconciler, queue, the
// writers outside the reconciler, the sweep), the routing of cache changes to the queue
// (cache-routing.ts), and leadership (leadership.ts).
import type { Clock } from '../domain/clock.js';
import type { KindRegistry } from '../domain/kinds.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { createCaches, type CacheChange, type Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { countRequests, type CountingClusterApi } from '../k8s/counting-cluster-api.js';
import { createEventRecorder } from '../k8s/event-recorder.js';
import type { AccessReviewer } from '../k8s/access-review.js';
import type { LeaseSettings } from '../k8s/leader-election.js';
import type { KubeClient } from '../k8s/kube-client.js';
import { createCacheRouting } from './cache-routing.js';
import { createAuthorGate } from './author-gate.js';
import { createCopyWriter } from './copy-writer.js';
import { createStoredForms } from './stored-forms.js';
import { createGenerator, type Generator } from './generator.js';
import { createLeadership } from './leadership.js';
import { createPodInjector, type PodInjector } from './pod-injector.js';
import { createPlanPreviewer, type PlanPreviewer } from './plan-previewer.js';
import { createPodMaterializer, type PodMaterializer } from './pod-materializer.js';
import { WorkQueue } from './queue.js';
import { PassScopes } from './pass-scopes.js';
import { createReconciler } from './reconciler.js';
import { createSweeper, type Sweeper } from './sweeper.js';
import { createDistributionCatalog, type DistributionCatalog } from './distribution-catalog.js';

/** A distribution with this many copies reconciles long enough to be kept off the last free worker. */
const HEAVY_COPIES = 100;

export interface ControllerSettings {
  sweepIntervalMs: number;
  /** Off: admitted namespaces are not generated at once (the watch-driven reconciler still writes their copies). */
  namespaceGeneration?: boolean;
  /** How long a pod admission waits for the copies it references (default 1.5 s). */
  podWaitMs?: number;
  /** How long a recorded author's denial holds before the next pass asks again (default 1 min). */
  authorDenialTtlMs?: number;
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
  /** The client's request connections, kept open for the writers while this replica leads (default: none kept). */
  connections?: Pick<KubeClient, 'keepOpen'>;
  /** The kinds distributions may copy (default Secret and ConfigMap). */
  kinds?: KindRegistry;
  /** Whether the cluster serves ObjectSyncs (default: not watched). */
  objectSyncs?: boolean;
  /**
   * Asks whether the author recorded on a distribution may still read its source when the source
   * appears or changes (none: distributions act with the rights checked at their admission only).
   */
  accessReviewer?: AccessReviewer;
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

/** The parts, built once; `onCacheChange` is called for every cache change (routed once all exist). */
interface Parts {
  requests: CountingClusterApi;
  caches: Caches;
  catalog: DistributionCatalog;
  queue: WorkQueue;
  /** Queues names for a pass over every target, or (`namespace` given) over that namespace only. */
  enqueue: (names: readonly string[], namespace?: string) => void;
  sweeper: Sweeper;
  generator: Generator;
  materializer: PodMaterializer;
  injector: PodInjector;
}

function buildParts(deps: ControllerDeps, onCacheChange: (change: CacheChange) => void): Parts {
  const { log, clock, metrics, settings } = deps;
  const requests = countRequests(deps.clusterApi, metrics, deps.kinds);
  const api = requests.api;
  const caches = createCaches({
    api,
    kinds: deps.kinds,
    objectSyncs: deps.objectSyncs,
    log,
    onChange: onCacheChange,
    watchTimeoutSeconds: deps.watchTimeoutSeconds,
    stallGraceMs: deps.stallGraceMs,
  });
  const storedForms = createStoredForms({ api, log });
  const writer = createCopyWriter({ api, log, copies: caches.copies, onWritten: storedForms.written });
  const catalog = createDistributionCatalog({ api, caches, clock, log });
  const events = createEventRecorder({ api, clock, log, instance: settings.leaderElection.identity });
  const { applyParallelism, forbiddenNamespaces } = settings;
  const scopes = new PassScopes();
  const authors = deps.accessReviewer === undefined ? undefined : { authors: createAuthorGate({ reviewer: deps.accessReviewer, kinds: caches.kinds, log, ...(settings.authorDenialTtlMs === undefined ? {} : { denialTtlMs: settings.authorDenialTtlMs }) }) };
  const reconciler = createReconciler({ api, caches, catalog, writer, events, clock, log, metrics, applyParallelism, forbiddenNamespaces, scopes, storedForms, ...authors });
  const queue = new WorkQueue({
    concurrency: Math.max(1, settings.concurrency),
    process: (name, signal) => reconciler.reconcile(name, signal),
    log,
    onDepth: (depth) => metrics.queueDepth.set(depth),
    groupOf: (name) => catalog.groupOf(name),
    isHeavy: (name) => caches.copies.countOf(name) >= HEAVY_COPIES,
  });
  // What the generator, the pod materializer and the pod injector share: they write (or name) copies outside the reconciler.
  const outside = { api, caches, catalog, writer, clock, log, metrics, forbiddenNamespaces, ...authors };
  // Distributions, and those copies' labels name (a deleted distribution's leftovers are orphans to
  // remove; they are found by that label): from the label index, not by going over every copy.
  const allNames = (): Set<string> => new Set([...catalog.names(), ...caches.copies.distributionNames()]);
  return {
    requests,
    caches,
    catalog,
    queue,
    enqueue: (names, namespace) => {
      scopes.note(names, namespace);
      queue.addAll(names);
    },
    sweeper: createSweeper({
      intervalMs: settings.sweepIntervalMs,
      names: allNames,
      enqueue: (names) => {
        const all = [...names];
        scopes.note(all);
        queue.addAll(all);
      },
    }),
    generator: createGenerator({ ...outside, parallelism: applyParallelism }),
    materializer: createPodMaterializer({ ...outside, waitMs: settings.podWaitMs ?? 1_500 }),
    injector: createPodInjector(outside),
  };
}

/** The admission side of the contract: what every replica answers from its caches. */
function admissionSide(parts: Parts, deps: ControllerDeps): Pick<Controller, 'namespaceAdmitted' | 'namespaceExists' | 'previewPlan' | 'podAdmitted' | 'podInjection'> {
  const { caches, generator, materializer, injector } = parts;
  return {
    namespaceAdmitted: (ns) => {
      if (deps.settings.namespaceGeneration !== false) generator.namespaceAdmitted(ns);
    },
    podAdmitted: (namespace, refs, options) => materializer.materialize(namespace, refs, options),
    podInjection: (namespace, pod) => injector.inject(namespace, pod),
    previewPlan: createPlanPreviewer({ caches, clock: deps.clock, forbiddenNamespaces: deps.settings.forbiddenNamespaces }),
    namespaceExists: (name) => {
      if (!caches.synced()) return undefined;
      const ns = caches.namespaces.get(name);
      return ns !== undefined && !ns.info.terminating;
    },
  };
}

export function createController(deps: ControllerDeps): RunningController {
  const { log, metrics, settings } = deps;
  let stopping = false;
  // The caches report changes from their start on; routing exists by then (it needs the parts).
  let route: (change: CacheChange) => void = () => undefined;
  const parts = buildParts(deps, (change) => route(change));
  const { requests, caches, queue, sweeper, generator } = parts;
  const leadership = createLeadership({
    election: settings.leaderElection,
    api: requests.api,
    clock: deps.clock,
    log,
    metrics,
    queue,
    sweeper,
    connections: deps.connections ?? { keepOpen: () => undefined },
    writers: settings.applyParallelism,
    stopping: () => stopping,
  });
  const routing = createCacheRouting({
    caches,
    catalog: parts.catalog,
    generator,
    metrics,
    forbiddenNamespaces: settings.forbiddenNamespaces,
    enqueue: parts.enqueue,
    leading: () => leadership.leading(),
    stopping: () => stopping,
  });
  route = (change) => routing.onCacheChange(change);

  return {
    requests,
    caches,
    ...admissionSide(parts, deps),
    start: async () => {
      caches.start();
      await caches.whenSynced();
      routing.follow();
      await caches.copies.whenSynced();
      log.info({ distributions: caches.distributions.size, namespaces: caches.namespaces.size, copies: caches.copies.size }, 'caches synced');
      // Only now: a leader reconciling from empty caches would take every copy for an orphan.
      leadership.start();
    },
    stop: async () => {
      stopping = true;
      // Finish the writes in flight while the lease is still ours, then hand it over.
      await leadership.stop();
      await generator.stop();
      caches.stop();
    },
    synced: () => caches.synced(),
    isLeader: () => leadership.leading(),
    sweepNow: () => {
      if (leadership.leading()) sweeper.sweep();
    },
    idle: async () => {
      // Generations first: a namespace's reconciles are queued once its generation is done.
      await generator.idle();
      await new Promise((resolve) => setImmediate(resolve));
      await queue.idle();
    },
  };
}
