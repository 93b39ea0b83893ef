// 4. Memory: the product's own process, sampled after a full garbage collection: once idle right
// after its start, and again once everything the earlier sections distributed has converged.
// The heap growth divided by the copies it tracks is the cost of one tracked copy.
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
  heapDeltaBytes: number;
  bytesPerCopy: number;
}

export async function runMemory(options: { product: Product; idle: MemorySample; namespaces: number }): Promise<MemoryResult> {
  const { product, idle } = options;
  const scrape = await waitForQuiet(product);
  const after = await product.memory();
  const copies = scrape.sum('resource_distributor_copies');
  const heapDeltaBytes = after.heapUsed - idle.heapUsed;
  return {
    copies,
    namespaces: options.namespaces,
    idle,
    after,
    heapDeltaBytes,
    bytesPerCopy: copies > 0 ? heapDeltaBytes / copies : Number.NaN,
  };
}
