// 4. Steady state: the fleet (M namespaces) targeted by 10 distributions, converged; then one full
// sweep over every distribution the controller knows. Expected: zero writes and no
// per-namespace reads; what remains is CPU time to re-plan from the caches.
import { performance } from 'node:perf_hooks';
import type { BenchKube } from './bench-kube.js';
import type { Fleet } from './fleet.js';
import { counterValue, waitForQuiet, type Product } from './product.js';
import type { BenchSize } from './sizes.js';

export interface SteadyStateResult {
  namespaces: number;
  fleetDistributions: number;
  /** Every distribution the sweep reconciled (the fleet's and the other sections'). */
  reconciles: number;
  copiesTracked: number;
  namespacesTracked: number;
  /** New distributions created -> every fleet distribution reports all namespaces succeeded. */
  convergeMs: number;
  newCopies: number;
  sweep: {
    writes: number;
    reads: number;
    watches: number;
    byRequest: Record<string, number>;
    cpuUserMs: number;
    cpuSystemMs: number;
    wallMs: number;
  };
}

export async function runSteadyState(options: { kube: BenchKube; product: Product; fleet: Fleet; size: BenchSize }): Promise<SteadyStateResult> {
  const { product, fleet, size } = options;
  const { controller, metrics } = product;
  await fleet.grow(size.fanOut.namespaces);
  const before = fleet.distributionNames.length;
  const started = performance.now();
  const added = await fleet.addDistributions(size.steadyState.distributions);
  await fleet.waitConverged(120_000 + fleet.namespaces.length * added.length * 20);
  const convergeMs = performance.now() - started;
  await waitForQuiet(controller);

  const reconcilesBefore = await counterValue(metrics.reconcileTotal);
  controller.requests.reset();
  const cpu = process.cpuUsage();
  const sweepStart = performance.now();
  controller.sweepNow();
  await controller.idle();
  const wallMs = performance.now() - sweepStart;
  const { user, system } = process.cpuUsage(cpu);
  const tally = controller.requests.tally();
  const reconciles = (await counterValue(metrics.reconcileTotal)) - reconcilesBefore;
  return {
    namespaces: fleet.namespaces.length,
    fleetDistributions: fleet.distributionNames.length,
    reconciles,
    copiesTracked: controller.caches.copies.size,
    namespacesTracked: controller.caches.namespaces.size,
    convergeMs,
    newCopies: (fleet.distributionNames.length - before) * fleet.namespaces.length,
    sweep: {
      writes: tally.writes,
      reads: (tally.byVerb.get ?? 0) + (tally.byVerb.list ?? 0),
      watches: tally.byVerb.watch ?? 0,
      byRequest: tally.byRequest,
      cpuUserMs: user / 1000,
      cpuSystemMs: system / 1000,
      wallMs,
    },
  };
}
