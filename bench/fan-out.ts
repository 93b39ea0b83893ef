// 3. Fan-out: one distribution targets M namespaces. Created: how long until every copy exists?
// Updated: how long until every copy carries the new hash? Both as seen by a watch.
//
// Baseline, the ceiling: a client-go write loop (client-go's HTTP/2 transport, no client rate
// limit) creating, then replacing, M ConfigMaps of the same shape (data, label, annotations, the
// ownerReference to the distribution), seen by the same kind of watch, in several shapes (LOOP_SHAPES:
// 32, 128 and 512 workers, and OpenKruise's slow start, batches doubling up to 2,048 in flight). Each
// shape is timed; the best is the ratio's denominator: the fastest honest way to make the same
// writes from this machine. The product's and the loops' update rounds alternate, and so does
// which of them goes first.
//
// Every side creates the M objects several times (deleted in between; the product's rounds first,
// as the loop's objects name the distribution the last of them made). The product is restarted (as
// users run it) right before each of its first update rounds: those rounds, the first update after
// a start (cold V8, cold connections), are reported apart from the warm rounds, for every side (each
// loop run is a new process anyway). The warm-up rounds after them are reported and not counted.
// Each figure is a median: one create or one first update is as noisy as any one round, and the
// fastest of several shapes' single rounds would be a minimum against our one draw. The peer
// (kruise-peer.ts) runs the same distribution on a plane of its own.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { ANNOTATION_HASH, API_VERSION, KIND, LABEL_DISTRIBUTION, type ResourceDistribution } from '../src/domain/types.js';
import { controllerRefTo } from '../src/domain/render.js';
import { ensureBenchProgram } from '../test/control-plane/index.js';
import { GROUP_LABEL, type BenchKube } from './bench-kube.js';
import { FLEET_GROUP, fleetDistribution, fleetDistributionName, type Fleet } from './fleet.js';
import { watchObjects } from './object-watch.js';
import { medianCpu, serverPid, startCpuMeter, type CpuPids, type CpuSpent } from './process-cpu.js';
import { peerResult, runKruisePeer, type KruisePeer } from './kruise-peer.js';
import { procMemoryBytes, requestsBetween, waitForQuiet, type Product } from './product.js';
import { parseMetrics, type Scrape } from './scrape.js';
import type { BenchSize } from './sizes.js';
import { median } from './stats.js';
import { Tracker } from './tracker.js';
import { unixMsToPerformance } from './wall-clock.js';

export interface FanOutSide {
  /** Start -> M objects visible (creates; median of the create rounds). */
  createMs: number;
  createRoundsMs: number[];
  /** The first update after a start (median of those rounds): the product's each right after a restart. */
  firstUpdateMs: number;
  firstRoundsMs: number[];
  /** Start -> M objects visible with the new content (median of the rounds). */
  updateMs: number;
  updateRoundsMs: number[];
  /** The warm-up rounds before them (after the first update), not counted. */
  warmUpRoundsMs: number[];
  /** Start -> the first object visible with the new content (median of the update rounds): what comes before writing. */
  firstCopyMs: number;
  /** CPU spent over an update round, from its first request until every copy is seen (median of the rounds). */
  updateCpu: CpuSpent;
}

/** How the Go loop writes: `workers` requests in flight, or slow start (batches of 1, 2, 4, ... up to `workers`). */
export interface LoopShape {
  workers: number;
  slowStart: boolean;
}

export const LOOP_SHAPES: readonly LoopShape[] = [
  { workers: 32, slowStart: false },
  { workers: 128, slowStart: false },
  { workers: 512, slowStart: false },
  { workers: 2048, slowStart: true },
];

export function shapeName(shape: LoopShape): string {
  return shape.slowStart ? `slow start to ${shape.workers.toLocaleString('en-US')}` : `${shape.workers} workers`;
}

export type LoopSide = FanOutSide & {
  shape: LoopShape;
  /** The HTTP version the API server answered the loop with. */
  protocol: string;
  connections: number;
  /** The Go loop's own CPU per update round (median). */
  loopCpuMs: number;
};

export interface FanOutResult {
  namespaces: number;
  /** Cores of this machine, shared by the product, the control plane and the bench. */
  machineCores: number;
  applyParallelism: number;
  createRounds: number;
  firstRounds: number;
  warmUpRounds: number;
  rounds: number;
  product: FanOutSide & {
    /** The distribution's own create request, until answered (its admission and storage; median of the creates). */
    createRequestMs: number;
    /** Create request -> the first copy visible (median of the creates). */
    createFirstCopyMs: number;
    /** API writes for one update (M replaces + status; median). */
    updateWrites: number;
    /** TLS connections the product's processes (one per restart) opened over the section. */
    connectionsOpened: number;
    requests: number;
    /** The product's RSS (VmRSS, no forced collection, as the peer's) after its rounds. */
    rssBytes: number;
  };
  /** Every loop shape, in LOOP_SHAPES order. */
  loops: LoopSide[];
  /** The shape with the best median update; its median create and first update may be beaten by another's (bestLoop). */
  baseline: LoopSide;
  /** The best shape's median, each figure on its own. */
  bestLoop: { createMs: number; firstUpdateMs: number; updateMs: number };
  /** A distribution with spec.source over the same namespaces: source replaced -> every copy carries it (median of the rounds). */
  source: { updateMs: number; updateRoundsMs: number[] };
  /** Best loop time / product time: 1 means as fast as the best client-go loop, 0.8 means 80 % of its rate. */
  createRate: number;
  firstUpdateRate: number;
  updateRate: number;
  /** Best loop update time / source-change time. */
  sourceRate: number;
  kruise: KruisePeer;
}

export const BASELINE_LABEL = 'bench.resource-distributor.io/baseline';
const BASELINE_NAME = 'bench-baseline';
const CONNECTIONS = 'resource_distributor_api_connections_total';

export interface LoopAnswer {
  objects: number;
  errors: number;
  firstError: string;
  connections: number;
  wallMs: number;
  cpuMs: number;
  /** The HTTP version the API server answered with. */
  protocol: string;
  /** When the loop's clock started (after its warm-up request), Unix ms. */
  startedAtUnixMs: number;
}

/** Runs the Go write loop (test/control-plane/write-loop) once; its write errors are this call's error. */
export async function runGoLoop(binary: string, args: readonly string[]): Promise<LoopAnswer> {
  const { stdout } = await promisify(execFile)(binary, [...args], { maxBuffer: 1 << 20 });
  const answer = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as LoopAnswer;
  if (answer.errors > 0) throw new Error(`the Go loop (-mode ${args[args.indexOf('-mode') + 1] ?? '?'}) had ${answer.errors} errors: ${answer.firstError}`);
  return answer;
}

/** The Go loop over every namespace; returns its answer with the start on this process's performance clock. */
class GoLoop {
  private constructor(
    private readonly binary: string,
    private readonly args: string[],
  ) {}

  static async prepare(kubeconfigPath: string, namespaces: readonly string[], owner: ResourceDistribution): Promise<GoLoop> {
    const binary = await ensureBenchProgram('write-loop', { log: (line) => console.error(`[bench] ${line}`) });
    const dir = await mkdtemp(join(tmpdir(), 'rd-bench-loop-'));
    const template = fleetDistribution(0).spec.resource;
    const files = { namespaces: join(dir, 'namespaces'), payload: join(dir, 'payload.json'), annotations: join(dir, 'annotations.json'), owners: join(dir, 'owners.json') };
    // A copy's ownerReference (to the fan-out distribution, in the version a copy names): the garbage collector tracks both alike.
    await writeFile(files.owners, JSON.stringify([controllerRefTo(owner)]));
    await writeFile(files.namespaces, `${namespaces.join('\n')}\n`);
    // The same data and the same metadata sizes as a copy, less the revision the loop writes itself.
    const { revision: _, ...data } = template.data ?? {};
    await writeFile(files.payload, JSON.stringify(data));
    await writeFile(
      files.annotations,
      JSON.stringify({ 'bench.resource-distributor.io/from': BASELINE_NAME, 'bench.resource-distributor.io/hash': 'f'.repeat(64), 'bench.resource-distributor.io/at': new Date().toISOString() }),
    );
    const args = ['-kubeconfig', kubeconfigPath, '-namespaces', files.namespaces, '-name', BASELINE_NAME, '-label', `${BASELINE_LABEL}=fan-out`];
    args.push('-payload', files.payload, '-annotations', files.annotations, '-owner-references', files.owners);
    return new GoLoop(binary, args);
  }

  async run(mode: 'create' | 'update' | 'delete', revision: number, shape: LoopShape = { workers: 128, slowStart: false }): Promise<LoopAnswer & { startedAt: number }> {
    const answer = await runGoLoop(this.binary, [...this.args, '-mode', mode, '-revision', String(revision), '-concurrency', String(shape.workers), ...(shape.slowStart ? ['-slow-start'] : [])]);
    return { ...answer, startedAt: unixMsToPerformance(answer.startedAtUnixMs) };
  }
}

/** One side's update round: its time, and the CPU each process spent meanwhile. */
interface Round {
  ms: number;
  /** Start -> the first object seen with the new content. */
  firstMs: number;
  cpu: CpuSpent;
}

/** One create of the product's: request -> every copy; the request's own answer; the first copy. */
interface CreateRound {
  ms: number;
  requestMs: number;
  firstMs: number;
}

/** The product's copies of the fan-out distribution, watched: created once, then updated a round at a time. */
class ProductRounds {
  private readonly name = fleetDistributionName(0);
  private readonly tracker = new Tracker((object) => object.annotations[ANNOTATION_HASH] ?? '');
  readonly writes: number[] = [];

  private constructor(
    private readonly kube: BenchKube,
    private product: Product,
    private readonly m: number,
    private readonly pids: CpuPids,
    private watch: { stop(): void } | undefined = undefined,
  ) {}

  static async start(kube: BenchKube, product: Product, m: number, pids: CpuPids): Promise<ProductRounds> {
    const rounds = new ProductRounds(kube, product, m, pids);
    rounds.watch = await watchObjects(kube.kc, ['ConfigMap'], `${LABEL_DISTRIBUTION}=${rounds.name}`, rounds.tracker.listener());
    return rounds;
  }

  /**
   * Creates the distribution `count` times, deleted (and every copy gone) before each again; the
   * last stays. Each round also times the create request itself (the distribution's admission and
   * storage) and its first copy, both from the request.
   */
  async createRounds(fleet: Fleet, count: number): Promise<CreateRound[]> {
    const rounds: CreateRound[] = [];
    for (let round = 0; round < count; round++) {
      if (round > 0) await this.remove();
      await waitForQuiet(this.product);
      this.tracker.expect((hash) => hash !== '');
      const created = performance.now();
      if (round === 0) await fleet.addDistributions(1);
      else await this.kube.createDistribution(fleetDistribution(0));
      const requestMs = performance.now() - created;
      const ms = (await this.tracker.lastReachedAfter(this.m, `${this.m} copies of ${this.name}`)) - created;
      rounds.push({ ms, requestMs, firstMs: (this.tracker.firstReached() ?? Number.NaN) - created });
    }
    return rounds;
  }

  private async remove(): Promise<void> {
    await this.kube.deleteDistribution(this.name);
    await this.tracker.emptied(this.m, `copies of ${this.name} deleted`);
  }

  /** From now on, rounds time this process (the product restarted). */
  restarted(product: Product): void {
    this.product = product;
    this.pids.product = product.pid;
  }

  async update(round: number): Promise<Round> {
    const before = await waitForQuiet(this.product);
    const oldHash = this.tracker.latest.values().next().value ?? '';
    this.tracker.expect((hash) => hash !== oldHash);
    const cpu = await startCpuMeter(this.pids);
    // From the update's request, as the loop's time runs from its first one (its warm-up aside).
    const started = await this.kube.updateDistribution(this.name, (rd) => {
      rd.spec.resource = fleetDistribution(0, round + 2).spec.resource;
    });
    const ms = (await this.tracker.lastReachedAfter(this.m, `${this.m} copies of ${this.name} updated`)) - started;
    const firstMs = (this.tracker.firstReached() ?? Number.NaN) - started;
    const spent = await cpu();
    this.writes.push(requestsBetween(before, await waitForQuiet(this.product)).writes);
    return { ms, firstMs, cpu: spent };
  }

  stop(): void {
    this.watch?.stop();
  }
}

/** What one loop shape did: its create, then its update rounds, each phase apart. */
interface ShapeRounds {
  createRoundsMs: number[];
  protocol: string;
  connections: number;
  first: Round[];
  warmUp: Round[];
  rounds: Round[];
  loopCpuMs: number[];
}

/** The Go loop's ConfigMaps, watched: created once per shape, then replaced a round at a time by each shape. */
class LoopRounds {
  private readonly tracker = new Tracker((object) => object.data.revision ?? '');
  /** Every run writes a revision of its own: a replace with the same content would change nothing. */
  private revision = 1;
  readonly shapes: ShapeRounds[] = LOOP_SHAPES.map(() => ({ createRoundsMs: [], protocol: '', connections: 0, first: [], warmUp: [], rounds: [], loopCpuMs: [] }));

  private constructor(
    private readonly loop: GoLoop,
    private readonly m: number,
    private readonly pids: CpuPids,
    private watch: { stop(): void } | undefined = undefined,
  ) {}

  static async start(kube: BenchKube, loop: GoLoop, m: number, pids: CpuPids): Promise<LoopRounds> {
    const rounds = new LoopRounds(loop, m, pids);
    rounds.watch = await watchObjects(kube.kc, ['ConfigMap'], `${BASELINE_LABEL}=fan-out`, rounds.tracker.listener());
    return rounds;
  }

  /**
   * Each shape creates the M ConfigMaps in turn (deleted before each create), `count` rounds, which
   * shape goes first rotating; the last create's stay for the updates.
   */
  async createAll(count: number): Promise<void> {
    let created = false;
    for (let round = 0; round < count; round++) {
      for (const index of rotated([...LOOP_SHAPES.keys()], round)) {
        const shape = LOOP_SHAPES[index];
        const rounds = this.shapes[index];
        if (shape === undefined || rounds === undefined) continue;
        if (created) await this.deleteAll();
        const revision = String(++this.revision);
        this.tracker.expect((value) => value === revision);
        const answer = await this.loop.run('create', this.revision, shape);
        created = true;
        rounds.createRoundsMs.push((await this.tracker.lastReachedAfter(this.m, `baseline ConfigMaps created (${shapeName(shape)})`)) - answer.startedAt);
        rounds.protocol = answer.protocol;
        rounds.connections = Math.max(rounds.connections, answer.connections);
      }
    }
  }

  /** Deletes the ConfigMaps and waits until the watch has seen every one go. */
  async deleteAll(): Promise<void> {
    await this.loop.run('delete', 0);
    await this.tracker.emptied(this.m, 'baseline ConfigMaps deleted');
  }

  async update(index: number, phase: 'first' | 'warmUp' | 'rounds'): Promise<void> {
    const shape = LOOP_SHAPES[index];
    const rounds = this.shapes[index];
    if (shape === undefined || rounds === undefined) throw new Error(`no loop shape ${index}`);
    const revision = String(++this.revision);
    this.tracker.expect((value) => value === revision);
    const meter = await startCpuMeter(this.pids);
    const updated = await this.loop.run('update', this.revision, shape);
    const ms = (await this.tracker.lastReachedAfter(this.m, `baseline ConfigMaps replaced (${shapeName(shape)})`)) - updated.startedAt;
    const firstMs = (this.tracker.firstReached() ?? Number.NaN) - updated.startedAt;
    rounds[phase].push({ ms, firstMs, cpu: await meter() });
    if (phase === 'rounds') rounds.loopCpuMs.push(updated.cpuMs);
    rounds.connections = Math.max(rounds.connections, updated.connections);
  }

  sides(): LoopSide[] {
    return this.shapes.map((rounds, index) => ({
      ...summaryOf(rounds.createRoundsMs, rounds.first, rounds.warmUp, rounds.rounds),
      shape: LOOP_SHAPES[index] ?? { workers: 0, slowStart: false },
      protocol: rounds.protocol,
      connections: rounds.connections,
      loopCpuMs: median(rounds.loopCpuMs),
    }));
  }

  stop(): void {
    this.watch?.stop();
  }
}

function summaryOf(createRoundsMs: readonly number[], first: readonly Round[], warmUp: readonly Round[], rounds: readonly Round[]): FanOutSide {
  return {
    createMs: median(createRoundsMs),
    createRoundsMs: [...createRoundsMs],
    firstUpdateMs: median(first.map((r) => r.ms)),
    firstRoundsMs: first.map((r) => r.ms),
    updateMs: median(rounds.map((r) => r.ms)),
    updateRoundsMs: rounds.map((r) => r.ms),
    warmUpRoundsMs: warmUp.map((r) => r.ms),
    firstCopyMs: median(rounds.map((r) => r.firstMs)),
    updateCpu: medianCpu(rounds.map((r) => r.cpu)),
  };
}

/** `items` starting at the round's turn: which side goes first rotates from round to round. */
function rotated<T>(items: readonly T[], round: number): T[] {
  const turn = round % items.length;
  return [...items.slice(turn), ...items.slice(0, turn)];
}

/**
 * The product's and every loop shape's update rounds alternate, and which goes first rotates: a
 * machine whose pace drifts over the section (the API server's caches, etcd's compactions) then
 * weighs on every side alike, where all of one side's rounds before the other's would favour one.
 */
async function updateRounds(product: ProductRounds, loop: LoopRounds, from: number, count: number, phase: 'first' | 'warmUp' | 'rounds'): Promise<Round[]> {
  const productRounds: Round[] = [];
  const sides = [async (round: number): Promise<void> => void productRounds.push(await product.update(round)), ...LOOP_SHAPES.map((_, index) => () => loop.update(index, phase))];
  for (let round = from; round < from + count; round++) for (const side of rotated(sides, round)) await side(round);
  return productRounds;
}

const SOURCE_NAMESPACE = 'bench-fan-out-source';
const SOURCE_NAME = 'bench-fan-out-source';

/** The fleet template's data at `revision`, as the source ConfigMap. */
function sourceConfigMap(revision: number): V1ConfigMap {
  return { metadata: { name: SOURCE_NAME, namespace: SOURCE_NAMESPACE }, data: fleetDistribution(0, revision).spec.resource.data ?? {} };
}

/**
 * The same fan-out with the content in a source object: the source is replaced, and the time
 * runs until every copy carries it (the product sees the change through its watch of the source).
 */
async function sourceSide(kube: BenchKube, product: Product, m: number, rounds: number): Promise<FanOutResult['source']> {
  const tracker = new Tracker((object) => object.data.revision ?? '');
  const watch = await watchObjects(kube.kc, ['ConfigMap'], `${LABEL_DISTRIBUTION}=${SOURCE_NAME}`, tracker.listener());
  try {
    await kube.createNamespaces([SOURCE_NAMESPACE], {}, 1);
    await kube.createConfigMaps([SOURCE_NAMESPACE], () => sourceConfigMap(1), 1);
    tracker.expect((revision) => revision === '1');
    await kube.createDistribution({
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: SOURCE_NAME },
      spec: { source: { apiVersion: 'v1', kind: 'ConfigMap', namespace: SOURCE_NAMESPACE, name: SOURCE_NAME }, targets: { namespaceLabelSelector: { matchLabels: { [GROUP_LABEL]: FLEET_GROUP } } } },
    });
    await tracker.lastReachedAfter(m, `${m} copies of the source`);
    const roundsMs: number[] = [];
    for (let round = 0; round < rounds; round++) {
      await waitForQuiet(product);
      const revision = String(round + 2);
      tracker.expect((value) => value === revision);
      const started = await kube.replaceConfigMap(sourceConfigMap(round + 2));
      roundsMs.push((await tracker.lastReachedAfter(m, `${m} copies following the source`)) - started);
    }
    // Its copies would otherwise count in the later sections.
    await kube.deleteDistribution(SOURCE_NAME);
    return { updateMs: median(roundsMs), updateRoundsMs: roundsMs };
  } finally {
    watch.stop();
  }
}

export interface FanOutOptions {
  kube: BenchKube;
  product: Product;
  fleet: Fleet;
  size: BenchSize;
  kubeconfigPath: string;
  planeDir: string;
  /** Stops the product and starts it again, as users run it; later sections use the process it returns. */
  restart: () => Promise<Product>;
  /** Whether to run OpenKruise's kruise-manager as the peer (`--no-kruise`: skipped, and said so). */
  kruise: boolean;
}

export async function runFanOut(options: FanOutOptions): Promise<FanOutResult> {
  const { kube, fleet, size } = options;
  let product = options.product;
  const m = size.fanOut.namespaces;
  await fleet.grow(m);
  const pids = { product: product.pid, apiserver: await serverPid(options.planeDir, 'kube-apiserver'), etcd: await serverPid(options.planeDir, 'etcd') };
  const first = await product.scrape();
  const productRounds = await ProductRounds.start(kube, product, m, pids);
  let loopRounds: LoopRounds | undefined;
  /** Whether the loop's ConfigMaps may exist: deleted after a failure, which is what the section reports, so as not to weigh on later sections. */
  let loopObjects = false;
  try {
    const { createRounds, firstRounds, warmUpRounds, rounds: count } = size.fanOut;
    const productCreates = await productRounds.createRounds(fleet, createRounds);
    const loop = await GoLoop.prepare(options.kubeconfigPath, fleet.namespaces, await kube.getDistribution(fleetDistributionName(0)));
    loopRounds = await LoopRounds.start(kube, loop, m, pids);
    loopObjects = true;
    await loopRounds.createAll(createRounds);
    // The first updates after a start: the product restarted right before each (the loop is a new process every run).
    // Every process's counters, each from its start (the first's from the section's).
    const served = { requests: 0, connections: 0 };
    const tally = (from: Scrape, to: Scrape): void => {
      served.requests += Object.values(requestsBetween(from, to).byRequest).reduce((a, n) => a + n, 0);
      served.connections += to.sum(CONNECTIONS) - from.sum(CONNECTIONS);
    };
    let since = first;
    const firstRoundsOf: Round[] = [];
    for (let round = 0; round < firstRounds; round++) {
      tally(since, await waitForQuiet(product));
      product = await options.restart();
      since = parseMetrics('');
      productRounds.restarted(product);
      firstRoundsOf.push(...(await updateRounds(productRounds, loopRounds, round, 1, 'first')));
    }
    const warmUp = await updateRounds(productRounds, loopRounds, firstRounds, warmUpRounds, 'warmUp');
    const rounds = await updateRounds(productRounds, loopRounds, firstRounds + warmUpRounds, count, 'rounds');
    tally(since, await product.scrape());
    const productResult = {
      ...summaryOf(productCreates.map((r) => r.ms), firstRoundsOf, warmUp, rounds),
      createRequestMs: median(productCreates.map((r) => r.requestMs)),
      createFirstCopyMs: median(productCreates.map((r) => r.firstMs)),
      updateWrites: median(productRounds.writes),
      connectionsOpened: served.connections,
      requests: served.requests,
      rssBytes: await procMemoryBytes(product.pid),
    };
    const loops = loopRounds.sides();
    const baseline = loops.reduce((best, side) => (side.updateMs < best.updateMs ? side : best));
    const bestLoop = { createMs: Math.min(...loops.map((l) => l.createMs)), firstUpdateMs: Math.min(...loops.map((l) => l.firstUpdateMs)), updateMs: baseline.updateMs };
    // The baseline's ConfigMaps would otherwise count in the source's rounds and the later sections' API server load.
    await loopRounds.deleteAll();
    loopObjects = false;
    const source = await sourceSide(kube, product, m, count);
    return {
      namespaces: m,
      machineCores: availableParallelism(),
      applyParallelism: product.applyParallelism,
      createRounds,
      firstRounds,
      warmUpRounds,
      rounds: count,
      product: productResult,
      loops,
      baseline,
      bestLoop,
      source,
      createRate: bestLoop.createMs / productResult.createMs,
      firstUpdateRate: bestLoop.firstUpdateMs / productResult.firstUpdateMs,
      updateRate: bestLoop.updateMs / productResult.updateMs,
      sourceRate: bestLoop.updateMs / source.updateMs,
      kruise: options.kruise ? await peerResult('fan-out', () => runKruisePeer(size)) : { state: 'skipped', reason: '--no-kruise' },
    };
  } catch (error) {
    if (loopObjects) await loopRounds?.deleteAll().catch((err: unknown) => console.error(`[bench] fan-out: deleting the loop's ConfigMaps failed: ${String(err)}`));
    throw error;
  } finally {
    productRounds.stop();
    loopRounds?.stop();
  }
}
