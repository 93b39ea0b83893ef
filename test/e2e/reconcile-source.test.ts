// Distributions that copy an existing object (spec.source), with the whole product registered in the
// API server: copies follow the source (watched, not polled), a rotation reaches every copy, a
// deleted source keeps the copies and says so, its namespace is never a target, a change the
// copies do not carry writes nothing, and an author who may not read the source is denied.
import { request } from 'node:https';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABEL_DISTRIBUTION, PLURAL, VERSION, type Resource, type ResourceDistribution, type SourceRef } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { condition, Kube } from './fixtures/kube.js';
import { asUserWith, rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const N = 20;
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const kc = loadKubeConfig();
const kube = new Kube(kc);
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const metrics = createMetrics();
const team = uniqueName('team');
const targets: string[] = [];
let sourceNs: string;
let server: RunningServer;

function sourceDistribution(name: string, ref: SourceRef, extraTargets: object = {}): ResourceDistribution {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ResourceDistribution',
    metadata: { name },
    spec: { source: ref, targets: { namespaceLabelSelector: { matchLabels: { team } }, ...extraTargets } },
  };
}

function registrySecret(name: string, token: string): Resource {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: sourceNs, labels: { app: 'registry' } }, type: 'Opaque', data: { token: b64(token) } };
}

async function copies(name: string): Promise<Resource[]> {
  const list = await core.listSecretForAllNamespaces({ labelSelector: `${LABEL_DISTRIBUTION}=${name}` });
  return list.items as unknown as Resource[];
}

/** Resolves once every target holds a copy carrying `token`, and no other namespace holds one. */
async function everyCopyCarries(name: string, token: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    async () => {
      const found = await copies(name);
      const right = found.filter((c) => c.data?.token === b64(token)).map((c) => c.metadata.namespace ?? '');
      return found.length === targets.length && JSON.stringify(right.sort()) === JSON.stringify([...targets].sort()) ? true : undefined;
    },
    { what: `every copy of ${name} carrying ${token}`, timeoutMs, intervalMs: 20 },
  );
}

async function writes(): Promise<number> {
  const metric = await metrics.apiRequests.get();
  return metric.values.filter((v) => ['create', 'update', 'delete'].includes(String(v.labels.verb)) && v.labels.resource === 'secrets').reduce((sum, v) => sum + v.value, 0);
}

/** A dry-run create through the API server, as the raw answer: its status and Warning headers. */
async function dryRunCreate(config: KubeConfig, body: object): Promise<{ status: number; warnings: string[]; text: string }> {
  const server = new URL(config.getCurrentCluster()!.server);
  const options: { host: string; port: number; path: string; method: string; headers: Record<string, string> } = {
    host: server.hostname,
    port: Number(server.port),
    path: `/apis/${GROUP}/${VERSION}/${PLURAL}?dryRun=All`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
  };
  await config.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(options, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      const header = res.headers.warning;
      const warnings = header === undefined ? [] : Array.isArray(header) ? header : [header];
      res.on('end', () => resolve({ status: res.statusCode ?? 0, warnings, text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  sourceNs = (await kube.createNamespace('source', { team })).metadata!.name!;
  for (let i = 0; i < N; i++) targets.push((await kube.createNamespace('src-target', { team })).metadata!.name!);
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    overrides: { webhookNames: { distributions: uniqueName('e2e-source-distributions'), namespaces: uniqueName('e2e-source-namespaces') }, shutdownDelayMs: 0 },
  });
  // The webhook answers once registered: a source of another kind is denied.
  await waitFor(
    async () => {
      const probe = sourceDistribution(uniqueName('probe'), { apiVersion: 'v1', kind: 'Pod', namespace: sourceNs, name: 'x' });
      const answer = await dryRunCreate(kc, probe);
      return answer.status === 422 && answer.text.includes('spec.source.kind') ? true : undefined;
    },
    { what: 'the distribution webhook to be called' },
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('distributing from a source object', () => {
  const name = uniqueName('rd-source');
  const ref = (): SourceRef => ({ apiVersion: 'v1', kind: 'Secret', namespace: sourceNs, name: 'registry' });

  it("copies the source to every target but the source's own namespace, with SourceNotFound False", async () => {
    await core.createNamespacedSecret({ namespace: sourceNs, body: registrySecret('registry', 'v1') as never });
    await kube.createDistribution(sourceDistribution(name, ref()));
    await everyCopyCarries(name, 'v1');
    const rd = await kube.waitForStatus(name, (s) => s.succeeded === N && s.desired === N && s.conditions.length === 9);
    expect(condition(rd, 'SourceNotFound')).toMatchObject({ status: 'False', reason: 'Succeeded' });
    expect((await metrics.sourcesWatched.get()).values[0]?.value).toBe(1);
    const copy = await kube.get('Secret', targets[0]!, 'registry');
    expect(copy?.metadata.labels).toMatchObject({ app: 'registry', [LABEL_DISTRIBUTION]: name });
    // The source itself is untouched: no label, annotation or owner of ours.
    const source = await kube.get('Secret', sourceNs, 'registry');
    expect(source?.metadata.labels).toEqual({ app: 'registry' });
    expect(source?.metadata.ownerReferences).toBeUndefined();
  });

  it('updates every copy when the source rotates (watched, not polled)', async () => {
    const rotatedAt = Date.now();
    await core.patchNamespacedSecret({ namespace: sourceNs, name: 'registry', body: { data: { token: b64('v2') } } }, merge);
    await everyCopyCarries(name, 'v2');
    console.log(`source rotation: every one of ${N} copies updated ${Date.now() - rotatedAt} ms after the source changed`);
  });

  it('writes nothing when the source changes only in what copies do not carry', async () => {
    await kube.waitForStatus(name, (s) => s.succeeded === N);
    const before = await writes();
    await core.patchNamespacedSecret(
      { namespace: sourceNs, name: 'registry', body: { metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"changed":true}' } } } },
      merge,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await writes()).toBe(before);
  });

  it('repairs a tampered copy from the source', async () => {
    const copy = (await kube.get('Secret', targets[1]!, 'registry'))!;
    await kube.put({ ...copy, data: { token: b64('tampered') } });
    await kube.waitForObject('Secret', targets[1]!, 'registry', (o) => o?.data?.token === b64('v2'));
  });

  it('drops a label removed from the source from every copy, keeping those others added', async () => {
    const copy = (await kube.get('Secret', targets[0]!, 'registry'))!;
    await kube.put({ ...copy, metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, mine: 'yes' } } });
    await core.patchNamespacedSecret({ namespace: sourceNs, name: 'registry', body: { metadata: { labels: { app: null, tier: 'gold' } } } }, merge);
    for (const ns of targets) await kube.waitForObject('Secret', ns, 'registry', (o) => o?.metadata.labels?.tier === 'gold' && o.metadata.labels.app === undefined);
    expect((await kube.get('Secret', targets[0]!, 'registry'))?.metadata.labels).toEqual({ tier: 'gold', mine: 'yes', [LABEL_DISTRIBUTION]: name });
    await kube.waitForStatus(name, (s) => s.succeeded === N);
  });

  it('keeps the copies when the source is deleted, reports SourceNotFound, and follows it again when it is back', async () => {
    await core.deleteNamespacedSecret({ namespace: sourceNs, name: 'registry' });
    const missing = await kube.waitForStatus(name, (s) => s.conditions.some((c) => c.type === 'SourceNotFound' && c.status === 'True'));
    expect(missing.status).toMatchObject({ desired: N, succeeded: 0, failed: N });
    expect(condition(missing, 'SourceNotFound')?.message).toBe(`source Secret ${sourceNs}/registry not found: the copies are kept as they are`);
    expect((await copies(name)).filter((c) => c.data?.token === b64('v2'))).toHaveLength(N);
    // One Warning Event says it too, as for every failure condition.
    const events = await waitFor(async () => {
      const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` });
      const found = list.items.filter((e) => e.reason === 'SourceNotFound');
      return found.length > 0 ? found : undefined;
    }, { what: 'a SourceNotFound Event' });
    expect(events.map((e) => [e.type, e.message])).toEqual([['Warning', `source Secret ${sourceNs}/registry not found: the copies are kept as they are`]]);

    await core.createNamespacedSecret({ namespace: sourceNs, body: registrySecret('registry', 'v3') as never });
    await everyCopyCarries(name, 'v3');
    const back = await kube.waitForStatus(name, (s) => s.succeeded === N && s.conditions.every((c) => c.status === (c.type === 'Ready' ? 'True' : 'False')));
    expect(condition(back, 'SourceNotFound')?.status).toBe('False');
  });

  it('gives a new namespace its copy', async () => {
    const ns = (await kube.createNamespace('src-late', { team })).metadata!.name!;
    targets.push(ns);
    await kube.waitForObject('Secret', ns, 'registry', (o) => o?.data?.token === b64('v3'));
    await kube.waitForStatus(name, (s) => s.succeeded === targets.length);
  });
});

describe('admission of a distribution with spec.source', () => {
  it('denies an author who may write the targets but not read the source, naming what is missing', async () => {
    const rules = [
      { apiGroups: [GROUP], resources: [PLURAL], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'update'] },
    ];
    await asUserWith(kc, 'bob', rules, async (user, as) => {
      const rd = sourceDistribution(uniqueName('bob'), { apiVersion: 'v1', kind: 'Secret', namespace: sourceNs, name: 'registry' });
      const asBob = as.makeApiClient(CustomObjectsApi);
      const { code, message } = await rejection(asBob.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: rd, dryRun: 'All' }));
      expect(code).toBe(403);
      expect(message).toContain(`spec.source: user "${user}" may not get secrets "registry" in namespace "${sourceNs}"`);
      expect(message).not.toContain('spec.targets');
    });
  });

  it('allows a source that does not exist yet, with a warning', async () => {
    const rd = sourceDistribution(uniqueName('later'), { apiVersion: 'v1', kind: 'ConfigMap', namespace: sourceNs, name: 'not-yet' });
    const answer = await dryRunCreate(kc, rd);
    expect(answer.status).toBe(201);
    expect(answer.warnings.join('\n')).toContain(`spec.source: ConfigMap ${sourceNs}/not-yet does not exist yet: its copies appear once it does`);
  });

  it('denies spec.resource and spec.source together', async () => {
    const rd = sourceDistribution(uniqueName('both'), { apiVersion: 'v1', kind: 'Secret', namespace: sourceNs, name: 'registry' });
    const both = { ...rd, spec: { ...rd.spec, resource: registrySecret('registry', 'x') } };
    const { message } = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: both, dryRun: 'All' }));
    expect(message).toMatch(/set exactly one of spec.resource and spec.source|cannot be set together with spec.resource/);
  });
});
