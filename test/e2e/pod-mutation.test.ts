// Image-pull Secrets for every pod, with the whole product registered in the API server (the
// mutating webhook, then copies before pods): pods created at once with their namespace name the
// distributed Secret, and the Secret exists when their create returns; and every case where they
// must not get it.
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, ANNOTATION_INJECTED, KIND, type ImagePullSecretInjection, type ResourceDistribution } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { Kube } from './fixtures/kube.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const ROUNDS = 100;
const kc = loadKubeConfig();
const kube = new Kube(kc);
const core = kc.makeApiClient(CoreV1Api);
const metrics = createMetrics();
const team = uniqueName('inject');
const name = uniqueName('rd-inject');
const IMAGE = 'registry.example.com/team/app:1.4';
let server: RunningServer;

const b64 = (value: string): string => Buffer.from(value).toString('base64');
const dockerConfig = b64(JSON.stringify({ auths: { 'https://registry.example.com/v2/': { auth: b64('robot:not-for-logs') } } }));

function distribution(mode: ImagePullSecretInjection): ResourceDistribution {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name },
    spec: {
      resource: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'registry-pull' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': dockerConfig } },
      targets: { namespaceLabelSelector: { matchLabels: { team } } },
      imagePullSecretInjection: mode,
    },
  };
}

function pod(image: string, extra: Partial<V1Pod['spec']> = {}, labels: Record<string, string> = {}): V1Pod {
  return { metadata: { name: uniqueName('app'), labels }, spec: { containers: [{ name: 'app', image }], ...extra } };
}

async function created(namespace: string, body: V1Pod): Promise<string[]> {
  const result = await core.createNamespacedPod({ namespace, body });
  return (result.spec?.imagePullSecrets ?? []).map((ref) => ref.name ?? '');
}

async function secretExists(namespace: string): Promise<boolean> {
  return core.readNamespacedSecret({ namespace, name: 'registry-pull' }).then(
    () => true,
    () => false,
  );
}

beforeAll(async () => {
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    overrides: {
      webhookNames: { distributions: uniqueName('e2e-inject-distributions'), namespaces: uniqueName('e2e-inject-namespaces'), pods: uniqueName('e2e-inject-pods') },
      shutdownDelayMs: 0,
    },
  });
  await kube.createDistribution(distribution('MatchingImages'));
  await waitFor(
    async () => {
      const ns = (await kube.createNamespace('inject-probe', { team })).metadata!.name!;
      return (await created(ns, pod(IMAGE))).includes('registry-pull') ? true : undefined;
    },
    { what: 'the mutating webhook of this server to be called', timeoutMs: 60_000 },
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('image-pull Secrets for every pod', () => {
  it(`names the Secret in a pod created with its namespace, and the Secret is there when the create returns, ${ROUNDS}/${ROUNDS}`, async () => {
    let named = 0;
    let present = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const ns = (await kube.createNamespace('inject', { team })).metadata!.name!;
      const body = pod(IMAGE);
      const result = await core.createNamespacedPod({ namespace: ns, body });
      if ((result.spec?.imagePullSecrets ?? []).some((ref) => ref.name === 'registry-pull')) named += 1;
      if (await secretExists(ns)) present += 1;
      if (i === 0) expect(result.metadata?.annotations?.[ANNOTATION_INJECTED]).toBe('registry-pull');
    }
    console.log(`image-pull Secret injection: named in ${named}/${ROUNDS} pods created with their namespace; the Secret present when the create returned ${present}/${ROUNDS}`);
    expect([named, present]).toEqual([ROUNDS, ROUNDS]);
  });

  it('also for a pod of another ServiceAccount, and not twice for a pod that names it', async () => {
    const ns = (await kube.createNamespace('inject-sa', { team })).metadata!.name!;
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'builder' } } });
    expect(await created(ns, pod(IMAGE, { serviceAccountName: 'builder' }))).toEqual(['registry-pull']);
    expect(await created(ns, pod(IMAGE, { imagePullSecrets: [{ name: 'own' }, { name: 'registry-pull' }] }))).toEqual(['own', 'registry-pull']);
  });

  it('leaves alone: another registry, a namespace not targeted, a pod or namespace that opts out, a same-named Secret not ours', async () => {
    const targeted = (await kube.createNamespace('inject-no', { team })).metadata!.name!;
    expect(await created(targeted, pod('quay.io/team/app:1'))).toEqual([]);
    expect(await created(targeted, pod(IMAGE, {}, { 'resource-distributor.io/inject': 'disabled' }))).toEqual([]);

    const other = (await kube.createNamespace('inject-other')).metadata!.name!;
    expect(await created(other, pod(IMAGE))).toEqual([]);

    const optedOut = (await kube.createNamespace('inject-quiet', { team, 'resource-distributor.io/inject': 'disabled' })).metadata!.name!;
    expect(await created(optedOut, pod(IMAGE))).toEqual([]);

    const theirs = (await kube.createNamespace('inject-theirs')).metadata!.name!;
    await core.createNamespacedSecret({ namespace: theirs, body: { metadata: { name: 'registry-pull' }, type: 'Opaque', data: { x: b64('y') } } });
    await kube.labelNamespace(theirs, { team });
    await waitFor(async () => (((await kube.getDistribution(name))?.status?.conditions ?? []).some((c) => c.type === 'ConflictOccurred' && c.status === 'True') ? true : undefined), {
      what: 'the conflict reported',
    });
    expect(await created(theirs, pod(IMAGE))).toEqual([]);
  });

  it('stops injecting when the distribution is switched to Never', async () => {
    await kube.updateDistribution(name, (rd) => {
      rd.spec.imagePullSecretInjection = 'Never';
    });
    const ns = (await kube.createNamespace('inject-never', { team })).metadata!.name!;
    await waitFor(async () => ((await created(ns, pod(IMAGE))).length === 0 ? true : undefined), { what: 'injection to stop' });
    expect((await metrics.podInjections.get()).values[0]?.value).toBeGreaterThanOrEqual(ROUNDS);
  });
});
