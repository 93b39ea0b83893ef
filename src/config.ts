import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import type { ConnectionLimits } from './admission/https-server.js';
import type { ControllerSettings } from './reconcile/controller.js';
import { parseByteSize, parseDuration } from './config-values.js';
import { parseKindNames, type KindName } from './domain/kinds.js';
import type { ScrapeLimits } from './k8s/scrape-access.js';

/**
 * Every setting of the process. This module is the only reader of the environment: everything
 * else receives a `Config` (or a part of it) from the composition root.
 */
export type Mode = 'cluster' | 'local';

export interface WebhookNames {
  /** ValidatingWebhookConfiguration for ResourceDistributions (and ObjectSyncs). */
  distributions: string;
  /** ValidatingWebhookConfiguration for Namespaces (and Pods: copies before pods). */
  namespaces: string;
  /** MutatingWebhookConfiguration for Pods (image-pull Secret injection); unset: not registered. */
  pods?: string;
}

export interface TlsSettings {
  caValidityMs: number;
  caRenewBeforeMs: number;
  certValidityMs: number;
  certRenewBeforeMs: number;
  checkIntervalMs: number;
}

export interface Config {
  mode: Mode;
  port: number;
  host: string;
  namespace: string;
  serviceName: string;
  tlsSecret: string;
  certDir: string;
  webhookNames: WebhookNames;
  /**
   * Local mode: where the API server calls the webhooks (scheme, host, port). Unset: this process's
   * own listener. Set when several replicas serve one address; they then leave it registered at stop.
   */
  webhookUrl: string | undefined;
  logLevel: string;
  sweepIntervalMs: number;
  concurrency: number;
  applyParallelism: number;
  forbiddenNamespaces: string[];
  /** RD_ALLOWED_KINDS: what distributions may copy, resolved by discovery at start. */
  allowedKinds: KindName[];
  /** RD_NAMESPACE_GENERATION: write an admitted namespace's copies at once (off: only the reconciler and the pod webhook do). */
  namespaceGeneration: boolean;
  /** RD_POD_WAIT: how long a pod's admission waits for the copies it references. */
  podWaitMs: number;
  /**
   * RD_RECONCILE: off, the server only validates distributions (and asks about their authors'
   * access): on a fleet's control plane, whose member clusters each run the whole product.
   */
  reconcile: boolean;
  leaderElection: boolean;
  leaseName: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  podName: string;
  /** POD_NAME as set (the chart sets it): the pod this replica runs in, which it labels while it answers conversions. */
  pod: string | undefined;
  bodyLimitBytes: number;
  /** RD_CONVERSION_BODY_LIMIT: a ConversionReview carries every object of a list page read in the other version. */
  conversionBodyLimitBytes: number;
  /**
   * RD_REGISTER_CONVERSION (local mode): point the CRD's conversion webhook at this process. Off by
   * default: the CRD has one conversion address, and a process that stops leaves it pointing nowhere.
   * In a cluster the CRD names the Service, and every replica fills in its caBundle.
   */
  registerConversion: boolean;
  /** RD_MAX_CONNECTIONS, RD_TLS_HANDSHAKE_TIMEOUT, RD_HEADERS_TIMEOUT: what the listener grants a connection before its request. */
  connectionLimits: ConnectionLimits;
  sarCacheTtlMs: number;
  /** RD_AUTHOR_DENIAL_TTL: how long the controller keeps a recorded author's denial before asking again. */
  authorDenialTtlMs: number;
  /**
   * RD_RBAC_SHORTCUT: the cluster's RBAC objects are watched, and what they grant an author is
   * allowed without a SubjectAccessReview (what they do not grant is still asked).
   */
  rbacShortcut: boolean;
  /** SubjectAccessReviews in flight at once, for all admissions together (taken in turn per user). */
  accessReviewConcurrency: number;
  /** /metrics only for a bearer token whose user may get it (TokenReview + SubjectAccessReview). */
  metricsAuth: boolean;
  /**
   * RD_METRICS_REVIEW_RATE, _BURST, _CONCURRENCY: the reviews that tokens not allowed before may
   * cost the API server; a scrape over them is answered 429 without asking.
   */
  metricsReviews: ScrapeLimits;
  /**
   * RD_WEBHOOK_CLIENT_CA_FILE: the webhook routes answer only a caller whose client certificate
   * this CA signed (the API server, configured to present one); unset: anyone who reaches the port.
   */
  webhookClientCaFile: string | undefined;
  /** RD_WEBHOOK_CLIENT_NAMES: the common names accepted; empty: any the CA signed. */
  webhookClientNames: string[];
  tls: TlsSettings;
  shutdownDelayMs: number;
  shutdownTimeoutMs: number;
  crdPath: string | undefined;
  /** A kubeconfig file (its current context); wins over the in-cluster ServiceAccount. */
  kubeconfig: string | undefined;
  /** The API server as a pod sees it (KUBERNETES_SERVICE_HOST/PORT). */
  inCluster: { host: string; port: string } | undefined;
  /** Connections to the API server that requests share (watches have their own). */
  apiConnections: number;
  apiTimeoutMs: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Reads one setting after another, collecting every problem so that one run reports them all. */
class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  raw(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  string(name: string, fallback: string, pattern?: RegExp, what?: string): string {
    const value = this.raw(name) ?? fallback;
    if (pattern && !pattern.test(value)) this.problems.push(`${name}=${value}: must be ${what ?? pattern.source}`);
    return value;
  }

  oneOf<T extends string>(name: string, fallback: T, allowed: readonly T[]): T {
    const value = this.raw(name) ?? fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name}=${value}: must be one of ${allowed.join(', ')}`);
      return fallback;
    }
    return value as T;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const n = /^-?\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      this.problems.push(`${name}=${value}: must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return n;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['true', '1', 'yes'].includes(value)) return true;
    if (['false', '0', 'no'].includes(value)) return false;
    this.problems.push(`${name}=${value}: must be true or false`);
    return fallback;
  }

  duration(name: string, fallback: string, minMs = 0): number {
    return this.parsed(name, fallback, parseDuration, minMs, 'a duration such as 500ms, 10s, 5m, 1h or 90d');
  }

  bytes(name: string, fallback: string): number {
    return this.parsed(name, fallback, parseByteSize, 1, 'a size such as 3Mi, 512Ki or 1048576');
  }

  list(name: string, fallback: string[]): string[] {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }

  private parsed(name: string, fallback: string, parse: (s: string) => number | undefined, min: number, what: string): number {
    const value = this.raw(name) ?? fallback;
    const n = parse(value);
    if (n === undefined || n < min) {
      this.problems.push(`${name}=${value}: must be ${what}${min > 0 ? ` (at least ${min})` : ''}`);
      return parse(fallback) ?? 0;
    }
    return n;
  }
}

const DEFAULT_WEBHOOK_NAMES = ['resource-distributor-distributions', 'resource-distributor-namespaces', 'resource-distributor-pods'];

function readWebhookNames(r: Reader): WebhookNames {
  const names = r.list('RD_WEBHOOK_NAMES', DEFAULT_WEBHOOK_NAMES);
  const [distributions, namespaces, pods] = names;
  if (names.length < 2 || names.length > 3 || distributions === undefined || namespaces === undefined) {
    r.problems.push('RD_WEBHOOK_NAMES: must be two or three names, "<distributions>,<namespaces>[,<pods (mutating)>]"');
    return { distributions: 'resource-distributor-distributions', namespaces: 'resource-distributor-namespaces' };
  }
  for (const name of names) {
    if (!DNS_SUBDOMAIN.test(name)) r.problems.push(`RD_WEBHOOK_NAMES: ${name} is not a DNS subdomain`);
  }
  return { distributions, namespaces, ...(pods === undefined ? {} : { pods }) };
}

function readAllowedKinds(r: Reader): KindName[] {
  const value = r.raw('RD_ALLOWED_KINDS') ?? 'Secret,ConfigMap';
  try {
    return parseKindNames(value);
  } catch (error) {
    r.problems.push(`RD_ALLOWED_KINDS=${value}: ${(error as Error).message}`);
    return parseKindNames('Secret,ConfigMap');
  }
}

function readWebhookUrl(r: Reader): string | undefined {
  const value = r.raw('RD_WEBHOOK_URL');
  if (value === undefined) return undefined;
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'https:' || url.pathname !== '/' || url.search !== '' || url.username !== '') {
    r.problems.push(`RD_WEBHOOK_URL=${value}: must be https://<host>[:<port>] (no path, query or credentials)`);
    return undefined;
  }
  return url.origin;
}

function readTls(r: Reader): TlsSettings {
  const tls: TlsSettings = {
    caValidityMs: r.duration('RD_CA_VALIDITY', '1825d', 60_000),
    caRenewBeforeMs: r.duration('RD_CA_RENEW_BEFORE', '600d', 1),
    certValidityMs: r.duration('RD_CERT_VALIDITY', '90d', 10_000),
    certRenewBeforeMs: r.duration('RD_CERT_RENEW_BEFORE', '30d', 1),
    checkIntervalMs: r.duration('RD_CERT_CHECK_INTERVAL', '1m', 100),
  };
  if (tls.caRenewBeforeMs >= tls.caValidityMs) r.problems.push('RD_CA_RENEW_BEFORE: must be shorter than RD_CA_VALIDITY');
  if (tls.certRenewBeforeMs >= tls.certValidityMs) {
    r.problems.push('RD_CERT_RENEW_BEFORE: must be shorter than RD_CERT_VALIDITY');
  }
  // A leaf must never outlive the CA that signed it, even one about to be replaced.
  if (tls.certValidityMs > tls.caRenewBeforeMs) r.problems.push('RD_CERT_VALIDITY: must not exceed RD_CA_RENEW_BEFORE');
  return tls;
}

function readLeaderElection(r: Reader, mode: Mode): Pick<Config, 'leaderElection' | 'leaseName' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'> {
  const settings = {
    leaderElection: r.boolean('RD_LEADER_ELECTION', mode === 'cluster'),
    leaseName: r.string('RD_LEASE_NAME', 'resource-distributor', DNS_SUBDOMAIN, 'a DNS subdomain'),
    leaseDurationMs: r.duration('RD_LEASE_DURATION', '15s', 1000),
    renewDeadlineMs: r.duration('RD_RENEW_DEADLINE', '10s', 500),
    retryPeriodMs: r.duration('RD_RETRY_PERIOD', '2s', 100),
  };
  if (settings.renewDeadlineMs >= settings.leaseDurationMs) r.problems.push('RD_RENEW_DEADLINE: must be shorter than RD_LEASE_DURATION');
  if (settings.retryPeriodMs >= settings.renewDeadlineMs) r.problems.push('RD_RETRY_PERIOD: must be shorter than RD_RENEW_DEADLINE');
  return settings;
}

/** KUBECONFIG (the first file of a list), else ~/.kube/config in local mode; in a cluster, none. */
function kubeconfigPath(r: Reader, mode: Mode): string | undefined {
  const first = r.raw('KUBECONFIG')?.split(':').find((path) => path !== '');
  if (first !== undefined) return first;
  return mode === 'local' ? join(r.raw('HOME') ?? homedir(), '.kube', 'config') : undefined;
}

function readInCluster(r: Reader): Config['inCluster'] {
  const host = r.raw('KUBERNETES_SERVICE_HOST');
  return host === undefined ? undefined : { host, port: r.raw('KUBERNETES_SERVICE_PORT') ?? '443' };
}

/** Builds the configuration from environment variables; throws a ConfigError naming every bad one. */
export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const mode = r.oneOf<Mode>('RD_MODE', 'cluster', ['cluster', 'local']);
  const config: Config = {
    mode,
    port: r.integer('RD_PORT', 9443, 0, 65535),
    host: r.string('RD_HOST', mode === 'cluster' ? '0.0.0.0' : '127.0.0.1'),
    namespace: r.string('RD_NAMESPACE', 'resource-distributor', DNS_LABEL, 'a DNS label'),
    serviceName: r.string('RD_SERVICE_NAME', 'resource-distributor', DNS_LABEL, 'a DNS label'),
    tlsSecret: r.string('RD_TLS_SECRET', 'resource-distributor-tls', DNS_SUBDOMAIN, 'a DNS subdomain'),
    certDir: r.string('RD_CERT_DIR', 'certs'),
    webhookNames: readWebhookNames(r),
    webhookUrl: readWebhookUrl(r),
    logLevel: r.oneOf('RD_LOG_LEVEL', 'info', LOG_LEVELS),
    sweepIntervalMs: r.duration('RD_SWEEP_INTERVAL', '5m', 1000),
    concurrency: r.integer('RD_CONCURRENCY', 4, 1, 256),
    applyParallelism: r.integer('RD_APPLY_PARALLELISM', 32, 1, 1024),
    forbiddenNamespaces: r.list('RD_FORBIDDEN_NAMESPACES', []),
    allowedKinds: readAllowedKinds(r),
    namespaceGeneration: r.boolean('RD_NAMESPACE_GENERATION', true),
    podWaitMs: r.duration('RD_POD_WAIT', '1500ms'),
    reconcile: r.boolean('RD_RECONCILE', true),
    ...readLeaderElection(r, mode),
    podName: r.raw('POD_NAME') ?? `${hostname()}-${process.pid}`,
    pod: r.raw('POD_NAME'),
    bodyLimitBytes: r.bytes('RD_BODY_LIMIT', '8Mi'),
    conversionBodyLimitBytes: r.bytes('RD_CONVERSION_BODY_LIMIT', '256Mi'),
    registerConversion: r.boolean('RD_REGISTER_CONVERSION', false),
    connectionLimits: {
      maxConnections: r.integer('RD_MAX_CONNECTIONS', 1000, 1, 1_000_000),
      handshakeTimeoutMs: r.duration('RD_TLS_HANDSHAKE_TIMEOUT', '10s', 100),
      headersTimeoutMs: r.duration('RD_HEADERS_TIMEOUT', '15s', 100),
    },
    sarCacheTtlMs: r.duration('RD_SAR_CACHE_TTL', '10s'),
    authorDenialTtlMs: r.duration('RD_AUTHOR_DENIAL_TTL', '1m', 100),
    accessReviewConcurrency: r.integer('RD_ACCESS_REVIEW_CONCURRENCY', 16, 1, 256),
    rbacShortcut: r.boolean('RD_RBAC_SHORTCUT', true),
    metricsAuth: r.boolean('RD_METRICS_AUTH', mode === 'cluster'),
    metricsReviews: {
      ratePerSecond: r.integer('RD_METRICS_REVIEW_RATE', 5, 1, 1000),
      burst: r.integer('RD_METRICS_REVIEW_BURST', 10, 1, 1000),
      concurrency: r.integer('RD_METRICS_REVIEW_CONCURRENCY', 4, 1, 256),
    },
    webhookClientCaFile: r.raw('RD_WEBHOOK_CLIENT_CA_FILE'),
    webhookClientNames: r.list('RD_WEBHOOK_CLIENT_NAMES', []),
    tls: readTls(r),
    shutdownDelayMs: r.duration('RD_SHUTDOWN_DELAY', mode === 'cluster' ? '5s' : '0s'),
    shutdownTimeoutMs: r.duration('RD_SHUTDOWN_TIMEOUT', '20s', 100),
    crdPath: r.raw('RD_CRD_PATH'),
    kubeconfig: kubeconfigPath(r, mode),
    inCluster: readInCluster(r),
    apiConnections: 0,
    apiTimeoutMs: r.duration('RD_API_TIMEOUT', '30s', 100),
  };
  // Room for every write of one fan-out, plus status, Events, leases and access reviews beside it.
  config.apiConnections = r.integer('RD_API_CONNECTIONS', config.applyParallelism + 4, 1, 1024);
  if (config.webhookClientNames.length > 0 && config.webhookClientCaFile === undefined) {
    r.problems.push('RD_WEBHOOK_CLIENT_NAMES: needs RD_WEBHOOK_CLIENT_CA_FILE (the CA that signs those certificates)');
  }
  for (const ns of config.forbiddenNamespaces) {
    if (!DNS_LABEL.test(ns)) r.problems.push(`RD_FORBIDDEN_NAMESPACES: ${ns} is not a DNS label`);
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/**
 * Namespaces never written to: RD_FORBIDDEN_NAMESPACES and the controller's own namespace (its
 * TLS Secret and Lease live there; no copy serves anyone in it).
 */
export function forbiddenNamespaces(config: Pick<Config, 'forbiddenNamespaces' | 'namespace'>): string[] {
  return [...new Set([...config.forbiddenNamespaces, config.namespace])];
}

/** The reconciler's part of the configuration. */
export function controllerSettings(config: Config): ControllerSettings {
  return {
    sweepIntervalMs: config.sweepIntervalMs,
    concurrency: config.concurrency,
    applyParallelism: config.applyParallelism,
    forbiddenNamespaces: forbiddenNamespaces(config),
    namespaceGeneration: config.namespaceGeneration,
    podWaitMs: config.podWaitMs,
    authorDenialTtlMs: config.authorDenialTtlMs,
    leaderElection: {
      enabled: config.leaderElection,
      leaseName: config.leaseName,
      leaseNamespace: config.namespace,
      identity: config.podName,
      leaseDurationMs: config.leaseDurationMs,
      renewDeadlineMs: config.renewDeadlineMs,
      retryPeriodMs: config.retryPeriodMs,
    },
  };
}
