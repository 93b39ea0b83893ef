// The whole product (admission server + controller) running in this process in local mode, with
// its webhooks registered in the API server by URL, exactly as `npm run dev` runs it. The bench
// keeps a handle on the controller to count its API requests and to trigger a sweep.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION } from '../src/domain/types.js';
import { createLogger } from '../src/log.js';
import { startLocalServer, type RunningServer } from '../src/main.js';
import { createMetrics, type Metrics } from '../src/metrics.js';
import { createController, type RunningController } from '../src/reconcile/controller.js';
import { groupDistribution } from './bench-kube.js';

export interface Product {
  server: RunningServer;
  controller: RunningController;
  metrics: Metrics;
  applyParallelism: number;
  stop(): Promise<void>;
}

export const APPLY_PARALLELISM = 16;

/** Sum of a counter's values whose labels include `labels`. */
export async function counterValue(metric: Metrics['admissionRequests'] | Metrics['apiRequests'] | Metrics['reconcileTotal'], labels: Record<string, string> = {}): Promise<number> {
  const { values } = await metric.get();
  return values
    .filter((value) => Object.entries(labels).every(([key, wanted]) => (value.labels as Record<string, unknown>)[key] === wanted))
    .reduce((sum, value) => sum + value.value, 0);
}

/** Sends marker requests until the API server calls both webhooks (a new configuration takes a moment). */
async function waitForWebhooks(kc: KubeConfig, metrics: Metrics): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const marker = groupDistribution('bench-webhook-marker', 'ConfigMap', 'none');
  const deadline = performance.now() + 30_000;
  for (let i = 0; ; i++) {
    await core.createNamespace({ body: { metadata: { name: `bench-marker-${i}` } }, dryRun: 'All' });
    await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: marker, dryRun: 'All' });
    const namespaces = await counterValue(metrics.admissionRequests, { webhook: 'namespaces' });
    const distributions = await counterValue(metrics.admissionRequests, { webhook: 'distributions' });
    if (namespaces > 0 && distributions > 0) return;
    if (performance.now() > deadline) throw new Error('the API server did not call the webhooks within 30 s');
    await sleep(200);
  }
}

export async function startProduct(kc: KubeConfig): Promise<Product> {
  const metrics = createMetrics();
  let controller: RunningController | undefined;
  const server = await startLocalServer({
    kubeConfig: kc,
    metrics,
    log: createLogger({ level: process.env.RD_BENCH_LOG ?? 'warn', destination: process.stderr }),
    // No periodic sweep during the run: the steady-state section triggers the one it measures.
    // A short shutdown timeout: closing the HTTPS server otherwise waits the full default 20 s
    // for the API server's idle webhook connections.
    overrides: { sweepIntervalMs: 3_600_000, applyParallelism: APPLY_PARALLELISM, leaderElection: false, shutdownTimeoutMs: 2000 },
    createController: (deps) => (controller = createController(deps)),
  });
  if (!controller) throw new Error('startLocalServer did not build its controller through the given factory');
  const running = controller;
  try {
    await waitForWebhooks(kc, metrics);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { server, controller: running, metrics, applyParallelism: APPLY_PARALLELISM, stop: () => server.stop() };
}

/**
 * Waits until the controller has nothing queued and made no write for `quietMs` (events caused by
 * its own last writes come back through the watches and are reconciled once more).
 */
export async function waitForQuiet(controller: RunningController, quietMs = 1500, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    await controller.idle();
    const before = controller.requests.tally().writes;
    await sleep(quietMs);
    await controller.idle();
    if (controller.requests.tally().writes === before) return;
    if (performance.now() > deadline) throw new Error(`the controller kept writing for ${Math.round(timeoutMs / 1000)} s`);
  }
}
