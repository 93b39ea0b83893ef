// 7b. One reconcile of the largest distribution a cluster can store, created for real through the
// API server (admission by the product included): from the create request until its status,
// seen through a watch, reports every target succeeded for its generation; and the product's CPU
// over that time, until it is quiet again. Baseline, in the same run: the same template over the
// same targets, listed once by name, without the 20,000 list entries and the selector. Each pair
// is measured `rounds` times, small first; the copies are garbage-collected between runs.
import { performance } from 'node:perf_hooks';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, LABEL_DISTRIBUTION, PLURAL, VERSION, type ResourceDistribution } from '../src/domain/types.js';
import { GROUP_LABEL, groupDistribution, type BenchKube } from './bench-kube.js';
import { FLEET_GROUP, type Fleet } from './fleet.js';
import { crdBounds, largestStorable, type Shape } from './largest-shape.js';
import { waitForQuiet, type Product } from './product.js';
import type { Scrape } from './scrape.js';
import { percentile, ratio } from './stats.js';
import { waitUntil } from './wait.js';

export interface ReconcileRun {
  /** The create request's round trip (the API server calls the product's webhook meanwhile). */
  createMs: number;
  /** Create request sent -> converged status seen through the watch. */
  convergedMs: number;
  /** The product's CPU from just before the create until it was quiet again. */
  cpuMs: number;
  /** Reconciles in that window (a periodic sweep may add one per distribution). */
  reconciles: number;
  /** The product's own mean reconcile time in that window. */
  reconcileMeanMs: number;
  /** The converged object as the watch delivered it (status included). */
  storedBytes: number;
}

export interface LargestReconcileResult {
  targets: number;
  shape: Shape;
  smallBytes: number;
  /** Medians over the rounds. */
  small: ReconcileRun;
  largest: ReconcileRun;
  smallRounds: ReconcileRun[];
  largestRounds: ReconcileRun[];
  /** largest / small, of the medians. */
  ratio: { createMs: number; convergedMs: number; cpuMs: number };
}

const CPU = 'resource_distributor_process_cpu_seconds_total';
const RECONCILES = 'resource_distributor_reconcile_total';
const RECONCILE_SECONDS = 'resource_distributor_reconcile_duration_seconds';
const PATH = `/apis/${GROUP}/${VERSION}/${PLURAL}`;
const TIMEOUT_MS = 60_000;

interface Convergence {
  /** performance.now() when the converged status arrived, and the object's JSON size. */
  reached: Promise<{ at: number; bytes: number }>;
  stop(): void;
}

/** Watches one distribution by name until its status reports `targets` namespaces, all succeeded, for its generation. */
async function watchConvergence(kc: KubeConfig, name: string, targets: number): Promise<Convergence> {
  let stopped = false;
  let last = 'no status yet';
  let settle: { resolve: (value: { at: number; bytes: number }) => void; reject: (error: Error) => void } | undefined;
  const reached = new Promise<{ at: number; bytes: number }>((resolve, reject) => (settle = { resolve, reject }));
  // Awaited later: a failure meanwhile must not count as unhandled.
  reached.catch(() => undefined);
  const timer = setTimeout(() => settle?.reject(new Error(`${name} did not converge within ${TIMEOUT_MS / 1000} s (${last})`)), TIMEOUT_MS);
  const controller = await new Watch(kc).watch(
    PATH,
    { fieldSelector: `metadata.name=${name}` },
    (phase, rd: ResourceDistribution) => {
      const at = performance.now();
      const status = rd.status;
      if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
      last = status ? `desired ${status.desired}, succeeded ${status.succeeded}, observedGeneration ${status.observedGeneration ?? '-'} of ${rd.metadata.generation ?? '-'}` : last;
      if (status?.observedGeneration === rd.metadata.generation && status?.desired === targets && status.succeeded === targets) {
        settle?.resolve({ at, bytes: Buffer.byteLength(JSON.stringify(rd)) });
      }
    },
    (error: unknown) => {
      if (!stopped) settle?.reject(new Error(`the watch of ${name} ended before it converged: ${error instanceof Error ? error.message : String(error)}`));
    },
  );
  return {
    reached,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      controller.abort();
    },
  };
}

function reconcileFigures(before: Scrape, after: Scrape): { reconciles: number; reconcileMeanMs: number } {
  const reconciles = after.sum(RECONCILES) - before.sum(RECONCILES);
  const seconds = after.sum(`${RECONCILE_SECONDS}_sum`) - before.sum(`${RECONCILE_SECONDS}_sum`);
  return { reconciles, reconcileMeanMs: ratio(seconds * 1000, after.sum(`${RECONCILE_SECONDS}_count`) - before.sum(`${RECONCILE_SECONDS}_count`)) };
}

/** Creates `rd`, measures until converged and quiet, then deletes it and waits until its copies are gone. */
async function measure(kube: BenchKube, product: Product, rd: ResourceDistribution, targets: number): Promise<ReconcileRun> {
  const name = rd.metadata.name ?? '';
  const convergence = await watchConvergence(kube.kc, name, targets);
  let run: ReconcileRun;
  try {
    const before = await waitForQuiet(product, 500);
    const started = performance.now();
    await kube.createDistribution(rd);
    const createMs = performance.now() - started;
    const reached = await convergence.reached;
    const after = await waitForQuiet(product, 500);
    run = {
      createMs,
      convergedMs: reached.at - started,
      cpuMs: (after.sum(CPU) - before.sum(CPU)) * 1000,
      ...reconcileFigures(before, after),
      storedBytes: reached.bytes,
    };
  } finally {
    convergence.stop();
  }
  await kube.deleteDistribution(name);
  const copies = async (): Promise<number> => (await kube.core.listConfigMapForAllNamespaces({ labelSelector: `${LABEL_DISTRIBUTION}=${name}` })).items.length;
  await waitUntil(`the copies of ${name} garbage-collected`, async () => (await copies()) === 0, TIMEOUT_MS, undefined, 250);
  return run;
}

function median(runs: readonly ReconcileRun[]): ReconcileRun {
  const of = (pick: (run: ReconcileRun) => number): number => percentile(runs.map(pick).sort((a, b) => a - b), 50);
  return {
    createMs: of((r) => r.createMs),
    convergedMs: of((r) => r.convergedMs),
    cpuMs: of((r) => r.cpuMs),
    reconciles: of((r) => r.reconciles),
    reconcileMeanMs: of((r) => r.reconcileMeanMs),
    storedBytes: of((r) => r.storedBytes),
  };
}

/** The fleet's ConfigMap template under `name`, over `targets` listed by name. */
function small(name: string, targets: readonly string[]): ResourceDistribution {
  const rd = groupDistribution(name, 'ConfigMap', FLEET_GROUP);
  return { ...rd, spec: { ...rd.spec, targets: { includedNamespaces: { list: targets.map((target) => ({ name: target })) } } } };
}

export async function runLargestReconcile(options: { kube: BenchKube; product: Product; fleet: Fleet; namespaces: number; rounds: number }): Promise<LargestReconcileResult> {
  const { kube, product, fleet } = options;
  await fleet.grow(options.namespaces);
  const targets = fleet.namespaces.slice(0, options.namespaces);
  const bounds = crdBounds();
  const smallRounds: ReconcileRun[] = [];
  const largestRounds: ReconcileRun[] = [];
  let shape: Shape | undefined;
  let smallBytes = 0;
  for (let round = 0; round < options.rounds; round++) {
    const base = small(`bench-small-${round}`, targets);
    smallBytes = JSON.stringify(base).length;
    smallRounds.push(await measure(kube, product, base, targets.length));
    const largest = largestStorable(bounds, small(`bench-largest-${round}`, targets), { [GROUP_LABEL]: FLEET_GROUP }, targets);
    shape = largest.shape;
    largestRounds.push(await measure(kube, product, largest.rd, targets.length));
  }
  if (shape === undefined) throw new Error('largest: no reconcile round ran');
  const [s, l] = [median(smallRounds), median(largestRounds)];
  return {
    targets: targets.length,
    shape,
    smallBytes,
    small: s,
    largest: l,
    smallRounds,
    largestRounds,
    ratio: { createMs: ratio(l.createMs, s.createMs), convergedMs: ratio(l.convergedMs, s.convergedMs), cpuMs: ratio(l.cpuMs, s.cpuMs) },
  };
}
