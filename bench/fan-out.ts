// 3. Fan-out: one distribution targets M namespaces; its template changes; how long until every
// copy carries the new hash (seen by a watch)? Baseline: a plain client loop replacing M
// ConfigMaps of the same shape with the controller's applyParallelism, seen by the same kind of
// watch. The ratio says what the controller adds over the bare API round trips.
import { performance } from 'node:perf_hooks';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { ANNOTATION_HASH, LABEL_DISTRIBUTION } from '../src/domain/types.js';
import { mapBounded } from '../src/bounded.js';
import type { BenchKube } from './bench-kube.js';
import { fleetDistribution, fleetDistributionName, type Fleet } from './fleet.js';
import { watchObjects, type SeenObject } from './object-watch.js';
import { waitForQuiet, type Product } from './product.js';
import type { BenchSize } from './sizes.js';
import { percentile, ratio } from './stats.js';
import { waitUntil } from './wait.js';

export interface FanOutResult {
  namespaces: number;
  applyParallelism: number;
  /** Distribution created -> M copies visible (the first fan-out, creates). */
  createMs: number;
  rounds: number;
  /** Distribution updated -> M copies with the new hash visible (median of the rounds). */
  updateMs: number;
  updateRoundsMs: number[];
  /** Writes the controller made for one update (M replaces + status; median). */
  updateWrites: number;
  /** Client loop start -> M replaced ConfigMaps visible (median of the rounds). */
  baselineMs: number;
  baselineRoundsMs: number[];
  /** Client loop start -> last replace answered (median). */
  baselineLoopMs: number;
  /** updateMs / baselineMs. */
  ratio: number;
}

const BASELINE_LABEL = 'bench.resource-distributor.io/baseline';

/** Latest `value(object)` per namespace, and when each namespace first showed `wanted`. */
class Tracker {
  readonly latest = new Map<string, string>();
  readonly reached = new Map<string, number>();
  wanted: ((value: string) => boolean) | undefined;

  constructor(private readonly value: (object: SeenObject) => string) {}

  observe(object: SeenObject, atMs: number): void {
    const value = this.value(object);
    this.latest.set(object.namespace, value);
    if (this.wanted?.(value) && !this.reached.has(object.namespace)) this.reached.set(object.namespace, atMs);
  }

  expect(wanted: (value: string) => boolean): void {
    this.wanted = wanted;
    this.reached.clear();
  }

  lastReached(): number {
    return Math.max(...this.reached.values());
  }
}

function baselineConfigMap(namespace: string, revision: number, resourceVersion?: string): V1ConfigMap {
  const template = fleetDistribution(0, revision).spec.resource;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    // The same shape as a copy: a label, three annotations of similar size, the same data.
    metadata: {
      name: 'bench-baseline',
      namespace,
      labels: { [BASELINE_LABEL]: 'fan-out' },
      annotations: { 'bench.resource-distributor.io/from': 'bench-baseline', 'bench.resource-distributor.io/hash': 'f'.repeat(64), 'bench.resource-distributor.io/at': new Date().toISOString() },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    data: template.data ?? {},
  };
}

interface Side {
  tracker: Tracker;
  stop(): void;
}

/** Creates the distribution and waits for its M copies; returns the watch and how long the creates took. */
async function setUpProduct(kube: BenchKube, product: Product, fleet: Fleet, m: number): Promise<Side & { createMs: number }> {
  const name = fleetDistributionName(0);
  const tracker = new Tracker((object) => object.annotations[ANNOTATION_HASH] ?? '');
  const watch = await watchObjects(kube.kc, ['ConfigMap'], `${LABEL_DISTRIBUTION}=${name}`, (type, object, atMs) => {
    if (type !== 'DELETED') tracker.observe(object, atMs);
  });
  try {
    tracker.expect((hash) => hash !== '');
    const started = performance.now();
    await fleet.addDistributions(1);
    await waitUntil(`${m} copies of ${name}`, () => tracker.reached.size >= m, 60_000 + m * 200, () => `${tracker.reached.size} of ${m}`);
    const createMs = tracker.lastReached() - started;
    await fleet.waitConverged(60_000);
    await waitForQuiet(product.controller);
    return { tracker, stop: () => watch.stop(), createMs };
  } catch (error) {
    watch.stop();
    throw error;
  }
}

/** One template change; resolves with update response -> every copy seen with a new hash, and the writes it caused. */
async function productRound(kube: BenchKube, product: Product, fleet: Fleet, side: Side, m: number, revision: number): Promise<{ ms: number; writes: number }> {
  const { tracker } = side;
  const name = fleetDistributionName(0);
  const oldHash = tracker.latest.values().next().value ?? '';
  tracker.expect((hash) => hash !== oldHash);
  await waitForQuiet(product.controller);
  product.controller.requests.reset();
  await kube.updateDistribution(name, (rd) => {
    rd.spec.resource = fleetDistribution(0, revision).spec.resource;
  });
  const started = performance.now();
  await waitUntil(`${m} copies of ${name} updated`, () => tracker.reached.size >= m, 60_000 + m * 200, () => `${tracker.reached.size} of ${m}`);
  const ms = tracker.lastReached() - started;
  await fleet.waitConverged(60_000);
  await waitForQuiet(product.controller);
  return { ms, writes: product.controller.requests.tally().writes };
}

async function setUpBaseline(kube: BenchKube, namespaces: string[], clientConcurrency: number): Promise<Side & { versions: Map<string, string> }> {
  const tracker = new Tracker((object) => `${object.data.revision ?? ''}@${object.resourceVersion}`);
  const watch = await watchObjects(kube.kc, ['ConfigMap'], `${BASELINE_LABEL}=fan-out`, (type, object, atMs) => {
    if (type !== 'DELETED') tracker.observe(object, atMs);
  });
  try {
    tracker.expect((value) => value.startsWith('1@'));
    const versions = await kube.createConfigMaps(namespaces, (ns) => baselineConfigMap(ns, 1), clientConcurrency);
    await waitUntil('baseline ConfigMaps visible', () => tracker.reached.size >= namespaces.length, 120_000);
    return { tracker, stop: () => watch.stop(), versions };
  } catch (error) {
    watch.stop();
    throw error;
  }
}

/** M replaces with `parallelism` in flight; resolves with loop start -> every ConfigMap seen replaced, and the loop alone. */
async function baselineRound(
  kube: BenchKube,
  side: Side & { versions: Map<string, string> },
  namespaces: string[],
  parallelism: number,
  revision: number,
): Promise<{ ms: number; loopMs: number }> {
  const { tracker, versions } = side;
  tracker.expect((value) => value.startsWith(`${revision}@`));
  const started = performance.now();
  await mapBounded(namespaces, parallelism, async (ns) => {
    const replaced = await kube.replaceConfigMap(baselineConfigMap(ns, revision, versions.get(ns)));
    versions.set(ns, replaced);
  });
  const loopMs = performance.now() - started;
  await waitUntil('baseline ConfigMaps replaced', () => tracker.reached.size >= namespaces.length, 120_000);
  return { ms: tracker.lastReached() - started, loopMs };
}

const median = (values: readonly number[]): number => percentile([...values].sort((a, b) => a - b), 50);

/** Product and baseline rounds alternate, so that a busy moment of the machine hits both alike. */
export async function runFanOut(options: { kube: BenchKube; product: Product; fleet: Fleet; size: BenchSize }): Promise<FanOutResult> {
  const { kube, product, fleet, size } = options;
  const m = size.fanOut.namespaces;
  await fleet.grow(m);
  const productSide = await setUpProduct(kube, product, fleet, m);
  let baselineSide: (Side & { versions: Map<string, string> }) | undefined;
  try {
    baselineSide = await setUpBaseline(kube, fleet.namespaces, size.clientConcurrency);
    const updates: { ms: number; writes: number }[] = [];
    const baselines: { ms: number; loopMs: number }[] = [];
    for (let round = 0; round < size.fanOut.rounds; round++) {
      updates.push(await productRound(kube, product, fleet, productSide, m, round + 2));
      baselines.push(await baselineRound(kube, baselineSide, fleet.namespaces, product.applyParallelism, round + 2));
    }
    const updateMs = median(updates.map((u) => u.ms));
    const baselineMs = median(baselines.map((b) => b.ms));
    return {
      namespaces: m,
      applyParallelism: product.applyParallelism,
      rounds: size.fanOut.rounds,
      createMs: productSide.createMs,
      updateMs,
      updateRoundsMs: updates.map((u) => u.ms),
      updateWrites: median(updates.map((u) => u.writes)),
      baselineMs,
      baselineRoundsMs: baselines.map((b) => b.ms),
      baselineLoopMs: median(baselines.map((b) => b.loopMs)),
      ratio: ratio(updateMs, baselineMs),
    };
  } finally {
    productSide.stop();
    baselineSide?.stop();
  }
}
