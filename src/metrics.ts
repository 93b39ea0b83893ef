import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Every metric the process exports, on one registry that `GET /metrics` serves. */
export interface Metrics {
  registry: Registry;
  admissionRequests: Counter<'webhook' | 'operation' | 'decision'>;
  admissionDuration: Histogram<'webhook'>;
  reconcileDuration: Histogram<'result'>;
  reconcileTotal: Counter<'result'>;
  queueDepth: Gauge;
  copies: Gauge<'state'>;
  apiErrors: Counter<'verb' | 'code'>;
  apiRequests: Counter<'verb' | 'resource'>;
  apiConnections: Counter;
  generationDuration: Histogram;
  generationSkipped: Counter;
  isLeader: Gauge;
  certificateExpiry: Gauge;
  sourcesWatched: Gauge;
  namesWatched: Gauge;
  kindsWatched: Gauge<'kind'>;
  podMaterialized: Counter<'result'>;
  podMaterializeDuration: Histogram;
  podInjections: Counter;
  webhookCallersRefused: Counter;
  connectionsDropped: Counter;
  scrapeReviews: Counter<'result'>;
  scrapeReviewsRefused: Counter<'reason'>;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop); off in unit tests to keep them quiet. */
  defaultMetrics?: boolean;
}

type Registers = Registry[];

/** The work queue and what each pass finds. */
function reconcileMetrics(registers: Registers): Pick<Metrics, 'reconcileDuration' | 'reconcileTotal' | 'queueDepth' | 'copies'> {
  return {
    reconcileDuration: new Histogram({
      name: 'resource_distributor_reconcile_duration_seconds',
      help: 'Time of one reconcile of one distribution.',
      labelNames: ['result'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    reconcileTotal: new Counter({
      name: 'resource_distributor_reconcile_total',
      help: 'Reconciles by result (success, error, requeue; slice: one slice of a full pass made in slices).',
      labelNames: ['result'],
      registers,
    }),
    queueDepth: new Gauge({
      name: 'resource_distributor_queue_depth',
      help: 'Distributions waiting to be reconciled.',
      registers,
    }),
    copies: new Gauge({
      name: 'resource_distributor_copies',
      help: 'Target namespaces by state of their copy (in-sync, conflict, namespace-missing, failed).',
      labelNames: ['state'],
      registers,
    }),
  };
}

/** What the controller asks of the API server, and the connections it takes. */
function apiMetrics(registers: Registers): Pick<Metrics, 'apiErrors' | 'apiRequests' | 'apiConnections'> {
  return {
    apiErrors: new Counter({
      name: 'resource_distributor_api_errors_total',
      help: 'Failed Kubernetes API calls by verb and HTTP status (0: no answer).',
      labelNames: ['verb', 'code'],
      registers,
    }),
    apiRequests: new Counter({
      name: 'resource_distributor_api_requests_total',
      help: 'Kubernetes API calls the controller made, by verb and resource.',
      labelNames: ['verb', 'resource'],
      registers,
    }),
    apiConnections: new Counter({
      name: 'resource_distributor_api_connections_total',
      help: 'TLS connections opened to the Kubernetes API server (requests reuse them; a steady rise means they do not).',
      registers,
    }),
  };
}

/** What admitting a pod costs it: copies written first, image-pull Secrets added. */
function podAdmissionMetrics(registers: Registers): Pick<Metrics, 'podMaterialized' | 'podMaterializeDuration' | 'podInjections'> {
  return {
    podMaterialized: new Counter({
      name: 'resource_distributor_pod_materialized_total',
      help: 'Copies a pod referenced that were missing or stale when it was admitted, by result: written before the answer; unchanged (nothing to write after all: another writer was first, or the object there is not ours); lost (races), failed, denied (the recorded author may not write the first copy there).',
      labelNames: ['result'],
      registers,
    }),
    podMaterializeDuration: new Histogram({
      name: 'resource_distributor_pod_materialize_duration_seconds',
      help: 'How long a pod admission waited for the copies it references to be written (only when some were missing).',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    podInjections: new Counter({
      name: 'resource_distributor_pod_injections_total',
      help: 'Image-pull Secret names added to pods being created (pod mutation).',
      registers,
    }),
  };
}

/** Who asked for /metrics, and what finding out cost (RD_METRICS_AUTH). */
function scrapeMetrics(registers: Registers): Pick<Metrics, 'scrapeReviews' | 'scrapeReviewsRefused'> {
  return {
    scrapeReviews: new Counter({
      name: 'resource_distributor_scrape_reviews_total',
      help: 'TokenReviews made for scrapes of /metrics (answers remembered per token are not counted), by result: allowed, forbidden, unauthenticated, failed.',
      labelNames: ['result'],
      registers,
    }),
    scrapeReviewsRefused: new Counter({
      name: 'resource_distributor_scrape_reviews_refused_total',
      help: 'Scrapes of /metrics answered 429 without asking the API server, by reason: rate (over RD_METRICS_REVIEW_RATE), concurrency (RD_METRICS_REVIEW_CONCURRENCY reviews already in flight).',
      labelNames: ['reason'],
      registers,
    }),
  };
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'resource_distributor_' });
  const registers = [registry];
  return {
    registry,
    admissionRequests: new Counter({
      name: 'resource_distributor_admission_requests_total',
      help: 'Admission requests by webhook, operation and decision (allowed, denied, errored).',
      labelNames: ['webhook', 'operation', 'decision'],
      registers,
    }),
    admissionDuration: new Histogram({
      name: 'resource_distributor_admission_duration_seconds',
      help: 'Time to answer an admission request.',
      labelNames: ['webhook'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    ...reconcileMetrics(registers),
    ...apiMetrics(registers),
    generationDuration: new Histogram({
      name: 'resource_distributor_namespace_generation_duration_seconds',
      help: 'Time from a namespace being admitted to all its copies written.',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    generationSkipped: new Counter({
      name: 'resource_distributor_namespace_generation_skipped_total',
      help: 'Admitted namespaces not generated at once because too many generations were pending (the reconciler writes their copies).',
      registers,
    }),
    isLeader: new Gauge({
      name: 'resource_distributor_leader',
      help: '1 while this replica holds the leader Lease.',
      registers,
    }),
    certificateExpiry: new Gauge({
      name: 'resource_distributor_certificate_expiry_timestamp_seconds',
      help: 'When the serving certificate expires (Unix time).',
      registers,
    }),
    sourcesWatched: new Gauge({
      name: 'resource_distributor_sources_watched',
      help: 'Source objects (spec.source) watched, each on a connection of its own.',
      registers,
    }),
    ...podAdmissionMetrics(registers),
    ...scrapeMetrics(registers),
    webhookCallersRefused: new Counter({
      name: 'resource_distributor_webhook_callers_refused_total',
      help: 'Reviews refused (401) because the caller presented no client certificate the webhook client CA signed, or one of another name.',
      registers,
    }),
    connectionsDropped: new Counter({
      name: 'resource_distributor_connections_dropped_total',
      help: 'Connections to the admission server closed as soon as accepted because RD_MAX_CONNECTIONS were open.',
      registers,
    }),
    namesWatched: new Gauge({
      name: 'resource_distributor_names_watched',
      help: 'Distributed (kind, name) pairs watched in every namespace, metadata only, each on a connection of its own.',
      registers,
    }),
    kindsWatched: new Gauge({
      name: 'resource_distributor_kinds_watched',
      help: 'Kinds whose copies are watched (1), by kind; 0 once no distribution copies it any more.',
      labelNames: ['kind'],
      registers,
    }),
  };
}
