// 4. Memory: the product's own process, sampled after a full garbage collection: idle right after
// its start; once everything the earlier sections distributed has converged; and again after two
// more distributions over the fleet. The first growth includes what warming up costs (compiled
// code, metric series); the second, divided by the copies it added, is the cost of one more copy.
import type { Fleet } from './fleet.js';
import { waitForQuiet, type Product } from './product.js';

export interface MemorySample {
  rss: number;
  heapUsed: number;
}

export interface MemoryResult {
  /** Target namespaces by state, summed: the copies the product keeps track of. */
  copies: number;
  namespaces: number;
  idle: MemorySample;
  after: MemorySample;
  /** (after - idle) heap / copies: warming up included. */
  bytesPerCopy: number;
  /** After two more distributions over the fleet. */
  more: { copies: number; sample: MemorySample; bytesPerCopy: number };
}

const COPIES = 'resource_distributor_copies';
const MORE_DISTRIBUTIONS = 2;

export async function runMemory(options: { product: Product; fleet: Fleet; idle: MemorySample; namespaces: number }): Promise<MemoryResult> {
  const { product, fleet, idle } = options;
  const scrape = await waitForQuiet(product);
  const after = await product.memory();
  const copies = scrape.sum(COPIES);

  await fleet.addDistributions(fleet.distributionNames.length + MORE_DISTRIBUTIONS);
  await fleet.waitConverged(120_000);
  const moreCopies = (await waitForQuiet(product)).sum(COPIES);
  const sample = await product.memory();
  return {
    copies,
    namespaces: options.namespaces,
    idle,
    after,
    bytesPerCopy: copies > 0 ? (after.heapUsed - idle.heapUsed) / copies : Number.NaN,
    more: { copies: moreCopies, sample, bytesPerCopy: (sample.heapUsed - after.heapUsed) / Math.max(1, moreCopies - copies) },
  };
}
