// 5. Steady state: everything the earlier sections distributed is converged; the product is left
// alone for a while, its periodic sweep re-planning every distribution several times. Expected:
// zero writes and no per-namespace reads; what remains is the CPU of re-planning from the caches.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { requestsBetween, SWEEP_INTERVAL_SECONDS, waitForQuiet, workBetween, type Product } from './product.js';
import type { BenchSize } from './sizes.js';

export interface SteadyStateResult {
  idleSeconds: number;
  sweepIntervalSeconds: number;
  /** Reconciles during the idle window (every distribution once per sweep). */
  reconciles: number;
  distributions: number;
  /** Copies in the caches (target namespaces by state). */
  copiesTracked: number;
  writes: number;
  reads: number;
  byRequest: Record<string, number>;
  /** The product process's CPU over the whole window. */
  cpuMs: number;
  wallMs: number;
}

export async function runSteadyState(options: { product: Product; size: BenchSize; distributions: number }): Promise<SteadyStateResult> {
  const { product, size } = options;
  const before = await waitForQuiet(product);
  const started = performance.now();
  await sleep(size.steadyState.idleSeconds * 1000);
  const after = await product.scrape();
  const wallMs = performance.now() - started;
  const requests = requestsBetween(before, after);
  const { reconciles, cpuMs } = workBetween(before, after);
  return {
    idleSeconds: size.steadyState.idleSeconds,
    sweepIntervalSeconds: SWEEP_INTERVAL_SECONDS,
    reconciles,
    distributions: options.distributions,
    copiesTracked: after.sum('resource_distributor_copies'),
    writes: requests.writes,
    reads: requests.reads,
    byRequest: requests.byRequest,
    cpuMs,
    wallMs,
  };
}
