// 3. Fan-out: one distribution targets M namespaces. Created: how long until every copy exists?
// Updated: how long until every copy carries the new hash? Both as seen by a watch. Baseline: a
// client-go write loop (client-go's HTTP/2 transport, no client rate limit, as many workers as
// the product's applyParallelism) creating, then replacing, M ConfigMaps of the same shape (data,
// label, annotations, the ownerReference to the distribution), seen by the same kind of watch:
// the fastest honest way to make the same writes from this machine. The two sides' update rounds
// alternate. The first rounds of each side warm up and are reported apart: the first rounds after
// the creates are slower on both sides, and the product, a long-running process, makes its first
// passes before V8 has compiled its hot paths.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { ANNOTATION_HASH, API_VERSION, KIND, LABEL_DISTRIBUTION, type ResourceDistribution } from '../src/domain/types.js';
import { ensureBenchProgram } from '../test/control-plane/index.js';
import { GROUP_LABEL, type BenchKube } from './bench-kube.js';
import { FLEET_GROUP, fleetDistribution, fleetDistributionName, type Fleet } from './fleet.js';
import { watchObjects } from './object-watch.js';
import { medianCpu, serverPid, startCpuMeter, type CpuPids, type CpuSpent } from './process-cpu.js';
import { requestsBetween, waitForQuiet, type Product } from './product.js';
import type { BenchSize } from './sizes.js';
import { median } from './stats.js';
import { Tracker } from './tracker.js';

export interface FanOutSide {
  /** Start -> M objects visible (creates). */
  createMs: number;
  /** Start -> M objects visible with the new content (median of the rounds). */
  updateMs: number;
  updateRoundsMs: number[];
  /** The warm-up rounds before them, not counted. */
  warmUpRoundsMs: number[];
  /** Start -> the first object visible with the new content (median of the update rounds): what comes before writing. */
  firstCopyMs: number;
  /** CPU spent over an update round, from its first request until every copy is seen (median of the rounds). */
  updateCpu: CpuSpent;
}

export interface FanOutResult {
  namespaces: number;
  /** Cores of this machine, shared by the product, the control plane and the bench. */
  machineCores: number;
  applyParallelism: number;
  warmUpRounds: number;
  rounds: number;
  product: FanOutSide & {
    /** API writes for one update (M replaces + status; median). */
    updateWrites: number;
    /** TLS connections the product opened over the whole section. */
    connectionsOpened: number;
    requests: number;
  };
  /** `loopCpuMs`: the Go loop's own CPU per update round (median). */
  baseline: FanOutSide & { connections: number; errors: number; loopCpuMs: number };
  /** A distribution with spec.source over the same namespaces: source replaced -> every copy carries it (median of the rounds). */
  source: { updateMs: number; updateRoundsMs: number[] };
  /** Baseline time / product time: 1 means as fast as client-go, 0.8 means 80 % of its rate. */
  createRate: number;
  updateRate: number;
  /** Baseline update time / source-change time. */
  sourceRate: number;
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

  static async prepare(kubeconfigPath: string, namespaces: readonly string[], concurrency: number, owner: ResourceDistribution): Promise<GoLoop> {
    const binary = await ensureBenchProgram('write-loop', { log: (line) => console.error(`[bench] ${line}`) });
    const dir = await mkdtemp(join(tmpdir(), 'rd-bench-loop-'));
    const template = fleetDistribution(0).spec.resource;
    const files = { namespaces: join(dir, 'namespaces'), payload: join(dir, 'payload.json'), annotations: join(dir, 'annotations.json'), owners: join(dir, 'owners.json') };
    // A copy's ownerReference (to the fan-out distribution): the garbage collector tracks both alike.
    const { apiVersion, kind, metadata } = owner;
    await writeFile(files.owners, JSON.stringify([{ apiVersion, kind, name: metadata.name, uid: metadata.uid, controller: true, blockOwnerDeletion: true }]));
    await writeFile(files.namespaces, `${namespaces.join('\n')}\n`);
    // The same data and the same metadata sizes as a copy, less the revision the loop writes itself.
    const { revision: _, ...data } = template.data ?? {};
    await writeFile(files.payload, JSON.stringify(data));
    await writeFile(
      files.annotations,
      JSON.stringify({ 'bench.resource-distributor.io/from': BASELINE_NAME, 'bench.resource-distributor.io/hash': 'f'.repeat(64), 'bench.resource-distributor.io/at': new Date().toISOString() }),
    );
    const args = ['-kubeconfig', kubeconfigPath, '-namespaces', files.namespaces, '-name', BASELINE_NAME, '-label', `${BASELINE_LABEL}=fan-out`];
    args.push('-concurrency', String(concurrency), '-payload', files.payload, '-annotations', files.annotations, '-owner-references', files.owners);
    return new GoLoop(binary, args);
  }

  async run(mode: 'create' | 'update' | 'delete', revision: number): Promise<LoopAnswer & { startedAt: number }> {
    const answer = await runGoLoop(this.binary, [...this.args, '-mode', mode, '-revision', String(revision)]);
    return { ...answer, startedAt: answer.startedAtUnixMs - performance.timeOrigin };
  }
}

/** One side's update round: its time, and the CPU each process spent meanwhile. */
interface Round {
  ms: number;
  /** Start -> the first object seen with the new content. */
  firstMs: number;
  cpu: CpuSpent;
}

/** The product's copies of the fan-out distribution, watched: created once, then updated a round at a time. */
class ProductRounds {
  private readonly name = fleetDistributionName(0);
  private readonly tracker = new Tracker((object) => object.annotations[ANNOTATION_HASH] ?? '');
  readonly writes: number[] = [];

  private constructor(
    private readonly kube: BenchKube,
    private readonly product: Product,
    private readonly m: number,
    private readonly pids: CpuPids,
    private watch: { stop(): void } | undefined = undefined,
  ) {}

  static async start(kube: BenchKube, product: Product, m: number, pids: CpuPids): Promise<ProductRounds> {
    const rounds = new ProductRounds(kube, product, m, pids);
    rounds.watch = await watchObjects(kube.kc, ['ConfigMap'], `${LABEL_DISTRIBUTION}=${rounds.name}`, rounds.tracker.listener());
    return rounds;
  }

  async create(fleet: Fleet): Promise<number> {
    await waitForQuiet(this.product);
    this.tracker.expect((hash) => hash !== '');
    const created = performance.now();
    await fleet.addDistributions(1);
    return (await this.tracker.lastReachedAfter(this.m, `${this.m} copies of ${this.name}`)) - created;
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

/** The Go loop's ConfigMaps, watched: created once, then replaced a round at a time. */
class LoopRounds {
  private readonly tracker = new Tracker((object) => object.data.revision ?? '');
  readonly loopCpuMs: number[] = [];
  connections = 0;

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

  async create(): Promise<number> {
    this.tracker.expect((revision) => revision === '1');
    const created = await this.loop.run('create', 1);
    this.connections = created.connections;
    return (await this.tracker.lastReachedAfter(this.m, 'baseline ConfigMaps created')) - created.startedAt;
  }

  async update(round: number): Promise<Round> {
    const revision = String(round + 2);
    this.tracker.expect((value) => value === revision);
    const meter = await startCpuMeter(this.pids);
    const updated = await this.loop.run('update', round + 2);
    const ms = (await this.tracker.lastReachedAfter(this.m, 'baseline ConfigMaps replaced')) - updated.startedAt;
    const firstMs = (this.tracker.firstReached() ?? Number.NaN) - updated.startedAt;
    const cpu = await meter();
    this.loopCpuMs.push(updated.cpuMs);
    this.connections = Math.max(this.connections, updated.connections);
    return { ms, firstMs, cpu };
  }

  stop(): void {
    this.watch?.stop();
  }
}

function summaryOf(createMs: number, warmUp: readonly Round[], rounds: readonly Round[]): FanOutSide {
  return {
    createMs,
    updateMs: median(rounds.map((r) => r.ms)),
    updateRoundsMs: rounds.map((r) => r.ms),
    warmUpRoundsMs: warmUp.map((r) => r.ms),
    firstCopyMs: median(rounds.map((r) => r.firstMs)),
    updateCpu: medianCpu(rounds.map((r) => r.cpu)),
  };
}

/**
 * The product's and the loop's update rounds alternate, and which goes first alternates too: a
 * machine whose pace drifts over the section (the API server's caches, etcd's compactions) then
 * weighs on both alike, where all of one side's rounds before the other's would favour one.
 */
async function updateRounds(product: ProductRounds, loop: LoopRounds, from: number, count: number): Promise<{ product: Round[]; loop: Round[] }> {
  const rounds = { product: [] as Round[], loop: [] as Round[] };
  for (let round = from; round < from + count; round++) {
    const productRound = async (): Promise<void> => void rounds.product.push(await product.update(round));
    const loopRound = async (): Promise<void> => void rounds.loop.push(await loop.update(round));
    for (const side of round % 2 === 0 ? [productRound, loopRound] : [loopRound, productRound]) await side();
  }
  return rounds;
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

export async function runFanOut(options: { kube: BenchKube; product: Product; fleet: Fleet; size: BenchSize; kubeconfigPath: string; planeDir: string }): Promise<FanOutResult> {
  const { kube, product, fleet, size } = options;
  const m = size.fanOut.namespaces;
  await fleet.grow(m);
  const pids = { product: product.pid, apiserver: await serverPid(options.planeDir, 'kube-apiserver'), etcd: await serverPid(options.planeDir, 'etcd') };
  const first = await product.scrape();
  const productRounds = await ProductRounds.start(kube, product, m, pids);
  let loopRounds: LoopRounds | undefined;
  let loop: GoLoop | undefined;
  try {
    const productCreateMs = await productRounds.create(fleet);
    loop = await GoLoop.prepare(options.kubeconfigPath, fleet.namespaces, product.applyParallelism, await kube.getDistribution(fleetDistributionName(0)));
    loopRounds = await LoopRounds.start(kube, loop, m, pids);
    const loopCreateMs = await loopRounds.create();
    const { warmUpRounds } = size.fanOut;
    const warmUp = await updateRounds(productRounds, loopRounds, 0, warmUpRounds);
    const rounds = await updateRounds(productRounds, loopRounds, warmUpRounds, size.fanOut.rounds);
    const last = await product.scrape();
    const productResult = {
      ...summaryOf(productCreateMs, warmUp.product, rounds.product),
      updateWrites: median(productRounds.writes),
      connectionsOpened: last.sum(CONNECTIONS) - first.sum(CONNECTIONS),
      requests: Object.values(requestsBetween(first, last).byRequest).reduce((sum, n) => sum + n, 0),
    };
    const baseline = { ...summaryOf(loopCreateMs, warmUp.loop, rounds.loop), loopCpuMs: median(loopRounds.loopCpuMs), connections: loopRounds.connections, errors: 0 };
    // The baseline's ConfigMaps would otherwise count in the source's rounds and the later sections' API server load.
    await loop.run('delete', 0);
    loop = undefined;
    const source = await sourceSide(kube, product, m, size.fanOut.rounds);
    return {
      namespaces: m,
      machineCores: availableParallelism(),
      applyParallelism: product.applyParallelism,
      warmUpRounds,
      rounds: size.fanOut.rounds,
      product: productResult,
      baseline,
      source,
      createRate: baseline.createMs / productResult.createMs,
      updateRate: baseline.updateMs / productResult.updateMs,
      sourceRate: baseline.updateMs / source.updateMs,
    };
  } finally {
    productRounds.stop();
    loopRounds?.stop();
    // After a failure, which is what the section reports: its ConfigMaps would weigh on the sections after it.
    await loop?.run('delete', 0).catch((error: unknown) => console.error(`[bench] fan-out: deleting the loop's ConfigMaps failed: ${String(error)}`));
  }
}
