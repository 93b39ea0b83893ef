// Copies before pods, with the whole product registered in the API server: a namespace is created
// and at once a pod that references a distributed image-pull Secret and a distributed ConfigMap
// volume; when the pod's create returns, both copies exist. The namespace generator is switched
// off (RD_NAMESPACE_GENERATION=false), so the guarantee is shown to come from the pod webhook.
import { CoordinationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { toMicroTime } from '../../src/k8s/leader-election.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, KIND, type ResourceDistribution } from '../../src/domain/types.js';
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
const team = uniqueName('cbp');
let server: RunningServer;

const dockerConfig = Buffer.from(JSON.stringify({ auths: { 'registry.example.com': { auth: Buffer.from('u:p').toString('base64') } } })).toString('base64');

function distribution(name: string, resource: object): ResourceDistribution {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { resource, targets: { namespaceLabelSelector: { matchLabels: { team } } } } } as ResourceDistribution;
}

function pod(namespace: string): V1Pod {
  return {
    metadata: { name: 'app', namespace },
    spec: {
      imagePullSecrets: [{ name: 'registry-pull' }],
      containers: [{ name: 'app', image: 'registry.example.com/team/app:1', volumeMounts: [{ name: 'settings', mountPath: '/etc/app' }] }],
      volumes: [{ name: 'settings', configMap: { name: 'app-settings' } }],
    },
  };
}

async function materialized(result: string): Promise<number> {
  return (await metrics.podMaterialized.get()).values.find((v) => v.labels.result === result)?.value ?? 0;
}

async function exists(read: Promise<unknown>): Promise<boolean> {
  try {
    await read;
    return true;
  } catch {
    return false;
  }
}

async function startServer(env: Record<string, string>): Promise<RunningServer> {
  return startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env,
    overrides: { webhookNames: { distributions: uniqueName('e2e-cbp-distributions'), namespaces: uniqueName('e2e-cbp-namespaces') }, shutdownDelayMs: 0 },
  });
}

/** Resolves once this server's pod webhook answers: a pod in a targeted namespace gets its copies through it. */
async function podWebhookCalled(): Promise<void> {
  await waitFor(
    async () => {
      const ns = (await kube.createNamespace('cbp-probe', { team })).metadata!.name!;
      await core.createNamespacedPod({ namespace: ns, body: pod(ns) });
      return (await exists(core.readNamespacedSecret({ namespace: ns, name: 'registry-pull' }))) ? true : undefined;
    },
    { what: 'the pod webhook of this server to be called', timeoutMs: 60_000 },
  );
}

interface Rounds {
  present: number;
  /** Pods that found a copy missing and had the pod webhook write it (or finish another writer's) first. */
  raced: number;
  podCreateMs: number[];
}

/** ROUNDS times: a namespace, then at once (after its ServiceAccount, as a chart creates it) a pod; then both copies are read. */
async function rounds(prefix: string): Promise<Rounds> {
  const result: Rounds = { present: 0, raced: 0, podCreateMs: [] };
  for (let i = 0; i < ROUNDS; i++) {
    const ns = (await kube.createNamespace(prefix, { team })).metadata!.name!;
    await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: 'app' } } });
    const before = (await materialized('written')) + (await materialized('unchanged'));
    const started = performance.now();
    await core.createNamespacedPod({ namespace: ns, body: { ...pod(ns), spec: { ...pod(ns).spec!, serviceAccountName: 'app' } } });
    result.podCreateMs.push(performance.now() - started);
    const [secret, configMap] = await Promise.all([
      exists(core.readNamespacedSecret({ namespace: ns, name: 'registry-pull' })),
      exists(core.readNamespacedConfigMap({ namespace: ns, name: 'app-settings' })),
    ]);
    if (secret && configMap) result.present += 1;
    if ((await materialized('written')) + (await materialized('unchanged')) > before) result.raced += 1;
  }
  result.podCreateMs.sort((a, b) => a - b);
  return result;
}

const describeRounds = (r: Rounds): string =>
  `both copies present when the pod create returned ${r.present}/${ROUNDS}; ${r.raced} of ${ROUNDS} pods found a copy missing and had it written before their admission; ` +
  `pod create p50 ${r.podCreateMs[Math.floor(ROUNDS / 2)]!.toFixed(0)} ms, max ${r.podCreateMs[ROUNDS - 1]!.toFixed(0)} ms`;

beforeAll(async () => {
  await kube.createDistribution(
    distribution(uniqueName('cbp-pull'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'registry-pull' }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': dockerConfig } }),
  );
  await kube.createDistribution(distribution(uniqueName('cbp-settings'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-settings' }, data: { mode: 'production' } }));
});

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('copies before pods', () => {
  it(`has both copies in place when the pod create returns, ${ROUNDS}/${ROUNDS}, from the pod webhook alone`, async () => {
    // The generator off, and a Lease held by someone else for an hour: this replica never leads, so
    // its reconciler never writes. Only the pod webhook (served by every replica) can.
    const leaseName = uniqueName('rd-e2e-cbp-held');
    const now = toMicroTime(new Date());
    await kc.makeApiClient(CoordinationV1Api).createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name: leaseName }, spec: { holderIdentity: 'someone-else', leaseDurationSeconds: 3600, renewTime: now as never, acquireTime: now as never } },
    });
    server = await startServer({ RD_NAMESPACE_GENERATION: 'false', RD_LEADER_ELECTION: 'true', RD_NAMESPACE: 'default', RD_LEASE_NAME: leaseName });
    await podWebhookCalled();
    expect(server.controller.isLeader()).toBe(false);
    const result = await rounds('cbp-alone');
    console.log(`copies before pods (pod webhook alone: generator off, not the leader): ${describeRounds(result)}`);
    expect(result.present).toBe(ROUNDS);
    expect(result.raced).toBe(ROUNDS);
    await server.stop();
  });

  it(`keeps that guarantee as installed (generator and reconciler on), and says how many pods would have raced without it`, async () => {
    server = await startServer({});
    await podWebhookCalled();
    const result = await rounds('cbp');
    console.log(`copies before pods (as installed): ${describeRounds(result)}`);
    expect(result.present).toBe(ROUNDS);
  });

  it('writes nothing for a dry-run pod, and leaves a same-named object it does not own alone', async () => {
    const ns = (await kube.createNamespace('cbp-dry')).metadata!.name!;
    await core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'app-settings' }, data: { mode: 'theirs' } } });
    await kube.labelNamespace(ns, { team });
    const before = await metrics.podMaterialized.get();
    await core.createNamespacedPod({ namespace: ns, body: pod(ns), dryRun: 'All' });
    expect(await metrics.podMaterialized.get()).toEqual(before);

    await core.createNamespacedPod({ namespace: ns, body: pod(ns) });
    expect((await core.readNamespacedConfigMap({ namespace: ns, name: 'app-settings' })).data).toEqual({ mode: 'theirs' });
    expect(await exists(core.readNamespacedSecret({ namespace: ns, name: 'registry-pull' }))).toBe(true);
  });

  it('never holds up a pod that references nothing distributed', async () => {
    const ns = (await kube.createNamespace('cbp-plain', { team })).metadata!.name!;
    const created = await core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } });
    expect(created.metadata?.name).toBe('plain');
  });
});
