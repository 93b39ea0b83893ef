// A rolling restart under load. Two replicas of the whole product serve one address (a proxy that
// routes new connections to the replicas whose /readyz answers, as a Service does) and elect one
// leader. While distributions are admitted through the API server at 50 per second (dry runs) and
// namespaces are created, each replica in turn is stopped (SIGTERM) and replaced by a new one.
// Then: the API server reports no failed webhook call, no client saw an error, every namespace has
// its copy, and leadership moved within the lease duration.
import { request } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { GROUP, PLURAL, VERSION, type Resource } from '../../src/domain/types.js';
import { deleteWebhookConfigurations } from '../../src/k8s/webhook-config.js';
import { kubeClientOf } from '../kube-client.js';
import { startProduct, type ProductProcess } from './fixtures/product-process.js';
import { configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

const RATE = 50;
const LEASE_MS = 4_000;

const kc = loadKubeConfig();
const kube = new Kube(kc);
const custom = kc.makeApiClient(CustomObjectsApi);
const coordination = kc.makeApiClient(CoordinationV1Api);
const configurationNames = { distributions: uniqueName('e2e-rolling-distributions'), namespaces: uniqueName('e2e-rolling-namespaces') };
const leaseName = uniqueName('rd-e2e-rolling');
const replicas: ProductProcess[] = [];
const ready = new Set<ProductProcess>();
let proxy: TcpProxy;
let certDir: string;
let probing = true;
let probes: Promise<void> | undefined;
let turn = 0;

/** Keeps `ready` in step with each replica's /readyz, every 100 ms (a Service's endpoints). */
async function probeReadiness(): Promise<void> {
  while (probing) {
    await Promise.all(
      replicas.map(async (replica) => {
        if (await replica.ready()) ready.add(replica);
        else ready.delete(replica);
      }),
    );
    await sleep(100);
  }
}

async function replica(identity: string): Promise<ProductProcess> {
  const started = await startProduct(identity, {
    KUBECONFIG: inject('kubeconfigPath'),
    RD_MODE: 'local',
    RD_PORT: '0',
    RD_CERT_DIR: certDir,
    RD_WEBHOOK_URL: `https://127.0.0.1:${proxy.port}`,
    RD_WEBHOOK_NAMES: `${configurationNames.distributions},${configurationNames.namespaces}`,
    RD_NAMESPACE: 'default',
    RD_LEADER_ELECTION: 'true',
    RD_LEASE_NAME: leaseName,
    RD_LEASE_DURATION: `${LEASE_MS}ms`,
    RD_RENEW_DEADLINE: '3s',
    RD_RETRY_PERIOD: '500ms',
    RD_SHUTDOWN_DELAY: '2s',
  });
  replicas.push(started);
  await waitFor(() => Promise.resolve(ready.has(started) ? true : undefined), { what: `${identity} ready behind the proxy`, timeoutMs: 60_000, intervalMs: 50 });
  return started;
}

async function holder(): Promise<string | undefined> {
  return (await coordination.readNamespacedLease({ namespace: 'default', name: leaseName })).spec?.holderIdentity ?? undefined;
}

// The API server labels its webhook metrics with the webhook's name inside the configuration,
// which every test of this run registers alike: only differences over this test count.
const WEBHOOKS = ['resourcedistributions.resource-distributor.io', 'namespaces.resource-distributor.io'] as const;

interface WebhookCounts {
  calls: Record<string, number>;
  /** Calls that failed (error, timeout) whether the request was then rejected or let through (fail-open). */
  failures: Record<string, number>;
}

/** The API server's own account of our webhooks, from its /metrics. */
async function webhookCounts(config: KubeConfig): Promise<WebhookCounts> {
  const options: { host: string; port: number; path: string } = { host: '127.0.0.1', port: Number(new URL(config.getCurrentCluster()!.server).port), path: '/metrics' };
  await config.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
  const counts: WebhookCounts = { calls: {}, failures: {} };
  for (const line of text.split('\n')) {
    const webhook = WEBHOOKS.find((name) => line.includes(`name="${name}"`));
    if (webhook === undefined) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('apiserver_admission_webhook_request_total{')) counts.calls[webhook] = (counts.calls[webhook] ?? 0) + value;
    const failed =
      line.startsWith('apiserver_admission_webhook_fail_open_count{') ||
      (line.startsWith('apiserver_admission_webhook_rejection_count{') && !line.includes('error_type="no_error"'));
    if (failed) counts.failures[webhook] = (counts.failures[webhook] ?? 0) + value;
  }
  return counts;
}

function since(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(WEBHOOKS.map((name) => [name, (after[name] ?? 0) - (before[name] ?? 0)]));
}

beforeAll(async () => {
  certDir = await mkdtemp(join(tmpdir(), 'rd-e2e-rolling-'));
  // New connections go to the ready replicas in turn.
  proxy = await startTcpProxy(() => {
    const candidates = replicas.filter((r) => ready.has(r));
    return candidates.length === 0 ? undefined : candidates[turn++ % candidates.length]?.port;
  });
  probes = probeReadiness();
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(replicas.map((r) => r.stop()));
  probing = false;
  await probes;
  // The replicas leave a shared address registered: remove it, or later tests would call a dead proxy.
  const client = kubeClientOf(kc);
  await deleteWebhookConfigurations(client, [configurationNames.distributions, configurationNames.namespaces]);
  client.close();
  await proxy?.close();
  await kube.cleanup();
  await rm(certDir, { recursive: true, force: true });
});

interface Load {
  sent: number;
  failures: string[];
  stop(): Promise<void>;
}

/** Dry-run creates of valid distributions through the API server, `RATE` per second. */
function admissionLoad(): Load {
  const inFlight = new Set<Promise<void>>();
  const load: Load = {
    sent: 0,
    failures: [],
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
  const timer = setInterval(() => {
    load.sent += 1;
    const body = distributionOf(uniqueName('rd-load'), configMapOf('load', { a: '1' }), { allNamespaces: true });
    const call = custom
      .createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body, dryRun: 'All' })
      .then(
        () => undefined,
        (error: unknown) => {
          load.failures.push(error instanceof Error ? error.message : String(error));
        },
      )
      .finally(() => inFlight.delete(call));
    inFlight.add(call);
  }, 1000 / RATE);
  return load;
}

describe('rolling restart of two replicas under load', () => {
  it(`admits every distribution (${RATE}/s through the API server), copies into every new namespace and hands leadership over within the lease`, async () => {
    const first = await replica('rolling-a');
    await replica('rolling-b');
    const team = uniqueName('team');
    const name = uniqueName('rd-rolling');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    expect(await waitFor(async () => holder(), { what: 'a leader' })).toBeDefined();

    const countsBefore = await webhookCounts(kc);
    const load = admissionLoad();
    const namespaces: string[] = [];
    let creating = true;
    const creator = (async () => {
      while (creating) {
        namespaces.push((await kube.createNamespace('rolling', { team })).metadata!.name!);
        await sleep(200);
      }
    })();

    const handovers: number[] = [];
    await sleep(2_000);
    for (const [index, old] of [first, replicas[1]!].entries()) {
      const leading = (await holder()) === old.identity;
      const stoppedAt = Date.now();
      const stopped = old.stop();
      if (leading) {
        const next = await waitFor(async () => {
          const now = await holder();
          // A released Lease names nobody for a moment.
          return now && now !== old.identity ? now : undefined;
        }, { what: 'a new leader', intervalMs: 50, timeoutMs: 20_000 });
        handovers.push(Date.now() - stoppedAt);
        console.log(`rolling restart: ${old.identity} stopped while leading; ${next} leads ${Date.now() - stoppedAt} ms later`);
      }
      await stopped;
      await replica(`rolling-${index === 0 ? 'a' : 'b'}-2`);
      await sleep(2_000);
    }
    creating = false;
    await creator;
    await load.stop();

    const seconds = load.sent / RATE;
    console.log(`rolling restart: ${load.sent} dry-run admissions in ~${seconds.toFixed(0)} s, ${load.failures.length} failed; ${namespaces.length} namespaces created`);
    expect(load.failures).toEqual([]);
    const countsAfter = await webhookCounts(kc);
    const calls = since(countsBefore.calls, countsAfter.calls);
    const failures = since(countsBefore.failures, countsAfter.failures);
    console.log(`rolling restart: the API server called the webhooks ${JSON.stringify(calls)}; failed calls ${JSON.stringify(failures)}`);
    expect(failures).toEqual({ [WEBHOOKS[0]]: 0, [WEBHOOKS[1]]: 0 });
    expect(calls[WEBHOOKS[0]]).toBeGreaterThanOrEqual(load.sent);
    expect(calls[WEBHOOKS[1]]).toBeGreaterThanOrEqual(namespaces.length);
    expect(handovers.length).toBeGreaterThan(0);
    for (const ms of handovers) expect(ms).toBeLessThan(LEASE_MS);

    for (const ns of namespaces) {
      const copy: Resource | undefined = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.data?.a === '1');
      expect(copy?.data).toEqual({ a: '1' });
    }
    await kube.waitForStatus(name, (s) => s.succeeded === namespaces.length && s.failed === 0);
  });
});
