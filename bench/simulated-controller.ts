// The product's controller over a simulated cluster, leading at once and swept only when told:
// what the in-process benches (the simulation, the large-author profile) run.
import { systemClock } from '../src/domain/clock.js';
import type { ClusterApi } from '../src/k8s/cluster-api.js';
import { createLogger } from '../src/log.js';
import { createMetrics } from '../src/metrics.js';
import { createController, type RunningController } from '../src/reconcile/controller.js';

export function simulatedController(clusterApi: ClusterApi, identity: string): RunningController {
  return createController({
    clusterApi,
    log: createLogger({ level: 'warn' }),
    clock: systemClock,
    metrics: createMetrics(),
    // The generated watches stay silent unless told: no stall to detect.
    watchTimeoutSeconds: 24 * 3600,
    settings: {
      // Swept by hand, not by the timer.
      sweepIntervalMs: 24 * 3600_000,
      concurrency: 4,
      applyParallelism: 16,
      forbiddenNamespaces: [],
      leaderElection: { enabled: false, leaseName: '', leaseNamespace: '', identity, leaseDurationMs: 0, renewDeadlineMs: 0, retryPeriodMs: 0 },
    },
  });
}
