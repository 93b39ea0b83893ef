// The fan-out's peer: OpenKruise v1.9.0's kruise-manager doing the same distribution over the same
// namespaces, on a control plane of its own (its CRD, conversion and webhooks are not for the
// product's plane), one controller at a time: the product's plane is idle meanwhile. The same
// M namespaces with the same label, the same distribution (the fleet's template, same size);
// created (as many times as ours, deleted in between), then kruise-manager restarted before each
// of its first updates (the first update after a start, on a cold process with cold connections),
// then warm-up and timed update rounds, as ours; each figure the median of its rounds.
//
// Flags (KRUISE_FLAGS): its client's rate limit raised far above what the API server takes here
// (--rest-config-qps=2000 --rest-config-burst=4000; its defaults, 30 and 50, would make it the
// slowest side by construction) and 16 ResourceDistribution workers (default 3). kruise-manager
// v1.9.0 has no flag selecting controllers: every controller starts, the others idle (no objects
// of their kinds exist); ResourceDistributionGate is on.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { GROUP, PLURAL, VERSION } from '../src/domain/types.js';
import { startKruise, startKruisePlane, type KruiseManager } from '../test/control-plane/kruise-manager.js';
import { BenchKube, GROUP_LABEL, numberedNames } from './bench-kube.js';
import { FLEET_GROUP, fleetDistribution, fleetDistributionName } from './fleet.js';
import { watchObjects } from './object-watch.js';
import { procMemoryBytes } from './product.js';
import { parseMetrics } from './scrape.js';
import type { BenchSize } from './sizes.js';
import { median } from './stats.js';
import { Tracker } from './tracker.js';
import { waitUntil } from './wait.js';

export const KRUISE_FLAGS = ['--rest-config-qps=2000', '--rest-config-burst=4000', '--resourcedistribution-workers=16'] as const;

export interface KruiseSide {
  version: string;
  flags: string[];
  /** Create request -> M copies visible (median of the create rounds). */
  createMs: number;
  createRoundsMs: number[];
  /** kruise-manager restarted, then its first update: request -> M copies with the new content (median of those rounds). */
  firstUpdateMs: number;
  firstRoundsMs: number[];
  /** Median of the timed rounds, after the warm-up ones. */
  updateMs: number;
  updateRoundsMs: number[];
  warmUpRoundsMs: number[];
  /** kruise-manager's RSS (VmRSS) after the last round. */
  rssBytes: number;
}

/** Whether a peer ran: `skipped` (--no-kruise) or `failed` carry why, and the section keeps its own rows. */
export type KruisePeerResult<Side> = { state: 'measured'; side: Side } | { state: 'skipped' | 'failed'; reason: string };
export type KruisePeer = KruisePeerResult<KruiseSide>;

/** A peer's figures, or why there are none: its failure is reported, not the section's. */
export async function peerResult<Side>(section: string, measure: () => Promise<Side>): Promise<KruisePeerResult<Side>> {
  try {
    return { state: 'measured', side: await measure() };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    console.error(`[bench] ${section}: the Kruise peer failed: ${reason}`);
    return { state: 'failed', reason: reason.split('\n')[0] ?? reason };
  }
}

const say = (line: string): void => console.error(`[bench] fan-out, Kruise: ${line}`);

/** Sum of kruise-manager's API requests so far (controller-runtime's client metrics). */
async function kruiseRequests(kruise: KruiseManager): Promise<number> {
  const response = await fetch(kruise.metricsUrl);
  return parseMetrics(await response.text()).sum('rest_client_requests_total');
}

/** Until kruise-manager has made no API request for `quietMs` (its start's resyncs and status writes done). */
export async function waitForKruiseQuiet(kruise: KruiseManager, quietMs = 1500, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = await kruiseRequests(kruise);
  for (;;) {
    await sleep(quietMs);
    const now = await kruiseRequests(kruise);
    if (now === last) return;
    if (performance.now() > deadline) throw new Error(`kruise-manager not quiet within ${timeoutMs / 1000} s`);
    last = now;
  }
}

/** Until kruise-manager's webhook admits a distribution (a dry-run create): it serves its webhooks and conversion. */
export async function waitForKruiseWebhook(kube: BenchKube, kruise: KruiseManager): Promise<void> {
  const probe = { ...fleetDistribution(0), metadata: { name: 'bench-kruise-probe' } };
  await waitUntil(
    "kruise-manager's webhook",
    async () => {
      if (kruise.hasExited()) throw new Error(`kruise-manager exited:\n${await kruise.tail(4_000)}`);
      return kube.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: probe, dryRun: 'All' }).then(
        () => true,
        () => false,
      );
    },
    180_000,
    undefined,
    1_000,
  );
}

class KruiseRun {
  private readonly name = fleetDistributionName(0);
  private readonly tracker = new Tracker((object) => object.data.revision ?? '');
  /** Every update writes a revision of its own (1 is the create's). */
  private revision = 1;
  private kruise: KruiseManager | undefined;
  private watch: { stop(): void } | undefined;

  constructor(
    private readonly kube: BenchKube,
    private readonly start: () => Promise<KruiseManager>,
    private readonly m: number,
  ) {}

  async begin(namespaces: readonly string[], concurrency: number): Promise<void> {
    await this.kube.createNamespaces(namespaces, { [GROUP_LABEL]: FLEET_GROUP }, concurrency);
    this.watch = await watchObjects(this.kube.kc, ['ConfigMap'], '', (type, object, atMs) => {
      if (object.name !== this.name) return;
      if (type === 'DELETED') this.tracker.forget(object, atMs);
      else this.tracker.observe(object, atMs);
    });
    await this.restart();
  }

  /** kruise-manager (again): serving, and quiet after its start. */
  async restart(): Promise<void> {
    await this.kruise?.stop(10_000);
    this.kruise = await this.start();
    await waitForKruiseWebhook(this.kube, this.kruise);
    await waitForKruiseQuiet(this.kruise);
  }

  /** Creates the distribution `count` times, deleted (its copies gone, by the garbage collector) before each again. */
  async create(count: number): Promise<number[]> {
    const roundsMs: number[] = [];
    for (let round = 0; round < count; round++) {
      if (round > 0) {
        await this.kube.deleteDistribution(this.name);
        await this.tracker.emptied(this.m, `Kruise's copies deleted`);
      }
      if (this.kruise !== undefined) await waitForKruiseQuiet(this.kruise);
      this.tracker.expect((revision) => revision === '1');
      const created = performance.now();
      await this.kube.createDistribution(fleetDistribution(0));
      roundsMs.push((await this.tracker.lastReachedAfter(this.m, `Kruise's ${this.m} copies`)) - created);
    }
    return roundsMs;
  }

  async update(): Promise<number> {
    if (this.kruise === undefined) throw new Error('kruise-manager is not running');
    await waitForKruiseQuiet(this.kruise);
    const revision = ++this.revision;
    this.tracker.expect((value) => value === String(revision));
    const started = await this.kube.updateDistribution(this.name, (rd) => {
      rd.spec.resource = fleetDistribution(0, revision).spec.resource;
    });
    return (await this.tracker.lastReachedAfter(this.m, `Kruise's ${this.m} copies updated`)) - started;
  }

  async rss(): Promise<number> {
    return this.kruise === undefined ? Number.NaN : procMemoryBytes(this.kruise.pid);
  }

  async tail(): Promise<string> {
    return (await this.kruise?.tail(4_000)) ?? '';
  }

  async end(): Promise<void> {
    this.watch?.stop();
    await this.kruise?.stop(10_000);
  }
}

/** The peer's row: a fresh plane, kruise-manager on it, the same distribution over `namespaces` namespaces. */
export async function runKruisePeer(size: BenchSize): Promise<KruiseSide> {
  const m = size.fanOut.namespaces;
  const started = performance.now();
  const plane = await startKruisePlane({ log: (line) => say(line) });
  const kube = new BenchKube(plane.kubeConfig);
  const run = new KruiseRun(kube, () => startKruise(plane.kubeconfigPath, plane.dir, { flags: KRUISE_FLAGS }), m);
  try {
    await run.begin(numberedNames('bench-fleet-ns', 0, m), size.clientConcurrency);
    const { createRounds, firstRounds, warmUpRounds, rounds } = size.fanOut;
    const createRoundsMs = await run.create(createRounds);
    say(`${m} copies created in ${createRoundsMs.map((ms) => ms.toFixed(0)).join(', ')} ms; restarting kruise-manager before each first update`);
    const firstRoundsMs: number[] = [];
    for (let round = 0; round < firstRounds; round++) {
      await run.restart();
      firstRoundsMs.push(await run.update());
    }
    const warmUpRoundsMs: number[] = [];
    for (let round = 0; round < warmUpRounds; round++) warmUpRoundsMs.push(await run.update());
    const updateRoundsMs: number[] = [];
    for (let round = 0; round < rounds; round++) updateRoundsMs.push(await run.update());
    const rssBytes = await run.rss();
    say(`done in ${((performance.now() - started) / 1000).toFixed(1)} s, its plane's start included`);
    return {
      version: 'v1.9.0',
      flags: [...KRUISE_FLAGS],
      createMs: median(createRoundsMs),
      createRoundsMs,
      firstUpdateMs: median(firstRoundsMs),
      firstRoundsMs,
      updateMs: median(updateRoundsMs),
      updateRoundsMs,
      warmUpRoundsMs,
      rssBytes,
    };
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nkruise-manager log:\n${await run.tail()}`, { cause: error });
  } finally {
    kube.close();
    await run.end();
    await plane.stop();
  }
}
