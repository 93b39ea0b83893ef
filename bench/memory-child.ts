// The memory fixture: only the controller, in a process of its own (node --expose-gc), so that
// the bench's own objects do not count. Environment: KUBECONFIG. Prints JSON lines:
//   {"phase":"before", memory}     modules loaded, nothing cached (after gc)
//   {"phase":"converged", memory, copies, namespaces, distributions, convergeMs, tally}
//                                  caches synced, every copy written, no write for a while (after gc)
// then runs until SIGTERM (or until its stdin closes).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { systemClock } from '../src/domain/clock.js';
import { createLogger } from '../src/log.js';
import { createMetrics } from '../src/metrics.js';
import { createController, type RunningController } from '../src/reconcile/controller.js';

export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

function measure(): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  // Twice: the first pass may only queue finalizers whose objects the second one frees.
  gc();
  gc();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, heapTotal, external, arrayBuffers };
}

function send(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

/** Converged: nothing queued and no write for two seconds in a row. */
async function converge(controller: RunningController): Promise<void> {
  for (;;) {
    await controller.idle();
    const writes = controller.requests.tally().writes;
    await sleep(2000);
    await controller.idle();
    if (controller.requests.tally().writes === writes) return;
  }
}

async function main(): Promise<void> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(process.env.KUBECONFIG ?? '');
  const log = createLogger({ level: process.env.RD_BENCH_LOG ?? 'warn', destination: process.stderr });
  const metrics = createMetrics();
  send({ phase: 'before', memory: measure() });

  const started = performance.now();
  const controller = createController({
    kubeConfig,
    log,
    clock: systemClock,
    metrics,
    settings: {
      sweepIntervalMs: 3_600_000,
      concurrency: 4,
      applyParallelism: 16,
      forbiddenNamespaces: [],
      leaderElection: { enabled: false, leaseName: 'unused', leaseNamespace: 'default', identity: 'bench-memory', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    },
  });
  const stop = async (): Promise<void> => {
    await controller.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();

  await controller.start();
  await converge(controller);
  const convergeMs = performance.now() - started;
  send({
    phase: 'converged',
    memory: measure(),
    copies: controller.caches.copies.size,
    namespaces: controller.caches.namespaces.size,
    distributions: controller.caches.distributions.size,
    convergeMs,
    tally: controller.requests.tally(),
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
