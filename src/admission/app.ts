import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Hono } from 'hono';
import type { KindRegistry } from '../domain/kinds.js';
import type { SchemaValidator } from '../domain/schema.js';
import type { Steps } from '../domain/steps.js';
import type { PlanTally } from '../domain/plan-preview.js';
import type { ResourceDistribution, SourceRef } from '../domain/types.js';
import type { SourceFound } from '../domain/source.js';
import type { AccessReviewer } from '../k8s/access-review.js';
import type { ScrapeAccess } from '../k8s/scrape-access.js';
import { WEBHOOK_PATHS, WEBHOOK_TIMEOUT_SECONDS } from '../k8s/webhook-config.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { authorWebhook } from './author-webhook.js';
import { conversionRoute } from './conversion-webhook.js';
import { ADMISSION_SLICE_MS, distributionWebhook } from './distribution-webhook.js';
import { namespaceWebhook, type AdmittedNamespace } from './namespace-webhook.js';
import { objectSyncWebhook } from './object-sync-webhook.js';
import { podMutationWebhook, type PodMutationWebhookDeps } from './pod-mutation-webhook.js';
import { podWebhook, type PodWebhookDeps } from './pod-webhook.js';
import { checkWebhookCaller, type WebhookCallerPolicy } from './webhook-caller.js';
import { versionedWebhook } from './versioned-webhook.js';
import { webhookRoute, type WebhookRouteOptions } from './webhook-route.js';

export interface AdmissionAppDeps {
  log: Logger;
  metrics: Metrics;
  schema: SchemaValidator;
  accessReviewer: AccessReviewer;
  namespaceExists: (name: string) => boolean | undefined;
  /** The kinds distributions may copy (default Secret and ConfigMap). */
  kinds?: KindRegistry;
  /** What a distribution being admitted would do, from the controller's caches (warnings). */
  previewPlan?: (rd: ResourceDistribution) => Steps<PlanTally | undefined>;
  /** A live read of a distribution's source, without its data (a warning when it does not exist yet or is never copied). */
  findSource?: (ref: SourceRef) => Promise<SourceFound | undefined>;
  onNamespaceAdmitted: (namespace: AdmittedNamespace) => void;
  /** A pod is being admitted: the copies it references that are missing are written (never denies). */
  onPodAdmitted?: PodWebhookDeps['materialize'];
  /** A pod is being created: the image-pull Secrets to add (mutating; never denies). */
  podInjection?: PodMutationWebhookDeps['inject'];
  forbiddenNamespaces: readonly string[];
  /** Named readiness checks (certificates, caches, shutdown); ready when all are true. */
  readiness: () => Record<string, boolean>;
  bodyLimitBytes: number;
  /** The ConversionReview body limit (default: the admission one). */
  conversionBodyLimitBytes?: number;
  /** Who may send reviews (a client certificate); undefined: anyone who reaches the port. */
  webhookCallers?: WebhookCallerPolicy;
  /** Who may read /metrics; undefined: anyone who reaches the port. */
  scrapeAccess?: ScrapeAccess;
  /** The mutating webhook records the author of each distribution: the validating one then requires it. */
  recordsAuthors?: boolean;
  /** How long one distribution review may hold the event loop before it gives the loop a turn (default ADMISSION_SLICE_MS). */
  sliceMs?: number;
  /** Per-webhook deadlines; default: one second below the timeoutSeconds of each webhook configuration. */
  deadlinesMs?: { distributions: number; namespaces: number; pods?: number };
}

const DEFAULT_DEADLINES_MS = {
  distributions: WEBHOOK_TIMEOUT_SECONDS.distributions * 1000 - 1000,
  namespaces: WEBHOOK_TIMEOUT_SECONDS.namespaces * 1000 - 1000,
  pods: WEBHOOK_TIMEOUT_SECONDS.pods * 1000 - 1000,
  // Its timeout is the shortest (a mutation holds every pod create): half a second is margin enough.
  podMutation: WEBHOOK_TIMEOUT_SECONDS.podMutation * 1000 - 500,
};

/**
 * Routes:
 * - POST /validate/resourcedistributions  ResourceDistribution CREATE/UPDATE (DELETE always allowed)
 * - POST /mutate/resourcedistributions    ResourceDistribution CREATE/UPDATE (mutating): records the spec's author
 * - POST /validate/objectsyncs             ObjectSync CREATE/UPDATE (DELETE always allowed)
 * - POST /generate/namespaces             Namespace CREATE/UPDATE, never denies, starts generation
 * - POST /convert                        ConversionReview of ResourceDistributions (v1alpha1, v1beta1)
 * - POST /mutate/pods                     Pod CREATE (mutating), never denies, adds distributed image-pull Secrets
 * - POST /generate/pods                   Pod CREATE, never denies, writes the missing copies it references first
 * - GET  /healthz                         200 while the process serves requests (liveness)
 * - GET  /readyz                          200 when certificates are loaded and caches synced, else 503
 * - GET  /metrics                         Prometheus text format (RD_METRICS_AUTH: 401, 403, 429 with Retry-After, 503)
 */
/** What /metrics says to a scrape it does not serve. */
const SCRAPE_REFUSALS = {
  401: 'unauthorized: a bearer token the API server accepts is required',
  403: 'forbidden: get on the non-resource URL /metrics is required',
  429: 'too many token reviews for /metrics: retry later',
  503: 'the API server could not be asked who may read metrics',
} as const;

export function createAdmissionApp(deps: AdmissionAppDeps): Hono {
  const { log, metrics } = deps;
  const deadlines = deps.deadlinesMs ?? DEFAULT_DEADLINES_MS;
  const app = new Hono();

  const callers = deps.webhookCallers;
  if (callers !== undefined) {
    // Every POST route is a webhook; the GET routes (probes, metrics) have their own rules. The
    // conversion route is the exception: kube-apiserver presents no client certificate to CRD
    // conversion webhooks (the AdmissionConfiguration's kubeconfig serves admission only), so
    // requiring one would fail every v1alpha1 request. Conversion reads nothing of the cluster and
    // writes nothing: a caller learns only the other version of what it sent.
    app.post('*', async (c, next) => {
      if (c.req.path === WEBHOOK_PATHS.conversion) return next();
      const refusal = checkWebhookCaller((c.env as { incoming?: IncomingMessage } | undefined)?.incoming, callers);
      if (refusal === undefined) return next();
      metrics.webhookCallersRefused.inc();
      return c.json({ message: `unauthorized: ${refusal}` }, 401);
    });
  }

  /** Every webhook route shares the logger, the metrics and the body limit. */
  const route = (path: string, options: Omit<WebhookRouteOptions, 'log' | 'metrics' | 'bodyLimitBytes'>): void => {
    app.post(path, ...webhookRoute({ ...options, log, metrics, bodyLimitBytes: deps.bodyLimitBytes }));
  };
  route(WEBHOOK_PATHS.distributions, { name: 'distributions', webhook: versionedWebhook(distributionWebhook(deps)), deadlineMs: deadlines.distributions });
  route(WEBHOOK_PATHS.distributionAuthors, { name: 'distribution-authors', webhook: authorWebhook({ sliceMs: deps.sliceMs ?? ADMISSION_SLICE_MS, now: () => performance.now() }), deadlineMs: deadlines.distributions });
  app.post(WEBHOOK_PATHS.conversion, conversionRoute({ log, metrics, bodyLimitBytes: deps.conversionBodyLimitBytes ?? deps.bodyLimitBytes }));
  route(WEBHOOK_PATHS.objectSyncs, { name: 'objectsyncs', webhook: objectSyncWebhook(deps), deadlineMs: deadlines.distributions });
  // Namespace creation never depends on us, not even on a bug of ours.
  route(WEBHOOK_PATHS.namespaces, { name: 'namespaces', webhook: namespaceWebhook({ onNamespaceAdmitted: deps.onNamespaceAdmitted, log }), deadlineMs: deadlines.namespaces, failOpen: true });

  // A pod never waits on us beyond the deadline, nor fails because of us; every pod of the cluster
  // passes through these routes, so a review is logged at debug only.
  const onPodAdmitted = deps.onPodAdmitted;
  if (onPodAdmitted !== undefined) {
    const deadlineMs = deadlines.pods ?? DEFAULT_DEADLINES_MS.pods;
    route(WEBHOOK_PATHS.pods, { name: 'pods', webhook: podWebhook({ materialize: onPodAdmitted, log }), deadlineMs, failOpen: true, quiet: true });
  }
  const podInjection = deps.podInjection;
  if (podInjection !== undefined) {
    const webhook = podMutationWebhook({ inject: podInjection, log, onInjected: (names) => metrics.podInjections.inc(names.length) });
    route(WEBHOOK_PATHS.podMutation, { name: 'pod-mutation', webhook, deadlineMs: DEFAULT_DEADLINES_MS.podMutation, failOpen: true, quiet: true });
  }

  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) => {
    const checks = deps.readiness();
    const ready = Object.values(checks).every(Boolean);
    return c.json({ ready, checks }, ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const verdict = (await deps.scrapeAccess?.check(c.req.header('authorization'))) ?? { status: 200 };
    if (verdict.status !== 200) {
      const headers: Record<string, string> = 'retryAfterSeconds' in verdict ? { 'retry-after': String(verdict.retryAfterSeconds) } : {};
      return c.json({ message: SCRAPE_REFUSALS[verdict.status] }, verdict.status, headers);
    }
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { 'content-type': metrics.registry.contentType });
  });

  app.notFound((c) => c.json({ message: 'not found' }, 404));
  app.onError((error, c) => {
    log.error({ err: error, path: c.req.path }, 'request failed');
    return c.json({ message: 'internal error' }, 500);
  });
  return app;
}
