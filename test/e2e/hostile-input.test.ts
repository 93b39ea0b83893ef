// Inputs made to stall the product, through the API server with the whole product registered in
// it: globs that a backtracking regular expression matches in exponential time (a name pattern,
// a registry credential's host, a copyMetadata glob), and a distribution of 10,000 names and
// 10,000 exclusion patterns. Each is answered by our webhook itself (a stalled webhook makes the
// API server answer "failed calling webhook", or admit pods unmutated), and the other webhooks and
// the reconciler go on serving meanwhile. How long each holds the event loop: npm run bench:hostile.
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, type ResourceDistribution } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { configMapOf, Kube } from './fixtures/kube.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { run } from './support/tools.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const team = uniqueName('hostile');
const metrics = createMetrics();
/**
 * Far above what these inputs hold the event loop for now (bench:hostile has the figures), far
 * below the tens of seconds a backtracking match held it: the API server's webhook timeout.
 */
const HELD_AT_MOST_MS = 2_000;
let server: RunningServer;

/** The time our distribution webhook has spent answering, in seconds. */
async function webhookSeconds(): Promise<number> {
  const { values } = await metrics.admissionDuration.get();
  return values.filter((v) => v.metricName?.endsWith('_sum') === true && String(v.labels.webhook).includes('distribution')).reduce((sum, v) => sum + v.value, 0);
}

const b64 = (value: string): string => Buffer.from(value).toString('base64');

function rd(name: string, spec: Partial<ResourceDistribution['spec']>): ResourceDistribution {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { resource: configMapOf('settings', { a: '1' }), targets: {}, ...spec } };
}

/**
 * The time one call took, in ms, its outcome, and the longest the event loop of this process (the
 * product's webhooks and reconciler) was held meanwhile.
 */
async function timed<T>(call: () => Promise<T>): Promise<{ ms: number; result: T; heldMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const start = performance.now();
  const result = await call();
  const ms = Math.round(performance.now() - start);
  delay.disable();
  return { ms, result, heldMs: Math.round(delay.max / 1e6) };
}

/** Distributions created by kubectl: not removed by the fixture's cleanup. */
const byKubectl: string[] = [];

/** Created by kubectl, so that this process only answers (the client's encoding of a large body would hold its loop too). */
async function kubectlCreate(object: ResourceDistribution): Promise<void> {
  await run('kubectl', ['create', '-f', '-'], { input: JSON.stringify(object) });
  byKubectl.push(object.metadata.name);
}

function pod(image: string): V1Pod {
  return { metadata: { name: uniqueName('app') }, spec: { containers: [{ name: 'app', image }] } };
}

async function createdPod(namespace: string, image: string): Promise<string[]> {
  const result = await core.createNamespacedPod({ namespace, body: pod(image) });
  return (result.spec?.imagePullSecrets ?? []).map((ref) => ref.name ?? '');
}

beforeAll(async () => {
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    overrides: {
      webhookNames: { distributions: uniqueName('e2e-hostile-distributions'), namespaces: uniqueName('e2e-hostile-namespaces'), pods: uniqueName('e2e-hostile-pods') },
      shutdownDelayMs: 0,
    },
  });
}, 120_000);

afterAll(async () => {
  for (const name of byKubectl) await custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }).catch(() => undefined);
  await server?.stop();
  await kube.cleanup();
});

describe('inputs made to stall the product', () => {
  it('answers a name pattern of many stars against long names at once', async () => {
    const name = uniqueName('rd-stars');
    const body = rd(name, {
      targets: {
        includedNamespaces: { list: Array.from({ length: 5 }, (_, i) => ({ name: `${'a'.repeat(62)}${i}` })) },
        excludedNamespaces: { list: [{ pattern: 'a*a*a*a*a*a*a*b' }] },
      },
    });
    const { ms, heldMs } = await timed(() => kubectlCreate(body));
    console.log(`a*a*a*a*a*a*a*b against five 63-character names: admitted in ${ms} ms; the event loop held at most ${heldMs} ms`);
    expect(heldMs).toBeLessThan(HELD_AT_MOST_MS);
    // None of the five exists: each is reported missing, by a reconciler that goes on.
    await kube.waitForStatus(name, (status) => status.observedGeneration === 1 && status.failed === 5);
  });

  it('denies name patterns that would cost too much per namespace, naming the field and the bound', async () => {
    const body = rd(uniqueName('rd-costly'), { targets: { includedNamespaces: { list: Array.from({ length: 70 }, (_, i) => ({ pattern: `*a${i}*b*` })) } } });
    const { code, message } = await rejection(kube.createDistribution(body));
    expect(code).toBe(422);
    expect(message).toContain('spec.targets: its name patterns could take 17642 comparisons to test one namespace name, more than the 1024 allowed');
  });

  it('admits 10,000 names and 10,000 exclusion patterns, each with a start of its own', async () => {
    const name = uniqueName('rd-lists');
    const body = rd(name, {
      targets: {
        includedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ name: `${team}-${i}` })) },
        excludedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ pattern: `${team}-${i}-*` })) },
      },
    });
    const before = await webhookSeconds();
    const { ms, heldMs } = await timed(() => kubectlCreate(body));
    const answered = Math.round(((await webhookSeconds()) - before) * 1000);
    console.log(`10,000 names and 10,000 exclusion patterns (${Math.round(JSON.stringify(body).length / 1024)} KiB): admitted in ${ms} ms, of which our webhook's answer ${answered} ms; the event loop held at most ${heldMs} ms`);
    expect(heldMs).toBeLessThan(HELD_AT_MOST_MS);
    await kube.waitForStatus(name, (status) => status.observedGeneration === 1 && status.failed === 10_000, 60_000);
  });

  it("admits a pod whose image host is 4,000 characters against a tenant's credential glob, and injects others' pods meanwhile", async () => {
    const auths = { 'a*a*a*b.com': { auth: b64('tenant:not-for-logs') } };
    const name = uniqueName('rd-glob-key');
    await kube.createDistribution(
      rd(name, {
        resource: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'tenant-pull' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(JSON.stringify({ auths })) } },
        targets: { namespaceLabelSelector: { matchLabels: { team } } },
        imagePullSecretInjection: 'MatchingImages',
      }),
    );
    const tenant = (await kube.createNamespace('hostile-tenant', { team })).metadata!.name!;
    const other = (await kube.createNamespace('hostile-other', { team })).metadata!.name!;
    await waitFor(async () => ((await createdPod(other, 'aaab.com/app:1')).includes('tenant-pull') ? true : undefined), {
      what: 'the mutating webhook of this server to inject',
      timeoutMs: 60_000,
    });

    const long = `${'a'.repeat(4000)}.com/app:1`;
    const hostile = timed(() => createdPod(tenant, long).catch((error: unknown) => error));
    // Sent while the hostile pod is being admitted: a stalled webhook lets it through without its Secret (failurePolicy Ignore).
    await sleep(200);
    const theirs = await timed(() => createdPod(other, 'aaab.com/app:1'));
    const answered = await hostile;
    console.log(`pod with a 4,000-character image host: answered in ${answered.ms} ms (event loop held at most ${answered.heldMs} ms); another team's pod meanwhile: ${theirs.ms} ms, injected ${JSON.stringify(theirs.result)}`);
    // Admitted, or refused by the API server's own validation: either way not stalled in our webhook.
    if (Array.isArray(answered.result)) expect(answered.result).toEqual([]);
    else expect(String(answered.result)).not.toContain('failed calling webhook');
    expect(answered.heldMs).toBeLessThan(HELD_AT_MOST_MS);
    expect(theirs.result).toEqual(['tenant-pull']);
  });

  it('copies a source with a long annotation key under a copyMetadata glob of many stars', async () => {
    const source = (await kube.createNamespace('hostile-source')).metadata!.name!;
    const target = (await kube.createNamespace('hostile-target')).metadata!.name!;
    const key = 'a'.repeat(63);
    await kube.put(configMapOf('settings', { a: '1' }, { namespace: source, annotations: { [key]: 'x', aaaaaaaab: 'y' } }));
    const name = uniqueName('rd-meta-glob');
    const body = rd(name, { targets: { includedNamespaces: { list: [{ name: target }] } }, copyMetadata: { annotations: { include: ['a*a*a*a*a*a*a*a*b'] } } });
    delete body.spec.resource;
    body.spec.source = { apiVersion: 'v1', kind: 'ConfigMap', namespace: source, name: 'settings' };
    const { ms } = await timed(async () => {
      await kube.createDistribution(body);
      return kube.waitForObject('ConfigMap', target, 'settings', (o) => o !== undefined);
    });
    const copy = await kube.get('ConfigMap', target, 'settings');
    console.log(`copyMetadata a*a*a*a*a*a*a*a*b, a 63-character annotation key: copied in ${ms} ms`);
    expect(copy?.metadata.annotations?.[key]).toBeUndefined();
    expect(copy?.metadata.annotations?.aaaaaaaab).toBe('y');
    // The reconciler goes on: re-annotating the source reaches the copy.
    await kube.put(configMapOf('settings', { a: '2' }, { namespace: source, annotations: { [key]: 'z', aaaaaaaab: 'y' } }));
    await kube.waitForObject('ConfigMap', target, 'settings', (o) => o?.data?.a === '2');
  });
});
