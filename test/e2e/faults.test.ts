// Faults in the control plane, on a control plane of this file's own (the shared one is never
// restarted): kube-apiserver killed (-9) and restarted in the middle of a 500-namespace fan-out, etcd
// killed and restarted in the middle of an update, and a watch that must resume from a compacted revision (410 Gone) after
// a network partition during which copies and namespaces changed. After each: every copy right,
// status right, the product still running, no Event storm; the time to converge is printed.
import { Writable } from 'node:stream';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_DISTRIBUTION, type Resource } from '../../src/domain/types.js';
import { createLogger } from '../../src/log.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { applyManifestFiles, CRD_DIR, startControlPlane, waitForCrdEstablished, type ControlPlane } from '../control-plane/index.js';
import { connectionOf } from '../kube-client.js';
import { distributionOf, Kube } from './fixtures/kube.js';
import { uniqueName, waitFor } from './support/cluster.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

const NAMESPACES = 500;
const CONVERGE_MS = 90_000;
const b64 = (text: string): string => Buffer.from(text).toString('base64');

let plane: ControlPlane;
let kube: Kube;
let core: CoreV1Api;
let proxy: TcpProxy;
let server: RunningServer;
const logs: { level: number; msg: string; resource?: string }[] = [];

/** The product reaches the API server only through `proxy`, so that a test can partition it. */
function throughProxy(kc: KubeConfig, port: number): KubeConfig {
  const proxied = new KubeConfig();
  const exported = JSON.parse(kc.exportConfig()) as { clusters: { cluster: { server: string } }[] };
  for (const entry of exported.clusters) entry.cluster.server = `https://127.0.0.1:${port}`;
  proxied.loadFromString(JSON.stringify(exported));
  return proxied;
}

beforeAll(async () => {
  plane = await startControlPlane({
    // Watches are then served by etcd itself, so that a compaction expires them (410 Gone) exactly as
    // a watch cache that has moved past a revision does.
    apiserverFlags: ['--watch-cache=false'],
    beforeControllerManager: async (kc) => {
      await applyManifestFiles(kc, [CRD_DIR]);
      await waitForCrdEstablished(kc, 'resourcedistributions.apps.kruise.io');
    },
  });
  kube = new Kube(plane.kubeConfig);
  core = plane.kubeConfig.makeApiClient(CoreV1Api);
  const apiserverPort = Number(new URL(plane.serverUrl).port);
  proxy = await startTcpProxy(() => apiserverPort);
  server = await startLocalServer({
    connection: connectionOf(throughProxy(plane.kubeConfig, proxy.port)),
    log: createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _encoding, callback) {
          logs.push(JSON.parse(chunk.toString('utf8')) as (typeof logs)[number]);
          callback();
        },
      }),
    }),
    // This file's control plane has no other conversion webhook: the product serves it, as in a cluster.
    env: { RD_REGISTER_CONVERSION: 'true' },
    overrides: { shutdownDelayMs: 0 },
  });
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await proxy?.close();
  await plane?.stop();
});

async function namespaces(count: number, labels: Record<string, string>): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i += 25) {
    const batch = await Promise.all(Array.from({ length: Math.min(25, count - i) }, () => kube.createNamespace('fault', labels)));
    names.push(...batch.map((ns) => ns.metadata!.name!));
  }
  return names;
}

function secret(value: string): Resource {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull' }, type: 'Opaque', data: { v: b64(value) } };
}

async function copies(name: string): Promise<Resource[]> {
  const list = await core.listSecretForAllNamespaces({ labelSelector: `${LABEL_DISTRIBUTION}=${name}` });
  return list.items as unknown as Resource[];
}

/** Resolves once at least `count` copies carry `value`: the fan-out is under way. */
async function copiesWith(name: string, value: string, count: number): Promise<number> {
  return waitFor(
    async () => {
      const seen = (await copies(name)).filter((c) => c.data?.v === b64(value)).length;
      return seen >= count ? seen : undefined;
    },
    { what: `${count} copies of ${name} carrying ${value}`, intervalMs: 20, timeoutMs: 60_000 },
  );
}

/** Every copy right, status right; resolves with the time it took from `since`. */
async function converged(name: string, expected: { namespaces: readonly string[]; value: string; generation: number }, since: number): Promise<number> {
  const wanted = [...expected.namespaces].sort();
  await waitFor(
    async () => {
      const found = await copies(name);
      const right = found.filter((c) => c.data?.v === b64(expected.value)).map((c) => c.metadata.namespace ?? '');
      return right.length === found.length && JSON.stringify(right.sort()) === JSON.stringify(wanted) ? true : undefined;
    },
    { what: `every copy of ${name} carrying ${expected.value}`, timeoutMs: CONVERGE_MS, intervalMs: 200 },
  );
  await kube.waitForStatus(
    name,
    (s) =>
      s.observedGeneration === expected.generation &&
      s.desired === wanted.length &&
      s.succeeded === wanted.length &&
      s.failed === 0 &&
      s.conditions.every((c) => c.status === (c.type === 'Ready' ? 'True' : 'False')),
    CONVERGE_MS,
  );
  return Date.now() - since;
}

/** Events about the distribution, counted with their repeats. */
async function eventCount(name: string): Promise<{ total: number; reasons: string[] }> {
  const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` });
  return {
    total: list.items.reduce((sum, e) => sum + (e.count ?? 1), 0),
    reasons: list.items.map((e) => `${e.reason ?? ''} x${e.count ?? 1}`),
  };
}

function stillRunning(): void {
  expect(server.controller.synced()).toBe(true);
  expect(server.controller.isLeader()).toBe(true);
  expect(logs.filter((line) => line.level >= 60)).toEqual([]);
}

describe('faults in the control plane', () => {
  const team = uniqueName('team');
  const name = uniqueName('rd-faults');
  let targets: string[] = [];

  it(`converges after kube-apiserver is killed and restarted in the middle of a ${NAMESPACES}-namespace fan-out`, async () => {
    targets = await namespaces(NAMESPACES, { team });
    await kube.createDistribution(distributionOf(name, secret('1'), { namespaceLabelSelector: { matchLabels: { team } } }));
    const before = await copiesWith(name, '1', 20);
    const stopAt = Date.now();
    await plane.restart('kube-apiserver', { crash: true });
    const readyAt = Date.now();
    const after = await converged(name, { namespaces: targets, value: '1', generation: 1 }, readyAt);
    const events = await eventCount(name);
    console.log(
      `kube-apiserver killed (-9) and restarted: ${before} of ${NAMESPACES} copies written when stopped; back in ${readyAt - stopAt} ms; ` +
        `converged ${after} ms after it was ready (${readyAt - stopAt + after} ms after the kill); Events: ${events.total} (${events.reasons.join(', ') || 'none'})`,
    );
    expect(events.total).toBeLessThanOrEqual(10);
    stillRunning();
  });

  it('converges after etcd is killed and restarted in the middle of an update', async () => {
    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource = secret('2');
    });
    const before = await copiesWith(name, '2', 20);
    const eventsBefore = (await eventCount(name)).total;
    const stopAt = Date.now();
    await plane.restart('etcd', { crash: true, downMs: 2_000 });
    const readyAt = Date.now();
    const after = await converged(name, { namespaces: targets, value: '2', generation: 2 }, readyAt);
    const events = await eventCount(name);
    console.log(
      `etcd killed (-9) and restarted: ${before} of ${NAMESPACES} copies updated when stopped; back in ${readyAt - stopAt} ms (2 s down); ` +
        `converged ${after} ms after it was ready (${readyAt - stopAt + after} ms after the kill); new Events: ${events.total - eventsBefore}`,
    );
    expect(events.total - eventsBefore).toBeLessThanOrEqual(10);
    stillRunning();
  });

  it('relists after its watches resume from a compacted revision (410 Gone) and repairs what changed meanwhile', async () => {
    const relistsBefore = logs.filter((line) => line.msg === 'watch expired, relisting').length;
    const eventsBefore = (await eventCount(name)).total;
    const partitionedAt = Date.now();
    proxy.partition();
    // While the product cannot reach the API server: copies deleted and tampered with, new
    // namespaces created, old ones no longer targeted.
    const [deleted, tampered, dropped] = [targets.slice(0, 5), targets.slice(5, 10), targets.slice(10, 15)];
    await Promise.all(deleted.map((ns) => kube.remove('Secret', ns, 'pull')));
    await Promise.all(tampered.map(async (ns) => kube.put({ ...((await kube.get('Secret', ns, 'pull')) as Resource), data: { v: b64('tampered') } })));
    await Promise.all(dropped.map((ns) => kube.labelNamespace(ns, { team: null })));
    const added = await namespaces(5, { team });
    await compactEtcd(plane.etcdUrl);
    const healedAt = Date.now();
    proxy.heal();

    const expected = [...targets.filter((ns) => !dropped.includes(ns)), ...added];
    const after = await converged(name, { namespaces: expected, value: '2', generation: 2 }, healedAt);
    const relisted = logs.filter((line) => line.msg === 'watch expired, relisting').slice(relistsBefore).map((line) => line.resource);
    const events = await eventCount(name);
    console.log(
      `partition of ${healedAt - partitionedAt} ms with etcd compacted: relisted ${relisted.join(', ')}; ` +
        `converged ${after} ms after the partition healed; new Events: ${events.total - eventsBefore}`,
    );
    expect(relisted).toEqual(expect.arrayContaining(['distributions', 'namespaces', 'Secret']));
    expect(events.total - eventsBefore).toBeLessThanOrEqual(10);
    stillRunning();
  });
});

/** Compacts etcd to its current revision: every older resourceVersion is gone. */
async function compactEtcd(etcdUrl: string): Promise<void> {
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const response = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const range = (await post('/v3/kv/range', { key: b64('/'), limit: 1 })) as { header: { revision: string } };
  await post('/v3/kv/compaction', { revision: range.header.revision, physical: true });
}
