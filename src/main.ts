import type { Hono } from 'hono';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createAdmissionApp } from './admission/app.js';
import { startHttpsServer, type HttpsServer } from './admission/https-server.js';
import { ConfigError, controllerSettings, forbiddenNamespaces, loadConfig, type Config } from './config.js';
import { systemClock, type Clock } from './domain/clock.js';
import { STORAGE_VERSION } from './domain/conversion.js';
import { createKindRegistry, kindKeyOf, type KindRegistry } from './domain/kinds.js';
import { compileSpecValidator } from './domain/schema.js';
import { cachedAccessReviewer, createAccessReviewer, fairAccessReviewer, grantsFirstAccessReviewer, type AccessReviewer } from './k8s/access-review.js';
import type { ClusterApi } from './k8s/cluster-api.js';
import { createClusterApi } from './k8s/client-cluster-api.js';
import { discoverKinds, servedDistributionVersion, servesObjectSyncs, withTemplateFields } from './k8s/discovery.js';
import { conversionMembership, type ConversionMembership } from './k8s/conversion-membership.js';
import { describeApiError } from './k8s/errors.js';
import { createKubeClient, type KubeClient } from './k8s/kube-client.js';
import { connectionFromKubeconfigFile, inClusterConnection, type Connection } from './k8s/kube-config.js';
import { DISTRIBUTION_CRD, publishConversion, type ConversionTarget } from './k8s/crd-conversion.js';
import { loadCrdSchema } from './k8s/crd-schema.js';
import { createRbacCache, type RbacCache } from './k8s/rbac-cache.js';
import { createScrapeAccess, type ScrapeAccess } from './k8s/scrape-access.js';
import { createScrapeReviewer } from './k8s/scrape-review.js';
import { applyWebhookConfigurations, deleteWebhookConfigurations, mutatingWebhookConfigurations, patchCaBundle, WEBHOOK_PATHS, webhookConfigurations } from './k8s/webhook-config.js';
import { createLogger, type Logger } from './log.js';
import { createMetrics, type Metrics } from './metrics.js';
import { admissionOnlyController } from './reconcile/admission-only.js';
import { createController, type Controller, type ControllerDeps } from './reconcile/controller.js';
import { conversionServiceName, serviceIdentity } from './tls/certificates.js';
import { fileStore } from './tls/file-store.js';
import { createCertificateManager, type CertificateManager } from './tls/manager.js';
import { secretStore } from './tls/secret-store.js';

export interface ServerDeps {
  /** Where the API server is and who we are to it. */
  connection: Connection;
  log: Logger;
  clock: Clock;
  metrics: Metrics;
  /** The reconciler; tests may pass another implementation of the same contract. */
  createController?: (deps: ControllerDeps) => Controller;
}

export interface RunningServer {
  port: number;
  config: Config;
  controller: Controller;
  certificates: CertificateManager;
  /** Readiness fails, in-flight requests finish, then everything stops (local mode also removes its webhooks). */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
// A server that only admits registers validation alone: the other webhooks hand work to a reconciler.
const webhookNameList = (config: Config): string[] =>
  config.reconcile ? [config.webhookNames.distributions, config.webhookNames.namespaces] : [config.webhookNames.distributions];
const mutatingNameList = (config: Config): string[] => (config.webhookNames.pods === undefined || !config.reconcile ? [] : [config.webhookNames.pods]);

/**
 * Where the CRD's conversion webhook should point: our Service in a cluster; in local mode this
 * process's address, only when asked to (the CRD has one conversion address, a webhook
 * configuration per process).
 */
function conversionTarget(config: Config, port: () => number): ConversionTarget | undefined {
  if (config.mode === 'cluster') return { service: { name: conversionServiceName(config.serviceName), namespace: config.namespace, path: WEBHOOK_PATHS.conversion, port: 443 } };
  if (!config.registerConversion) return undefined;
  return { url: `${config.webhookUrl ?? `https://127.0.0.1:${port()}`}${WEBHOOK_PATHS.conversion}` };
}

/**
 * How the API server is told to trust our CA: patch the installed webhooks, or (local) create them
 * by URL; and the CRD's conversion. `mayStore`: whether the CRD may be made to store v1beta1 yet.
 * A v1alpha1 write into v1beta1 storage needs a conversion: not before this replica is in the
 * conversion Service and its caches synced (its list of distributions stored in v1alpha1 was
 * converted: conversions reach it).
 */
function trustPublisher(config: Config, client: KubeClient, port: () => number, log: Logger, mayStore: () => boolean): (trust: string) => Promise<boolean> {
  const webhooks = webhookTrustPublisher(config, client, port);
  let warned = false;
  return async (trust) => {
    const changed = await webhooks(trust);
    const target = conversionTarget(config, port);
    const published = target === undefined ? 'not-needed' : await publishConversion(client, target, trust, { store: mayStore() });
    if (published === 'elsewhere' && !warned) {
      log.warn({ crd: DISTRIBUTION_CRD, service: `${config.namespace}/${conversionServiceName(config.serviceName)}` }, "the CRD's conversion webhook names another address: left as it is (v1alpha1 requests fail unless that address converts)");
    }
    warned = published === 'elsewhere';
    return changed || published === 'changed';
  };
}

function webhookTrustPublisher(config: Config, client: KubeClient, port: () => number): (trust: string) => Promise<boolean> {
  if (config.mode === 'cluster') {
    // Mutating first, here and below: the validating webhook refuses a new spec whose author the
    // mutating one has not recorded, so it must not answer alone (as when taking over from OpenKruise).
    return async (trust) => {
      const mutating = await patchCaBundle(client, mutatingNameList(config), trust, 'mutatingwebhookconfigurations');
      const validating = await patchCaBundle(client, webhookNameList(config), trust);
      return validating.length + mutating.length > 0;
    };
  }
  let applied: string | undefined;
  return async (trust) => {
    if (trust === applied) return false;
    const base = config.webhookUrl ?? `https://127.0.0.1:${port()}`;
    const options = {
      names: config.webhookNames,
      ownNamespace: config.namespace,
      clientConfig: (path: string) => ({ url: `${base}${path}`, caBundle: Buffer.from(trust).toString('base64') }),
    };
    const names = [...mutatingNameList(config), ...webhookNameList(config)];
    const configurations = [...mutatingWebhookConfigurations(options), ...webhookConfigurations(options)];
    await applyWebhookConfigurations(client, configurations.filter((c) => names.includes(c.metadata?.name ?? '')));
    applied = trust;
    return true;
  };
}

/** The CA that signs the certificate the API server presents to webhooks, when one is configured. */
async function readWebhookClientCa(config: Config): Promise<string | undefined> {
  const path = config.webhookClientCaFile;
  if (path === undefined) return undefined;
  const pem = await readFile(path, 'utf8').catch((error: unknown) => {
    throw new ConfigError([`RD_WEBHOOK_CLIENT_CA_FILE=${path}: ${(error as Error).message}`]);
  });
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError([`RD_WEBHOOK_CLIENT_CA_FILE=${path}: holds no PEM certificate`]);
  return pem;
}

/**
 * RD_ALLOWED_KINDS as the cluster serves them. A cluster-scoped kind is a configuration error; a
 * kind not served (a CRD not installed yet) is left out until the next start, and said so.
 */
async function allowedKinds(config: Config, client: KubeClient, log: Logger): Promise<KindRegistry> {
  const { kinds, invalid, unknown } = await discoverKinds(client, config.allowedKinds);
  if (invalid.length > 0) throw new ConfigError(invalid.map((problem) => `RD_ALLOWED_KINDS: ${problem}`));
  if (unknown.length > 0) log.warn({ kinds: unknown }, 'allowed kinds not served by the API server are left out');
  const described = await withTemplateFields(client, kinds);
  for (const { path, reason } of described.unpublished) log.warn({ path, reason }, "template fields of kinds in this group version are not checked: the API server's OpenAPI document could not be read");
  const registry = createKindRegistry(described.kinds);
  log.info({ kinds: registry.describe() }, 'distributable kinds');
  return registry;
}

/** What changes while a server runs: readiness reads both, and shutdown drains the listener. */
interface Serving {
  https?: HttpsServer;
  shuttingDown: boolean;
}

/** The long-lived parts of a server, as its admission app and its shutdown reach them. */
interface ServerParts {
  config: Config;
  log: Logger;
  client: KubeClient;
  controller: Controller;
  certificates: CertificateManager;
  rbac: RbacCache | undefined;
  /** In a pod: the label that puts it in the conversion Service while it listens. */
  membership: ConversionMembership | undefined;
  /** Admission's and the controller's: one cache of answers, one bound on reviews in flight. */
  accessReviewer: AccessReviewer;
  serving: Serving;
}

/** What admission reads of the cluster beyond the running parts. */
interface AdmissionInputs {
  metrics: Metrics;
  clusterApi: ClusterApi;
  kinds: KindRegistry;
  webhookClientCa: string | undefined;
}

/** /metrics for users who may get it; what finding out costs the API server is bounded (RD_METRICS_REVIEW_*). */
function scrapeAccess({ config, client, log }: ServerParts, metrics: Metrics): ScrapeAccess {
  const reviewer = createScrapeReviewer(client, { path: '/metrics', metrics });
  return createScrapeAccess(reviewer, { ttlMs: config.sarCacheTtlMs, limits: config.metricsReviews, log: log.child({ component: 'metrics' }), metrics });
}

function admissionApp(parts: ServerParts, { metrics, clusterApi, kinds, webhookClientCa }: AdmissionInputs): Hono {
  const { config, log, controller, certificates, accessReviewer, serving } = parts;
  return createAdmissionApp({
    log: log.child({ component: 'admission' }),
    metrics,
    schema: compileSpecValidator(loadCrdSchema(config.crdPath)),
    accessReviewer,
    namespaceExists: (name) => controller.namespaceExists(name),
    previewPlan: (rd) => controller.previewPlan(rd),
    kinds,
    findSource: async (ref) => {
      const found = await clusterApi.getCopy({ kind: kindKeyOf(ref.apiVersion, ref.kind), namespace: ref.namespace, name: ref.name });
      // Only what the warnings need: the source's data goes no further than this read.
      return found === undefined ? null : { apiVersion: found.apiVersion, kind: found.kind, type: found.type };
    },
    onNamespaceAdmitted: (namespace) => controller.namespaceAdmitted(namespace),
    onPodAdmitted: (namespace, refs, options) => controller.podAdmitted(namespace, refs, options),
    podInjection: (namespace, pod) => controller.podInjection(namespace, pod),
    forbiddenNamespaces: forbiddenNamespaces(config),
    // The mutating configuration records authors; without it none are, and none are required.
    recordsAuthors: mutatingNameList(config).length > 0,
    bodyLimitBytes: config.bodyLimitBytes,
    conversionBodyLimitBytes: config.conversionBodyLimitBytes,
    ...(webhookClientCa === undefined ? {} : { webhookCallers: { names: config.webhookClientNames } }),
    ...(config.metricsAuth ? { scrapeAccess: scrapeAccess(parts, metrics) } : {}),
    readiness: () => ({
      certificates: serving.https !== undefined && certificates.current() !== undefined,
      caches: controller.synced(),
      serving: !serving.shuttingDown,
    }),
  });
}

async function shutDown({ config, log, client, controller, certificates, rbac, membership, serving }: ServerParts): Promise<void> {
  serving.shuttingDown = true;
  log.info({ delayMs: config.shutdownDelayMs }, 'shutting down');
  serving.https?.drain();
  // Before the delay: the conversion Service lists a pod by this label whether it is ready or not.
  await membership?.leave();
  certificates.stop();
  rbac?.stop();
  // A shared address stays registered: the other replicas behind it go on serving.
  if (config.mode === 'local' && config.webhookUrl === undefined) {
    await deleteWebhookConfigurations(client, webhookNameList(config))
      .then(() => deleteWebhookConfigurations(client, mutatingNameList(config), 'mutatingwebhookconfigurations'))
      .catch((error: unknown) => log.warn({ reason: describeApiError(error).message }, 'webhook configurations not removed'));
  }
  if (serving.https) {
    // Readiness already fails and the label is off: give the endpoints time to drop this pod before closing.
    await sleep(config.shutdownDelayMs);
    await serving.https.close(config.shutdownTimeoutMs);
  }
  // Last: the namespace webhook hands namespaces to the controller until the listener is closed.
  await controller.stop();
  client.close();
  log.info({}, 'stopped');
}

/** In a pod of a cluster install: the label that lists it in the conversion Service while it listens. */
function podMembership(config: Config, client: KubeClient, log: Logger): ConversionMembership | undefined {
  if (config.mode !== 'cluster' || config.pod === undefined) return undefined;
  return conversionMembership({ client, namespace: config.namespace, pod: config.pod, log: log.child({ component: 'conversion' }) });
}

/** Composes and starts the whole product; resolves once it serves and its caches are synced. */
export async function startServer(config: Config, deps: ServerDeps): Promise<RunningServer> {
  const { log, clock, metrics } = deps;
  const client = createKubeClient(deps.connection, {
    maxConnections: config.apiConnections,
    timeoutMs: config.apiTimeoutMs,
    onConnection: () => metrics.apiConnections.inc(),
  });
  const webhookClientCa = await readWebhookClientCa(config);
  const kinds = await allowedKinds(config, client, log);
  const distributionVersion = await servedDistributionVersion(client);
  if (distributionVersion !== STORAGE_VERSION) log.warn({ version: distributionVersion }, `the ResourceDistribution CRD does not serve ${STORAGE_VERSION}: distributions are read and written in v1alpha1`);
  const clusterApi = createClusterApi(client, { kinds, distributionVersion });
  const objectSyncs = await servesObjectSyncs(client);
  if (!objectSyncs) log.warn({}, 'ObjectSyncs are not served (CRD objectsyncs.sync.rustrial.org not installed): not watched');
  const rbac = config.rbacShortcut ? createRbacCache(client, { log: log.child({ component: 'rbac' }) }) : undefined;
  const reviews = cachedAccessReviewer(fairAccessReviewer(createAccessReviewer(client, metrics), config.accessReviewConcurrency), { ttlMs: config.sarCacheTtlMs });
  const accessReviewer = rbac === undefined ? reviews : grantsFirstAccessReviewer(reviews, rbac);
  const controller = (config.reconcile ? (deps.createController ?? createController) : admissionOnlyController)({
    // A distribution's recorded author is asked about again when its source appears or changes.
    accessReviewer,
    clusterApi,
    connections: client,
    kinds,
    objectSyncs,
    log: log.child({ component: 'controller' }),
    clock,
    metrics,
    settings: controllerSettings(config),
  });
  const serving: Serving = { shuttingDown: false };
  const membership = podMembership(config, client, log);
  const mayStore = (): boolean => controller.synced() && (membership?.joined ?? true);

  const certificates = createCertificateManager({
    store: config.mode === 'cluster' ? secretStore(client, config.namespace, config.tlsSecret) : fileStore(config.certDir),
    identity: serviceIdentity(config.serviceName, config.namespace, config.mode === 'local'),
    policy: config.tls,
    checkIntervalMs: config.tls.checkIntervalMs,
    clock,
    log: log.child({ component: 'tls' }),
    metrics,
    serve: (certificate) => serving.https?.setCertificate(certificate),
    publishTrust: trustPublisher(config, client, () => serving.https?.port ?? config.port, log.child({ component: 'tls' }), mayStore),
  });

  const parts: ServerParts = { config, log, client, controller, certificates, rbac, membership, accessReviewer, serving };
  const app = admissionApp(parts, { metrics, clusterApi, kinds, webhookClientCa });

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= shutDown(parts));

  try {
    const initial = await certificates.ensure();
    const https = await startHttpsServer({
      fetch: app.fetch,
      port: config.port,
      host: config.host,
      certificate: initial.serving,
      ...(webhookClientCa === undefined ? {} : { clientCa: webhookClientCa }),
      limits: config.connectionLimits,
      onDropped: () => metrics.connectionsDropped.inc(),
      log,
    });
    serving.https = https;
    const publish = (): Promise<unknown> =>
      certificates.refresh().catch((error: unknown) => {
        // Local mode registers the webhooks here: without them there is nothing to run.
        if (config.mode === 'local') throw error;
        // In a cluster the webhook configurations may not be installed yet: the periodic refresh retries.
        log.error({ reason: describeApiError(error).message }, 'CA bundle not published yet');
      });
    // Published again once the CRD may store v1beta1: when the last of joining and syncing is done.
    const publishIfStorable = async (): Promise<void> => {
      if (mayStore()) await publish();
    };
    membership?.join(() => void publishIfStorable());
    await publish();
    certificates.start();
    rbac?.start();
    await controller.start();
    await publishIfStorable();
    return { port: https.port, config, controller, certificates, stop };
  } catch (error) {
    await stop().catch((stopError: unknown) => log.error({ err: stopError }, 'cleanup after a failed start failed'));
    throw error;
  }
}

export interface LocalServerOptions {
  connection: Connection;
  log?: Logger;
  clock?: Clock;
  metrics?: Metrics;
  /** Environment-style settings (RD_*) read as in `main`; local mode is forced. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the certificates are kept; default: a new temporary directory. */
  certDir?: string;
  /** Typed settings applied last (e.g. short certificate lifetimes in tests). */
  overrides?: Partial<Config>;
  createController?: (deps: ControllerDeps) => Controller;
}

/**
 * The whole product in local mode against any cluster (dev, e2e, benchmarks): a free port on
 * 127.0.0.1 unless told otherwise, webhooks registered by URL and removed again by `stop()`.
 */
export async function startLocalServer(options: LocalServerOptions): Promise<RunningServer> {
  const fromEnv = loadConfig({ RD_PORT: '0', RD_LOG_LEVEL: 'warn', ...options.env, RD_MODE: 'local' });
  const certDir = options.certDir ?? (await mkdtemp(join(tmpdir(), 'resource-distributor-certs-')));
  const config: Config = { ...fromEnv, ...options.overrides, certDir, mode: 'local' };
  return startServer(config, {
    connection: options.connection,
    log: options.log ?? createLogger({ level: config.logLevel }),
    clock: options.clock ?? systemClock,
    metrics: options.metrics ?? createMetrics(),
    ...(options.createController ? { createController: options.createController } : {}),
  });
}

/** An explicit kubeconfig wins; otherwise the pod's ServiceAccount. */
function loadConnection(config: Config): Connection {
  if (config.kubeconfig) return connectionFromKubeconfigFile(config.kubeconfig);
  if (config.inCluster) return inClusterConnection(config.inCluster);
  throw new Error('no API server: set KUBECONFIG, or run in a pod (KUBERNETES_SERVICE_HOST)');
}

export async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger({ level: config.logLevel });
  let server: RunningServer;
  try {
    server = await startServer(config, {
      connection: loadConnection(config),
      log,
      clock: systemClock,
      metrics: createMetrics({ defaultMetrics: true }),
    });
  } catch (error) {
    log.fatal({ err: error }, 'start failed');
    process.exit(1);
  }
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++signals > 1) process.exit(1);
    log.info({ signal }, 'signal received');
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    // Only an invalid configuration gets here: there is no logger yet.
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
