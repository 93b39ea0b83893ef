// "Generate on create": when the namespace webhook admits a namespace, write the copies of every
// distribution that targets it as soon as it exists, instead of waiting for the leader's watch.
// Runs on every replica; writes through the same copy writer as the reconciler, so existing objects
// go through the same ownership rules. Best effort: the reconciler remains the source of truth.
import type { Clock } from '../domain/clock.js';
import { writesHeldBack } from '../domain/plan.js';
import { forbiddenFor, isTargeted } from '../domain/targets.js';
import type { NamespaceInfo } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Caches } from '../k8s/caches.js';
import { toCachedNamespace } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { describeApiError } from '../k8s/errors.js';
import { mapBounded } from '../bounded.js';
import type { CopyWriter } from './copy-writer.js';
import { permitted, type AuthorGate } from './author-gate.js';
import { resolveDistribution } from './distributable.js';
import { writeOneCopy } from './write-one-copy.js';
import type { DistributionCatalog } from './distribution-catalog.js';

export interface GeneratorDeps {
  api: ClusterApi;
  caches: Pick<Caches, 'namespaces' | 'copies' | 'sources' | 'kinds'>;
  /** The distributions, of either API. */
  catalog: Pick<DistributionCatalog, 'targeting'>;
  writer: CopyWriter;
  clock: Clock;
  log: Logger;
  metrics: Pick<Metrics, 'generationDuration' | 'generationSkipped'>;
  forbiddenNamespaces: readonly string[];
  parallelism: number;
  /** Give up quietly if the namespace has not appeared by then (its creation was rejected later). */
  waitTimeoutMs?: number;
  /** The cache had time to see it: then ask the API server directly, once. */
  pollAfterMs?: number;
  /** Generations at once; namespaces admitted beyond that are left to the reconciler (default 256). */
  maxPending?: number;
  /** An admitted UPDATE of an existing namespace: how long to wait for the update to reach the cache. */
  updateSettleMs?: number;
  /** Whether authors may still read their sources (none: every copy is written). */
  authors?: AuthorGate;
}

export interface Generator {
  namespaceAdmitted(ns: { name: string; uid: string }): void;
  /** The namespace cache saw a change to this namespace (wakes waiting generations). */
  namespaceChanged(name: string): void;
  /** Resolves when no generation for a namespace of that name is running. */
  settled(name: string): Promise<void>;
  /** Resolves when no generation is running. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

interface Task {
  name: string;
  promise: Promise<void>;
  again: boolean;
}

/** Generations waiting for a namespace to change, woken by the namespace cache (or by stop). */
interface NamespaceChanges {
  changed: (name: string) => void;
  /** Resolves true on the next change of that namespace, false after `ms` without one. */
  nextChange: (name: string, ms: number) => Promise<boolean>;
  wakeAll: () => void;
}

function namespaceChanges(): NamespaceChanges {
  const waiters = new Map<string, Set<() => void>>();

  function changed(name: string): void {
    const set = waiters.get(name);
    waiters.delete(name);
    for (const wake of set ?? []) wake();
  }

  function nextChange(name: string, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const set = waiters.get(name) ?? new Set<() => void>();
      const done = (changed: boolean): void => {
        clearTimeout(timer);
        set.delete(wake);
        resolve(changed);
      };
      const wake = (): void => done(true);
      const timer = setTimeout(() => done(false), ms);
      set.add(wake);
      waiters.set(name, set);
    });
  }

  return {
    changed,
    nextChange,
    wakeAll: () => {
      for (const name of [...waiters.keys()]) changed(name);
    },
  };
}

/** What the parts of a generator share: its deps and settings, the changes it waits on, and whether it is stopped. */
interface GeneratorContext {
  deps: GeneratorDeps;
  waitTimeoutMs: number;
  pollAfterMs: number;
  updateSettleMs: number;
  changes: NamespaceChanges;
  isStopped: () => boolean;
}

interface NamespaceLookup {
  /** The namespace of that uid, if the cache holds it. */
  cached: (name: string, uid: string) => NamespaceInfo | undefined;
  waitForNamespace: (name: string, uid: string) => Promise<NamespaceInfo | undefined>;
}

function namespaceLookup({ deps, waitTimeoutMs, pollAfterMs, changes, isStopped }: GeneratorContext): NamespaceLookup {
  const { api, caches, log, clock } = deps;

  function cached(name: string, uid: string): NamespaceInfo | undefined {
    const ns = caches.namespaces.get(name);
    return ns?.metadata.uid === uid ? ns.info : undefined;
  }

  async function polled(name: string, uid: string): Promise<NamespaceInfo | undefined> {
    try {
      const ns = await api.getNamespace(name);
      return ns?.metadata.uid === uid ? toCachedNamespace(ns).info : undefined;
    } catch (error) {
      log.debug({ ns: name, err: describeApiError(error).message }, 'namespace poll failed');
      return undefined;
    }
  }

  /**
   * The namespace from the cache as soon as its watch delivers it. Asked of the API server once,
   * should the cache lag: admitted namespaces that never appear (rejected later in the chain, or
   * reviews sent to us directly) must not turn into a stream of reads.
   */
  async function waitForNamespace(name: string, uid: string): Promise<NamespaceInfo | undefined> {
    const started = clock().getTime();
    let asked = false;
    for (;;) {
      const found = cached(name, uid);
      if (found || isStopped()) return found;
      const elapsed = clock().getTime() - started;
      if (elapsed >= waitTimeoutMs) return undefined;
      if (elapsed >= pollAfterMs && !asked) {
        asked = true;
        const fromApi = await polled(name, uid);
        if (fromApi || isStopped()) return fromApi;
      }
      await changes.nextChange(name, Math.min(asked ? waitTimeoutMs - elapsed : pollAfterMs - elapsed, waitTimeoutMs - elapsed));
    }
  }

  return { cached, waitForNamespace };
}

/** One generation of one admitted namespace: find it, then write the copies of what targets it. */
function generation(context: GeneratorContext): (name: string, uid: string) => Promise<void> {
  const { deps, updateSettleMs, changes, isStopped } = context;
  const { caches, log, clock } = deps;
  const { cached, waitForNamespace } = namespaceLookup(context);

  async function writeCopies(ns: NamespaceInfo): Promise<number> {
    // Looked up by the namespace's name and labels: a new namespace costs the distributions that may target it, not all of them.
    const matching = deps.catalog
      .targeting(ns)
      .filter((rd) => !rd.metadata.deletionTimestamp && isTargeted(rd.spec.targets, ns, forbiddenFor(rd, deps.forbiddenNamespaces)))
      .flatMap((rd) => {
        // A source not read yet, or missing: the reconciler handles it once it is known.
        const resolved = resolveDistribution(rd, caches);
        return resolved.state === 'ready' && !writesHeldBack(resolved.rd) ? [resolved.rd] : [];
      });
    // One whose author may no longer read its source is the reconciler's to report.
    const allowed = await permitted(deps.authors, caches.sources, matching);
    await mapBounded(allowed, deps.parallelism, (rd) => writeOneCopy(deps, rd, ns, isStopped));
    return allowed.length;
  }

  return async function generate(name: string, uid: string): Promise<void> {
    const admittedAt = clock().getTime();
    const existing = cached(name, uid);
    if (existing) {
      // Admitted while it already existed: an UPDATE not stored yet. Write for what is known now,
      // and again once the update lands (its labels may bring new targets).
      const next = changes.nextChange(name, updateSettleMs);
      await writeCopies(existing);
      const landed = (await next) ? cached(name, uid) : undefined;
      if (landed && !isStopped()) await writeCopies(landed);
      return;
    }
    const ns = await waitForNamespace(name, uid);
    if (!ns) {
      if (!isStopped()) log.debug({ ns: name, uid }, 'admitted namespace never appeared');
      return;
    }
    const written = await writeCopies(ns);
    deps.metrics.generationDuration.observe((clock().getTime() - admittedAt) / 1000);
    if (written > 0) log.info({ ns: name, distributions: written }, 'namespace generated');
  };
}

export function createGenerator(deps: GeneratorDeps): Generator {
  const { log } = deps;
  const maxPending = deps.maxPending ?? 256;
  const tasks = new Map<string, Task>();
  const changes = namespaceChanges();
  let stopped = false;
  const generate = generation({
    deps,
    waitTimeoutMs: deps.waitTimeoutMs ?? 30_000,
    pollAfterMs: deps.pollAfterMs ?? 2_000,
    updateSettleMs: deps.updateSettleMs ?? 2_000,
    changes,
    isStopped: () => stopped,
  });

  function run(name: string, uid: string): void {
    const task: Task = { name, again: false, promise: Promise.resolve() };
    task.promise = (async () => {
      try {
        do {
          task.again = false;
          await generate(name, uid);
        } while (task.again && !stopped);
      } catch (error) {
        // Nothing above should throw; if it does, it must neither crash the process nor pass unseen.
        log.error({ ns: name, uid, err: error instanceof Error ? error.message : String(error) }, 'generation crashed');
      } finally {
        tasks.delete(uid);
      }
    })();
    tasks.set(uid, task);
  }

  return {
    namespaceAdmitted: ({ name, uid }) => {
      if (stopped) return;
      const task = tasks.get(uid);
      if (task) task.again = true;
      else if (tasks.size < maxPending) run(name, uid);
      else {
        // A flood of admissions (most of them for namespaces that never appear) must not grow
        // without bound: the leader's namespace watch still writes these copies.
        deps.metrics.generationSkipped.inc();
        log.debug({ ns: name, pending: tasks.size }, 'generation skipped: too many pending');
      }
    },
    namespaceChanged: changes.changed,
    settled: async (name) => {
      for (;;) {
        const running = [...tasks.values()].filter((task) => task.name === name);
        if (running.length === 0) return;
        await Promise.all(running.map((task) => task.promise));
      }
    },
    idle: async () => {
      while (tasks.size > 0) await Promise.all([...tasks.values()].map((task) => task.promise));
    },
    stop: async () => {
      stopped = true;
      changes.wakeAll();
      await Promise.all([...tasks.values()].map((task) => task.promise));
    },
  };
}
