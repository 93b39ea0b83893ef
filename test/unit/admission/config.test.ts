import { describe, expect, it } from 'vitest';
import { parseByteSize, parseDuration } from '../../../src/config-values.js';
import { ConfigError, controllerSettings, forbiddenNamespaces, loadConfig } from '../../../src/config.js';

describe('loadConfig', () => {
  it('has defaults for a cluster install', () => {
    const config = loadConfig({ POD_NAME: 'rd-0' });
    expect(config).toMatchObject({
      mode: 'cluster',
      port: 9443,
      host: '0.0.0.0',
      namespace: 'resource-distributor',
      webhookNames: { distributions: 'resource-distributor-distributions', namespaces: 'resource-distributor-namespaces', pods: 'resource-distributor-pods' },
      leaderElection: true,
      bodyLimitBytes: 8 * 1024 * 1024,
      connectionLimits: { maxConnections: 1000, handshakeTimeoutMs: 10_000, headersTimeoutMs: 15_000 },
      sarCacheTtlMs: 10_000,
      accessReviewConcurrency: 16,
      rbacShortcut: true,
      reconcile: true,
      metricsAuth: true,
      metricsReviews: { ratePerSecond: 5, burst: 10, concurrency: 4 },
      sweepIntervalMs: 300_000,
      podName: 'rd-0',
      tls: { caValidityMs: 1825 * 86_400_000, certValidityMs: 90 * 86_400_000, certRenewBeforeMs: 30 * 86_400_000 },
    });
  });

  it('serves admission alone when told not to reconcile (a fleet control plane)', () => {
    expect(loadConfig({ RD_RECONCILE: 'false' }).reconcile).toBe(false);
  });

  it('defaults differently in local mode', () => {
    expect(loadConfig({ RD_MODE: 'local' })).toMatchObject({ host: '127.0.0.1', leaderElection: false, shutdownDelayMs: 0, metricsAuth: false });
  });

  it('reads every kind of value', () => {
    const config = loadConfig({
      RD_PORT: '8443',
      RD_SWEEP_INTERVAL: '1m30s',
      RD_BODY_LIMIT: '512Ki',
      RD_MAX_CONNECTIONS: '200',
      RD_TLS_HANDSHAKE_TIMEOUT: '2s',
      RD_HEADERS_TIMEOUT: '5s',
      RD_FORBIDDEN_NAMESPACES: 'secure, vault',
      RD_LEADER_ELECTION: 'false',
      RD_WEBHOOK_NAMES: 'a-distributions,a-namespaces',
    });
    expect(config).toMatchObject({
      port: 8443,
      sweepIntervalMs: 90_000,
      bodyLimitBytes: 524_288,
      connectionLimits: { maxConnections: 200, handshakeTimeoutMs: 2000, headersTimeoutMs: 5000 },
      forbiddenNamespaces: ['secure', 'vault'],
      leaderElection: false,
      webhookNames: { distributions: 'a-distributions', namespaces: 'a-namespaces' },
    });
  });

  it('names every bad setting at once', () => {
    const attempt = (): unknown =>
      loadConfig({ RD_MODE: 'remote', RD_PORT: 'https', RD_SWEEP_INTERVAL: '300', RD_CONCURRENCY: '0', RD_WEBHOOK_NAMES: 'only-one', RD_FORBIDDEN_NAMESPACES: 'Bad_Name' });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        'RD_MODE=remote: must be one of cluster, local',
        'RD_PORT=https: must be an integer from 0 to 65535',
        'RD_WEBHOOK_NAMES: must be two or three names, "<distributions>,<namespaces>[,<pods (mutating)>]"',
        'RD_SWEEP_INTERVAL=300: must be a duration such as 500ms, 10s, 5m, 1h or 90d (at least 1000)',
        'RD_CONCURRENCY=0: must be an integer from 1 to 256',
        'RD_FORBIDDEN_NAMESPACES: Bad_Name is not a DNS label',
      ]);
    }
  });

  it.each([
    { env: { RD_METRICS_REVIEW_RATE: '20', RD_METRICS_REVIEW_BURST: '40', RD_METRICS_REVIEW_CONCURRENCY: '8' }, reviews: { ratePerSecond: 20, burst: 40, concurrency: 8 } },
    { env: { RD_METRICS_REVIEW_RATE: '0' }, problem: 'RD_METRICS_REVIEW_RATE=0: must be an integer from 1 to 1000' },
    { env: { RD_METRICS_REVIEW_BURST: '1.5' }, problem: 'RD_METRICS_REVIEW_BURST=1.5: must be an integer from 1 to 1000' },
    { env: { RD_METRICS_REVIEW_CONCURRENCY: '0' }, problem: 'RD_METRICS_REVIEW_CONCURRENCY=0: must be an integer from 1 to 256' },
  ])('reads the limits of /metrics reviews: $env', ({ env, reviews, problem }) => {
    if (problem === undefined) expect(loadConfig(env).metricsReviews).toEqual(reviews);
    else expect(() => loadConfig(env)).toThrow(problem);
  });

  it('rejects certificate lifetimes that do not fit together', () => {
    expect(() => loadConfig({ RD_CERT_VALIDITY: '10d', RD_CERT_RENEW_BEFORE: '20d' })).toThrow('RD_CERT_RENEW_BEFORE: must be shorter than RD_CERT_VALIDITY');
  });

  it('forbids RD_FORBIDDEN_NAMESPACES and its own namespace, once each', () => {
    expect(forbiddenNamespaces(loadConfig({ RD_NAMESPACE: 'ops', RD_FORBIDDEN_NAMESPACES: 'vault,ops' }))).toEqual(['vault', 'ops']);
  });

  it('reads the webhook client CA and names; names alone are refused', () => {
    expect(loadConfig({ RD_WEBHOOK_CLIENT_CA_FILE: '/etc/ca.crt', RD_WEBHOOK_CLIENT_NAMES: 'kube-apiserver, apiserver-2' })).toMatchObject({
      webhookClientCaFile: '/etc/ca.crt',
      webhookClientNames: ['kube-apiserver', 'apiserver-2'],
    });
    expect(loadConfig({})).toMatchObject({ webhookClientCaFile: undefined, webhookClientNames: [] });
    expect(() => loadConfig({ RD_WEBHOOK_CLIENT_NAMES: 'kube-apiserver' })).toThrow('RD_WEBHOOK_CLIENT_NAMES: needs RD_WEBHOOK_CLIENT_CA_FILE');
  });

  it('maps into the reconciler settings', () => {
    const config = loadConfig({ POD_NAME: 'rd-1', RD_NAMESPACE: 'ops', RD_CONCURRENCY: '8' });
    expect(controllerSettings(config)).toEqual({
      sweepIntervalMs: 300_000,
      concurrency: 8,
      applyParallelism: 32,
      // The controller's own namespace is never written to.
      forbiddenNamespaces: ['ops'],
      namespaceGeneration: true,
      podWaitMs: 1_500,
      authorDenialTtlMs: 60_000,
      leaderElection: {
        enabled: true,
        leaseName: 'resource-distributor',
        leaseNamespace: 'ops',
        identity: 'rd-1',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
    });
  });
});

describe('RD_WEBHOOK_URL', () => {
  it.each([
    [undefined, undefined],
    ['https://127.0.0.1:9443', 'https://127.0.0.1:9443'],
    ['https://webhooks.example.com/', 'https://webhooks.example.com'],
    ['https://localhost:443', 'https://localhost'],
  ])('%s is served as %s', (value, url) => {
    expect(loadConfig({ RD_MODE: 'local', RD_WEBHOOK_URL: value }).webhookUrl).toBe(url);
  });

  it.each(['http://127.0.0.1:9443', 'https://127.0.0.1:9443/validate', 'https://u:p@127.0.0.1', 'https://127.0.0.1/?x=1', '127.0.0.1:9443'])(
    '%s is refused, naming the setting',
    (value) => {
      expect(() => loadConfig({ RD_MODE: 'local', RD_WEBHOOK_URL: value })).toThrow(/RD_WEBHOOK_URL=.*must be https:\/\/<host>/);
    },
  );
});

describe('value syntaxes', () => {
  it.each([
    ['500ms', 500],
    ['10s', 10_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['90d', 7_776_000_000],
    ['1.5s', 1500],
    ['0', 0],
    ['10', undefined],
    ['ten seconds', undefined],
  ])('duration %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['1048576', 1_048_576],
    ['3Mi', 3_145_728],
    ['512Ki', 524_288],
    ['1M', 1_000_000],
    ['3MB', undefined],
  ])('size %s', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });
});
