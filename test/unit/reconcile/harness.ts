// Wires the reconciler over the in-memory cluster double, with real caches fed by its watches.
import { PassScopes } from '../../../src/reconcile/pass-scopes.js';
import { createLogger, type Logger } from '../../../src/log.js';
import { createMetrics } from '../../../src/metrics.js';
import { createCaches, type CacheChange, type Caches } from '../../../src/k8s/caches.js';
import { countRequests, type CountingClusterApi } from '../../../src/k8s/counting-cluster-api.js';
import { createEventRecorder } from '../../../src/k8s/event-recorder.js';
import { createCopyWriter, type CopyWriter } from '../../../src/reconcile/copy-writer.js';
import { createReconciler, type Reconciler } from '../../../src/reconcile/reconciler.js';
import type { AuthorGate } from '../../../src/reconcile/author-gate.js';
import { createDistributionCatalog, type DistributionCatalog } from '../../../src/reconcile/distribution-catalog.js';
import type { KindRegistry } from '../../../src/domain/kinds.js';
import { T0 } from '../builders.js';
import { FakeCluster } from './fake-cluster.js';

export const silentLog = createLogger({ level: 'silent' });

/** A logger that keeps every line at `level` or above, parsed, for tests about what gets logged. */
export function recordingLog(level = 'debug'): { log: Logger; lines: { level: number; msg: string; [field: string]: unknown }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = createLogger({ level, destination: { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) } });
  return { log, lines };
}

/** pino's numeric level of `warn`: lines at or above it are what an operator gets alerted on. */
export const WARN = 40;

export interface Harness {
  cluster: FakeCluster;
  caches: Caches;
  catalog: DistributionCatalog;
  requests: CountingClusterApi;
  writer: CopyWriter;
  reconciler: Reconciler;
  metrics: ReturnType<typeof createMetrics>;
  /** What the next pass over each distribution looks at (note a namespace as cache routing does). */
  scopes: PassScopes;
  /** Called with every cache change (as the controller's watch callbacks would be). */
  listeners: ((change: CacheChange) => void)[];
}

export async function startHarness(options: { forbidden?: string[]; parallelism?: number; kinds?: KindRegistry; sliceSize?: number; authors?: AuthorGate; log?: Logger } = {}): Promise<Harness> {
  const cluster = new FakeCluster();
  const requests = countRequests(cluster.api);
  const metrics = createMetrics();
  const clock = (): Date => T0;
  const listeners: ((change: CacheChange) => void)[] = [];
  const caches = createCaches({
    api: requests.api,
    log: silentLog,
    kinds: options.kinds,
    objectSyncs: true,
    onChange: (change) => listeners.forEach((listen) => listen(change)),
  });
  caches.start();
  await caches.whenSynced();
  // What the controller follows once distributions of both kinds exist.
  caches.copies.follow(new Set(['Secret', 'ConfigMap']));
  await caches.copies.whenSynced();
  const log = options.log ?? silentLog;
  const writer = createCopyWriter({ api: requests.api, log, copies: caches.copies });
  const catalog = createDistributionCatalog({ api: requests.api, caches, clock, log: silentLog });
  const scopes = new PassScopes();
  const reconciler = createReconciler({
    api: requests.api,
    caches,
    catalog,
    writer,
    events: createEventRecorder({ api: requests.api, clock, log: silentLog, instance: 'test' }),
    clock,
    log,
    metrics,
    applyParallelism: options.parallelism ?? 4,
    forbiddenNamespaces: options.forbidden ?? [],
    scopes,
    ...(options.sliceSize === undefined ? {} : { sliceSize: options.sliceSize }),
    ...(options.authors === undefined ? {} : { authors: options.authors }),
  });
  requests.reset();
  return { cluster, caches, catalog, requests, writer, reconciler, metrics, listeners, scopes };
}
