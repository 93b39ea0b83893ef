// Scale (only with `--only scale`, not part of a size's default run): N namespaces, 10 ConfigMap
// distributions and one Secret distribution selecting them all (11 × N copies, 110,000 at the
// default size). Measured on this machine's control plane: the fan-out, a template update over N
// copies, a new namespace's 11 copies at rest (beside a client-go loop giving a new namespace the
// same 11 objects) and during an update of all 11 templates, one full sweep, the memory of the
// product, the API server and etcd, and a restart (kill -9, start).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ANNOTATION_HASH, LABEL_DISTRIBUTION } from '../src/domain/types.js';
import { fmtMs } from './format.js';
import { GROUP_LABEL, groupDistribution, numberedNames, type BenchKube } from './bench-kube.js';
import { watchObjects } from './object-watch.js';
import { procMemoryBytes, requestsBetween, SWEEP_INTERVAL_SECONDS, waitForQuiet, workBetween, type Product } from './product.js';
import type { Scrape } from './scrape.js';
import type { BenchSize } from './sizes.js';
import { summarize, type Summary } from './stats.js';
import { clientCreatesNamespaces, NAMESPACE_BASELINE_SELECTOR, type CreateCalls } from './namespace-baseline.js';
import { serverPid } from './process-cpu.js';
import { Tracker } from './tracker.js';
import { waitUntil } from './wait.js';

const SCALE_GROUP = 'scale';
const CONFIG_MAPS = 10;

export interface ScaleResult {
  namespaces: number;
  distributions: number;
  copies: number;
  setupMs: number;
  /** Distributions created -> every status reports every namespace succeeded. */
  fanOutMs: number;
  fanOutWrites: number;
  /** One template changed -> its N copies carry the new hash (watch). */
  updateMs: number;
  updateWrites: number;
  /** Namespace create response -> its 11 copies visible. */
  newNamespaceAtRest: NewNamespaces & { product: NamespaceWork };
  /** The baseline at rest: namespace create response -> the 11 objects the Go loop creates at once visible. */
  newNamespaceByClient: NewNamespaces;
  newNamespaceDuringUpdates: NewNamespaces & { product: NamespaceWork };
  /** Template changes of the storm the distribution webhook did not answer in time (each retried, as a user would). */
  stormRefusals: number;
  /** The product after a full garbage collection, everything converged. */
  memory: { rss: number; heapUsed: number; heapTotal: number; external: number; heapPerCopy: number; idleHeapUsed: number };
  servers: { apiserverRss: number; etcdRss: number };
  /** One sweep interval with nothing changing. */
  sweep: { seconds: number; reconciles: number; cpuMs: number; writes: number; reads: number };
  restart: { readyMs: number; firstPassMs: number; writes: number; requests: Record<string, number>; peakRss: number };
}

const names = (): string[] => Array.from({ length: CONFIG_MAPS + 1 }, (_, i) => `bench-scale-${i}`);
const kindOf = (index: number): 'ConfigMap' | 'Secret' => (index < CONFIG_MAPS ? 'ConfigMap' : 'Secret');

async function converged(kube: BenchKube, count: number, timeoutMs: number): Promise<void> {
  const wanted = new Set(names());
  await kube.waitForDistributions(
    `${wanted.size} scale distributions converged over ${count} namespaces`,
    (items) => {
      const ours = items.filter((rd) => wanted.has(rd.metadata.name));
      return ours.length === wanted.size && ours.every((rd) => rd.status?.observedGeneration === rd.metadata.generation && rd.status?.succeeded === count);
    },
    timeoutMs,
  );
}

/** A new namespace's copies (the first of them, and all), and the namespace create call itself, sent → answered. */
export interface NewNamespaces {
  copies: Summary;
  firstCopy: Summary;
  createCall: Summary;
}

/**
 * Namespaces created by `create`, each timed from its create response until `expected` objects
 * matching `selector` are visible in it.
 */
/** How long new namespaces may take to get their copies, unless a caller allows more. */
const NEW_NAMESPACE_WAIT_MS = 120_000;

async function timedNewNamespaces(
  kube: BenchKube,
  namespaces: readonly string[],
  selector: string,
  expected: number,
  create: (namespaces: readonly string[]) => Promise<CreateCalls>,
  waitMs = NEW_NAMESPACE_WAIT_MS,
): Promise<NewNamespaces> {
  const wanted = new Set(namespaces);
  const seen = new Map<string, Set<string>>();
  const first = new Map<string, number>();
  const complete = new Map<string, number>();
  const watch = await watchObjects(
    kube.kc,
    ['ConfigMap', 'Secret'],
    selector,
    (type, object, atMs) => {
      if (type === 'DELETED' || !wanted.has(object.namespace)) return;
      const set = seen.get(object.namespace) ?? new Set<string>();
      set.add(`${object.kind}/${object.name}`);
      seen.set(object.namespace, set);
      if (!first.has(object.namespace)) first.set(object.namespace, atMs);
      if (set.size === expected && !complete.has(object.namespace)) complete.set(object.namespace, atMs);
    },
    { fromNow: true },
  );
  try {
    const created = await create(namespaces);
    const incomplete = (): string =>
      namespaces
        .filter((ns) => !complete.has(ns))
        .map((ns) => `${ns}: ${seen.get(ns)?.size ?? 0} seen`)
        .join(', ');
    await waitUntil(`${expected} objects in ${namespaces.length} new namespaces`, () => namespaces.every((ns) => complete.has(ns)), waitMs, () => `${complete.size} of ${namespaces.length}; ${incomplete()}`);
    const sinceCreated = (at: Map<string, number>): Summary => summarize(namespaces.map((ns) => (at.get(ns) ?? Number.NaN) - (created.get(ns)?.at ?? Number.NaN)));
    return {
      copies: sinceCreated(complete),
      firstCopy: sinceCreated(first),
      createCall: summarize(namespaces.map((ns) => (created.get(ns)?.at ?? Number.NaN) - (created.get(ns)?.sentAt ?? Number.NaN))),
    };
  } finally {
    watch.stop();
  }
}

/** What the product did while new namespaces arrived: webhook calls answered, namespaces generated, its longest event-loop delay, its major GCs. */
export interface NamespaceWork {
  admitted: number;
  generated: number;
  skipped: number;
  eventLoopDelayMaxMs: number;
  majorGcs: number;
  majorGcMs: number;
}

/** The product's counts between two scrapes (the first also starts the event-loop delay window: each scrape reads and resets it). */
function namespaceWork(before: Scrape, after: Scrape): NamespaceWork {
  const delta = (name: string, labels?: Record<string, string>): number => after.sum(name, labels) - before.sum(name, labels);
  return {
    admitted: delta('resource_distributor_admission_requests_total', { webhook: 'namespaces', operation: 'CREATE' }),
    generated: delta('resource_distributor_namespace_generation_duration_seconds_count'),
    skipped: delta('resource_distributor_namespace_generation_skipped_total'),
    eventLoopDelayMaxMs: after.sum('resource_distributor_nodejs_eventloop_lag_max_seconds') * 1000,
    majorGcs: delta('resource_distributor_nodejs_gc_duration_seconds_count', { kind: 'major' }),
    majorGcMs: delta('resource_distributor_nodejs_gc_duration_seconds_sum', { kind: 'major' }) * 1000,
  };
}

/**
 * Namespaces of the scale group created at `perSecond`: the product writes their 11 copies. A
 * namespace whose webhook call the product did not answer in time (it fails open) gets its copies
 * from the reconciler, after the passes ahead of it: up to `waitMs`.
 */
async function newNamespaces(kube: BenchKube, product: Product, prefix: string, count: number, perSecond: number, waitMs = NEW_NAMESPACE_WAIT_MS): Promise<NewNamespaces & { product: NamespaceWork }> {
  const before = await product.scrape();
  try {
    const timed = await timedNewNamespaces(
      kube,
      numberedNames(prefix, 0, count),
      `${LABEL_DISTRIBUTION} in (${names().join(',')})`,
      names().length,
      (namespaces) => kube.createNamespacesAtRate(namespaces, { [GROUP_LABEL]: SCALE_GROUP }, perSecond),
      waitMs,
    );
    return { ...timed, product: namespaceWork(before, await product.scrape()) };
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; the product meanwhile: ${describeWork(namespaceWork(before, await product.scrape()))}`, { cause: error });
  }
}

/** The same number of namespaces outside the scale group, given the same 11 objects by the Go loop as soon as each exists. */
async function newNamespacesByClient(kube: BenchKube, kubeconfigPath: string, count: number, perSecond: number): Promise<NewNamespaces> {
  const owner = await kube.getDistribution(names()[0] ?? '');
  const data = groupDistribution(names()[0] ?? '', 'ConfigMap', SCALE_GROUP).spec.resource.data ?? {};
  return timedNewNamespaces(kube, numberedNames('bench-scale-client-', 0, count), NAMESPACE_BASELINE_SELECTOR, names().length, (namespaces) =>
    clientCreatesNamespaces({ kubeconfigPath, namespaces, perSecond, configMaps: CONFIG_MAPS, data, owner }),
  );
}

/**
 * One template of the storm changed as a user would change it: eleven distributions over 10,000
 * namespaces admitted at once may outlast the webhook's timeout on a busy machine, and a refused
 * change is applied again (counted in the report).
 */
async function stormUpdate(kube: BenchKube, name: string, index: number, refused: { count: number }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await kube.updateDistribution(name, (rd) => void (rd.spec.resource = groupDistribution(name, kindOf(index), SCALE_GROUP, 3).spec.resource));
      return;
    } catch (error) {
      const body = (error as { body?: unknown }).body;
      if (attempt >= 5 || !String(body ?? error).includes('failed calling webhook')) throw error;
      refused.count += 1;
    }
  }
}

/** Distribution `index`'s template changed; resolves when all `count` copies carry a new hash. */
async function updateOne(kube: BenchKube, index: number, count: number, revision: number): Promise<number> {
  const name = names()[index] ?? '';
  const tracker = new Tracker((object) => object.annotations[ANNOTATION_HASH] ?? '');
  const watch = await watchObjects(kube.kc, [kindOf(index)], `${LABEL_DISTRIBUTION}=${name}`, tracker.listener());
  try {
    tracker.expect((hash) => hash !== '');
    await tracker.lastReachedAfter(count, `${count} copies of ${name}`);
    const oldHash = tracker.latest.values().next().value ?? '';
    tracker.expect((hash) => hash !== oldHash);
    const started = performance.now();
    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource = groupDistribution(name, kindOf(index), SCALE_GROUP, revision).spec.resource;
    });
    return (await tracker.lastReachedAfter(count, `${count} copies of ${name} updated`, 600_000)) - started;
  } finally {
    watch.stop();
  }
}

/** RSS of this control plane's server whose binary is `binary`. */
async function serverRss(planeDir: string, binary: 'kube-apiserver' | 'etcd'): Promise<number> {
  const pid = await serverPid(planeDir, binary);
  return pid > 0 ? procMemoryBytes(pid) : Number.NaN;
}

async function sweepWindow(product: Product): Promise<ScaleResult['sweep']> {
  const before = await waitForQuiet(product, 3_000, 600_000);
  // Two intervals: one whole sweep falls inside, whatever the phase.
  await sleep(2 * SWEEP_INTERVAL_SECONDS * 1000);
  const after = await product.scrape();
  const requests = requestsBetween(before, after);
  const work = workBetween(before, after);
  return { seconds: 2 * SWEEP_INTERVAL_SECONDS, reconciles: work.reconciles, cpuMs: work.cpuMs, writes: requests.writes, reads: requests.reads };
}

/** kill -9, then a new process: until /readyz says its caches are synced, and until its first full pass is done. */
async function restart(product: Product, start: () => Promise<Product>): Promise<{ next: Product; result: ScaleResult['restart'] }> {
  await product.kill();
  const started = performance.now();
  const next = await start();
  await waitUntil('the restarted product ready', () => next.ready(), 300_000, undefined, 20);
  const readyMs = performance.now() - started;
  let last: Scrape = await next.scrape();
  await waitUntil(
    'its first full pass',
    async () => {
      last = await next.scrape();
      return last.sum('resource_distributor_queue_depth') === 0 && last.sum('resource_distributor_reconcile_total') >= names().length;
    },
    600_000,
    undefined,
    50,
  );
  const firstPassMs = performance.now() - started;
  const requests = requestsBetween(NOTHING, last);
  return { next, result: { readyMs, firstPassMs, writes: requests.writes, requests: requests.byRequest, peakRss: await next.peakRss() } };
}

/** Every counter at zero: what a new process has done since its start. */
const NOTHING: Scrape = { sum: () => 0, samples: () => [] };

export async function runScale(options: { kube: BenchKube; product: Product; size: BenchSize; planeDir: string; kubeconfigPath: string; start: () => Promise<Product> }): Promise<{ result: ScaleResult; product: Product }> {
  const { kube, size } = options;
  let { product } = options;
  const { namespaces: n, newNamespaces: probes, probeRatePerSecond } = size.scale;
  const idle = await product.memory();
  const setupStarted = performance.now();
  await kube.createNamespaces(numberedNames('bench-scale-ns', 0, n), { [GROUP_LABEL]: SCALE_GROUP }, size.clientConcurrency);
  const setupMs = performance.now() - setupStarted;
  console.error(`[bench] scale: ${n} namespaces in ${(setupMs / 1000).toFixed(0)} s`);

  let before = await waitForQuiet(product);
  const fanOutStarted = performance.now();
  for (const [i, name] of names().entries()) await kube.createDistribution(groupDistribution(name, kindOf(i), SCALE_GROUP));
  await converged(kube, n, 1_800_000);
  const fanOutMs = performance.now() - fanOutStarted;
  const fanOutWrites = requestsBetween(before, await waitForQuiet(product, 3_000, 600_000)).writes;
  console.error(`[bench] scale: ${names().length * n} copies in ${(fanOutMs / 1000).toFixed(1)} s`);

  const memory = await product.memory();
  const servers = { apiserverRss: await serverRss(options.planeDir, 'kube-apiserver'), etcdRss: await serverRss(options.planeDir, 'etcd') };
  const sweep = await sweepWindow(product);

  before = await waitForQuiet(product, 3_000, 600_000);
  const updateMs = await updateOne(kube, 0, n, 2);
  const updateWrites = requestsBetween(before, await waitForQuiet(product, 3_000, 600_000)).writes;
  console.error(`[bench] scale: template update over ${n} copies in ${(updateMs / 1000).toFixed(1)} s`);

  const newNamespaceAtRest = await newNamespaces(kube, product, 'bench-scale-rest-', probes, probeRatePerSecond);
  console.error(`[bench] scale: a new namespace's copies at rest: p50 ${fmtMs(newNamespaceAtRest.copies.p50)}, p99 ${fmtMs(newNamespaceAtRest.copies.p99)}`);
  await waitForQuiet(product, 3_000, 600_000);
  const newNamespaceByClient = await newNamespacesByClient(kube, options.kubeconfigPath, probes, probeRatePerSecond);
  console.error(`[bench] scale: a new namespace's 11 objects from the Go loop: p50 ${fmtMs(newNamespaceByClient.copies.p50)}, p99 ${fmtMs(newNamespaceByClient.copies.p99)}`);
  await waitForQuiet(product, 3_000, 600_000);
  // Every template changed at once (11 × N rewrites), and new namespaces arriving meanwhile.
  const refused = { count: 0 };
  const storm = Promise.all(names().map((name, i) => stormUpdate(kube, name, i, refused)));
  const newNamespaceDuringUpdates = await newNamespaces(kube, product, 'bench-scale-storm-', probes, probeRatePerSecond, 600_000);
  await storm;
  await converged(kube, n + 2 * probes, 1_800_000);

  const restarted = await restart(product, options.start);
  product = restarted.next;
  const copies = names().length * n;
  return {
    product,
    result: {
      namespaces: n,
      distributions: names().length,
      copies,
      setupMs,
      fanOutMs,
      fanOutWrites,
      updateMs,
      updateWrites,
      newNamespaceAtRest,
      newNamespaceByClient,
      newNamespaceDuringUpdates,
      stormRefusals: refused.count,
      memory: { rss: memory.rss, heapUsed: memory.heapUsed, heapTotal: memory.heapTotal, external: memory.external, idleHeapUsed: idle.heapUsed, heapPerCopy: (memory.heapUsed - idle.heapUsed) / copies },
      servers,
      sweep,
      restart: restarted.result,
    },
  };
}

/** What the product did for new namespaces meanwhile, in words. */
export const describeWork = (w: NamespaceWork): string =>
  `${w.admitted} namespace creations admitted, ${w.generated} generated, ${w.skipped} generations skipped; ` +
  `its longest event-loop delay ${fmtMs(w.eventLoopDelayMaxMs)}; ${w.majorGcs} major GCs, ${fmtMs(w.majorGcMs)} in all`;
