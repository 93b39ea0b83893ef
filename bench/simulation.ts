// npm run bench:simulation [-- --size smoke|default] [--out DIR]
// A million copies by simulation: the product's own controller (caches, catalog, planner,
// reconciler, generator, pod webhooks) over a generated cluster (bench/synthetic-cluster.ts)
// that lists generated objects and acknowledges writes at once. Measures the time to sync, heap
// and RSS, one full sweep, one new namespace and pod admission, in this process alone: run it
// with nothing else (its heap is the product's), hence a script of its own, without the control
// plane and the product process `npm run bench` starts.
import { cpuUsage, memoryUsage } from 'node:process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Hono } from 'hono';
import { createAdmissionApp } from '../src/admission/app.js';
import { compileSpecValidator } from '../src/domain/schema.js';
import type { AccessReviewer } from '../src/k8s/access-review.js';
import { loadCrdSchema } from '../src/k8s/crd-schema.js';
import { WEBHOOK_PATHS } from '../src/k8s/webhook-config.js';
import { createLogger } from '../src/log.js';
import { createMetrics } from '../src/metrics.js';
import type { RunningController } from '../src/reconcile/controller.js';
import { review } from '../test/unit/admission/review-builder.js';
import { BASELINE_ADMISSION_PATH, baselineApp } from './baseline-server.js';
import { machineSummary, renderSimulation, writeSimulation, type SimulationResult } from './simulation-report.js';
import { summarize } from './stats.js';
import { simulatedController } from './simulated-controller.js';
import { SyntheticCluster } from './synthetic-cluster.js';
import { copiedName, copyCount, distributionCount, namespaceAt, namespaceName, registryOf, type WorldShape } from './synthetic-world.js';

const say = (line: string): void => console.error(`[simulation] ${line}`);

const SIZES: Record<'smoke' | 'default', WorldShape & { podRequests: number }> = {
  // 100,000 copies: a quick check (about a minute).
  smoke: { namespaces: 10_000, teams: 100, allNamespaces: 2, selectors: 400, lists: 598, listedNames: 40_000, podRequests: 2_000 },
  // 1,000,000 copies: 200,000 from two all-namespaces distributions, 400,000 from 4,000 selectors (100 namespaces each), 400,000 from 5,998 lists.
  default: { namespaces: 100_000, teams: 1_000, allNamespaces: 2, selectors: 4_000, lists: 5_998, listedNames: 400_000, podRequests: 5_000 },
};

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined) throw new Error('run with --expose-gc (npm run bench:simulation does)');
  collect();
  collect();
}

function memory(): { heap: number; rss: number } {
  gc();
  const { heapUsed, rss } = memoryUsage();
  return { heap: heapUsed, rss };
}

/** Wall time and CPU (user + system, this process) of `work`. */
async function timed(work: () => Promise<void>): Promise<{ ms: number; cpuMs: number }> {
  const cpu = cpuUsage();
  const started = performance.now();
  await work();
  const used = cpuUsage(cpu);
  return { ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

/** The highest RSS seen while `work` runs (sampled every 50 ms). */
async function peakRss<T>(work: () => Promise<T>): Promise<{ value: T; peak: number }> {
  let peak = memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, memoryUsage.rss())), 50);
  try {
    const value = await work();
    return { value, peak: Math.max(peak, memoryUsage.rss()) };
  } finally {
    clearInterval(timer);
  }
}

/**
 * The longest the event loop could not go on while `work` ran (timers, sockets and webhooks wait
 * that long): the longest gap between the ticks of a 1 ms timer, or to the end of work that never
 * let one run.
 */
async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let longest = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    timer = setTimeout(tick, 1);
  };
  timer = setTimeout(tick, 1);
  try {
    const value = await work();
    return { value, stallMs: Math.max(longest, performance.now() - last) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A namespace created after the start (`name`): the generator writes its copies, the reconciler
 * follows. `before`: what else starts before it is admitted (a sweep); it resolves with the moment
 * the namespace is meant to arrive, from which its copies are timed (a process busy then answers
 * the webhook, and writes the copies, only later).
 */
async function newNamespace(
  cluster: SyntheticCluster,
  controller: RunningController,
  shape: WorldShape,
  name = 'ns-new',
  before: () => Promise<number> = () => Promise.resolve(performance.now()),
): Promise<Omit<SimulationResult['newNamespace'], 'writes'>> {
  const ns = namespaceAt(shape, 7);
  ns.metadata = { ...ns.metadata, name, uid: `ns-uid-${name}`, resourceVersion: cluster.nextVersion(), labels: { team: 't7' } };
  const expected = shape.allNamespaces + Math.floor(shape.selectors / shape.teams);
  let written = 0;
  let copiesMs = Number.NaN;
  let started = performance.now();
  cluster.onCreate = (object) => {
    if (object.metadata.namespace === name && ++written === expected) copiesMs = performance.now() - started;
  };
  const { cpuMs } = await timed(async () => {
    started = await before();
    controller.namespaceAdmitted({ name, uid: `ns-uid-${name}` });
    cluster.push('namespaces', { type: 'ADDED', object: { ...ns } });
    await controller.idle();
  });
  cluster.onCreate = undefined;
  return { copies: written, expected, copiesMs, settledMs: performance.now() - started, cpuMs };
}

/** Every webhook call the pods need answered in-process, beside the trivial admission route sent the same review. */
function podAdmission(controller: RunningController): { app: Hono; baseline: Hono } {
  const nobody: AccessReviewer = { review: () => Promise.resolve({ allowed: false, reason: 'not asked here' }) };
  const app = createAdmissionApp({
    log: createLogger({ level: 'warn' }),
    metrics: createMetrics(),
    schema: compileSpecValidator(loadCrdSchema()),
    accessReviewer: nobody,
    namespaceExists: (name) => controller.namespaceExists(name),
    onNamespaceAdmitted: () => undefined,
    onPodAdmitted: (namespace, refs, options) => controller.podAdmitted(namespace, refs, options),
    podInjection: (namespace, pod) => controller.podInjection(namespace, pod),
    forbiddenNamespaces: [],
    readiness: () => ({ caches: controller.synced() }),
    bodyLimitBytes: 3 * 2 ** 20,
  });
  return { app, baseline: baselineApp() };
}

/**
 * A pod of team 123's namespace: its registry's image, that team's two Secrets, a ConfigMap
 * everyone gets, one name nobody distributes. Mutation sees it without the registry Secret (and
 * names it); validation, called after mutation, with it.
 */
function podBody(shape: WorldShape, named: boolean): string {
  const team = 123 % shape.teams;
  const [pull, other] = [shape.allNamespaces + team, shape.allNamespaces + team + shape.teams];
  const body = review()
    .pod(namespaceName(team), {
      imagePullSecrets: named ? [{ name: copiedName(pull) }] : [],
      containers: [
        {
          name: 'app',
          image: `${registryOf(team)}/app:1`,
          envFrom: [{ secretRef: { name: copiedName(other) } }, { configMapRef: { name: copiedName(0) } }, { configMapRef: { name: 'app-env' } }],
        },
      ],
    })
    .uid('simulation')
    .body();
  return JSON.stringify(body);
}

async function latencies(app: Hono, path: string, body: string, count: number, check: (text: string) => void): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await app.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await response.text();
    samples.push(performance.now() - started);
    if (i === 0) check(text);
  }
  return samples;
}

async function measurePods(controller: RunningController, shape: WorldShape, requests: number): Promise<SimulationResult['pods']> {
  const { app, baseline } = podAdmission(controller);
  const [validated, mutated] = [podBody(shape, true), podBody(shape, false)];
  const rows: Record<'trivial' | 'validation' | 'mutation', number[]> = { trivial: [], validation: [], mutation: [] };
  let patched = '';
  const allowed = (text: string): void => {
    if (!text.includes('"allowed":true')) throw new Error(`pod not allowed: ${text.slice(0, 300)}`);
  };
  // Interleaved rounds, after a warm-up: the three rows see the same moments of the process.
  for (let round = 0; round < 6; round++) {
    const count = round === 0 ? 200 : Math.ceil(requests / 5);
    const trivial = await latencies(baseline, BASELINE_ADMISSION_PATH, validated, count, allowed);
    const validation = await latencies(app, WEBHOOK_PATHS.pods, validated, count, allowed);
    const mutation = await latencies(app, WEBHOOK_PATHS.podMutation, mutated, count, (text) => {
      allowed(text);
      patched = text.includes('"patch"') ? 'a JSONPatch adding the image-pull Secret' : 'no patch';
    });
    if (round === 0) continue;
    rows.trivial.push(...trivial);
    rows.validation.push(...validation);
    rows.mutation.push(...mutation);
  }
  return { trivial: summarize(rows.trivial), validation: summarize(rows.validation), mutation: summarize(rows.mutation), mutationAnswer: patched };
}

async function run(size: 'smoke' | 'default', shape: WorldShape & { podRequests: number }): Promise<SimulationResult> {
  const cluster = new SyntheticCluster(shape);
  const copies = copyCount(shape);
  say(`size ${size}: ${shape.namespaces} namespaces, ${distributionCount(shape)} distributions, ${copies} copies`);
  const before = memory();
  const controller = simulatedController(cluster.api, 'simulation');
  const sync = await peakRss(() => timed(() => controller.start()));
  say(`caches synced in ${(sync.value.ms / 1000).toFixed(1)} s`);
  // Leading at once: the start's sweep is the first full pass.
  const firstPass = await timed(() => controller.idle());
  const firstPassRequests = controller.requests.tally();
  say(`first pass ${(firstPass.ms / 1000).toFixed(1)} s, ${firstPassRequests.writes} writes`);
  const settled = memory();
  const cached = { namespaces: controller.caches.namespaces.size, distributions: controller.caches.distributions.size, copies: controller.caches.copies.size };
  controller.requests.reset();
  const { value: sweep, stallMs } = await longestStall(() =>
    timed(async () => {
      controller.sweepNow();
      await controller.idle();
    }),
  );
  const sweepRequests = controller.requests.tally();
  say(`full sweep ${(sweep.cpuMs / 1000).toFixed(1)} CPU-s, ${sweepRequests.writes} writes, event loop held up to ${stallMs.toFixed(1)} ms`);
  const pods = await measurePods(controller, shape, shape.podRequests);
  say(`pod admission p99: trivial ${pods.trivial.p99.toFixed(3)} ms, validation ${pods.validation.p99.toFixed(3)} ms, mutation ${pods.mutation.p99.toFixed(3)} ms`);
  controller.requests.reset();
  const added = await newNamespace(cluster, controller, shape);
  const addedRequests = controller.requests.tally();
  say(`new namespace: ${added.copies} copies in ${added.copiesMs.toFixed(1)} ms, settled in ${added.settledMs.toFixed(0)} ms`);
  // The same while a full sweep is under way (admitted a little after it began).
  const duringSweep = await newNamespace(cluster, controller, shape, 'ns-new-during-sweep', async () => {
    const arrives = performance.now() + 50;
    setTimeout(() => controller.sweepNow(), 0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return arrives;
  });
  say(`new namespace during a sweep: ${duringSweep.copies} copies in ${duringSweep.copiesMs.toFixed(1)} ms`);
  await controller.stop();
  return {
    size,
    startedAt: new Date().toISOString(),
    machine: await machineSummary(),
    shape: { ...shape, distributions: distributionCount(shape), copies },
    cached,
    sync: { ms: sync.value.ms, cpuMs: sync.value.cpuMs, peakRss: sync.peak },
    firstPass: { ...firstPass, writes: firstPassRequests.writes, reads: (firstPassRequests.byVerb.get ?? 0) },
    memory: { before, settled },
    sweep: { ...sweep, writes: sweepRequests.writes, reads: (sweepRequests.byVerb.get ?? 0) + (sweepRequests.byVerb.list ?? 0), stallMs },
    newNamespace: { ...added, writes: addedRequests.writes },
    newNamespaceDuringSweep: { copies: duringSweep.copies, expected: duringSweep.expected, copiesMs: duringSweep.copiesMs },
    pods,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { size: { type: 'string', default: 'default' }, out: { type: 'string' } }, strict: true });
  const size = values.size;
  if (size !== 'smoke' && size !== 'default') throw new Error(`--size must be smoke or default, got ${size}`);
  const result = await run(size, SIZES[size]);
  const report = renderSimulation(result);
  console.log(report);
  say(`results: ${(await writeSimulation(values.out ?? fileURLToPath(new URL('./results', import.meta.url)), result, report)).join(', ')}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
