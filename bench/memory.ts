// 5. Memory: a controller alone in its own process syncs K fleet namespaces x 10 distributions
// (plus whatever the earlier sections left: the propagation namespaces and their copies), writes
// the copies that are missing, and reports its memory before and after (gc first). The heap delta
// divided by the copies it tracks is the cost of one tracked copy (namespaces included).
import type { RequestTally } from '../src/k8s/counting-cluster-api.js';
import { benchFile, startChild } from './child.js';
import type { Fleet } from './fleet.js';
import type { MemorySample } from './memory-child.js';
import type { BenchSize } from './sizes.js';

export interface MemoryResult {
  fleetNamespaces: number;
  fleetDistributions: number;
  /** What the controller tracked once converged. */
  copies: number;
  namespaces: number;
  distributions: number;
  before: MemorySample;
  after: MemorySample;
  heapDeltaBytes: number;
  rssDeltaBytes: number;
  bytesPerCopy: number;
  /** Start -> caches synced and every missing copy written (a cold start over the whole fleet). */
  convergeMs: number;
  writes: number;
  /** The fixture's API requests from start to converged, by `verb resource`. */
  requests: Record<string, number>;
  /** Time the bench took to create the namespaces added for this section. */
  growMs: number;
  grownBy: number;
}

interface Converged {
  memory: MemorySample;
  copies: number;
  namespaces: number;
  distributions: number;
  convergeMs: number;
  tally: RequestTally;
}

/** Runs with the product stopped: a second controller would fight the memory fixture over the same copies. */
export async function runMemory(options: { fleet: Fleet; size: BenchSize; kubeconfigPath: string }): Promise<MemoryResult> {
  const { fleet, size } = options;
  const grown = await fleet.grow(size.memory.namespaces);
  await fleet.addDistributions(size.steadyState.distributions);
  const child = startChild(benchFile('memory-child.ts'), [], ['--expose-gc'], { KUBECONFIG: options.kubeconfigPath });
  try {
    const before = (await child.next<{ memory: MemorySample }>((m) => m.phase === 'before', 60_000)).memory;
    const timeoutMs = 120_000 + size.memory.namespaces * size.steadyState.distributions * 20;
    const converged = await child.next<Converged>((m) => m.phase === 'converged', timeoutMs);
    const heapDeltaBytes = converged.memory.heapUsed - before.heapUsed;
    return {
      fleetNamespaces: fleet.namespaces.length,
      fleetDistributions: fleet.distributionNames.length,
      copies: converged.copies,
      namespaces: converged.namespaces,
      distributions: converged.distributions,
      before,
      after: converged.memory,
      heapDeltaBytes,
      rssDeltaBytes: converged.memory.rss - before.rss,
      bytesPerCopy: converged.copies > 0 ? heapDeltaBytes / converged.copies : Number.NaN,
      convergeMs: converged.convergeMs,
      writes: converged.tally.writes,
      requests: converged.tally.byRequest,
      growMs: grown.ms,
      grownBy: grown.created,
    };
  } finally {
    await child.stop();
  }
}
