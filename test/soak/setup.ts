// Everything the soak runs against: the product built as its image builds it, a control plane of
// its own, and two replicas electing a leader behind one address that the API server calls.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { imageRuntime } from '../../bench/entry-command.js';
import { applyManifestFiles, CRD_DIR, REPO_ROOT, startControlPlane, waitForCrdEstablished, type ControlPlane } from '../control-plane/index.js';
import { startTcpProxy, type TcpProxy } from '../e2e/support/tcp-proxy.js';
import { AUTHOR, SOURCE_NAMESPACE } from './model.js';
import { Replicas } from './replicas.js';
import { AUTHOR_WRITER_ROLE, RD, SoakKube } from './soak-kube.js';

export const OWN_NAMESPACE = 'soak-system';
export const LEASE = { namespace: OWN_NAMESPACE, name: 'resource-distributor', durationMs: 4_000 };

/** The replicas' settings besides the defaults: short leader election timing, so that faults hand over within seconds. */
export const SETTINGS: Record<string, string> = {
  RD_NAMESPACE: OWN_NAMESPACE,
  RD_LEADER_ELECTION: 'true',
  RD_LEASE_DURATION: `${LEASE.durationMs}ms`,
  RD_RENEW_DEADLINE: '3s',
  RD_RETRY_PERIOD: '500ms',
  RD_LOG_LEVEL: 'info',
};

export class SetupError extends Error {}

export interface SoakWorld {
  plane: ControlPlane;
  apiProxy: TcpProxy;
  kube: SoakKube;
  replicas: Replicas;
  coordination: CoordinationV1Api;
  logDir: string;
}

async function buildProduct(): Promise<void> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(REPO_ROOT, 'tsconfig.build.json')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new SetupError(`npm run build failed (tsc exit ${String(code)})`);
}

/** Until the API server calls our distributions webhook: a reserved name is refused by it alone. */
async function waitForWebhooks(custom: CustomObjectsApi, timeoutMs = 60_000): Promise<void> {
  const body = { apiVersion: `${RD.group}/${RD.version}`, kind: 'ResourceDistribution', metadata: { name: 'objectsync-soak-probe' }, spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }, targets: {} } };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await custom.createClusterCustomObject({ ...RD, body, dryRun: 'All' });
    } catch (error) {
      if (error instanceof Error && /denied/.test(error.message)) return;
    }
    if (Date.now() > deadline) throw new SetupError('the API server did not call the distributions webhook in time');
    await sleep(250);
  }
}

/**
 * AUTHOR may manage distributions (cluster-wide) and nothing else; the writer role is bound to it
 * in the namespaces where it may write Secrets and ConfigMaps, as each is created.
 */
async function authorRoles(kc: KubeConfig): Promise<void> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
  await rbac.createClusterRole({ body: { metadata: { name: AUTHOR }, rules: [{ apiGroups: [RD.group], resources: [RD.plural], verbs }] } });
  await rbac.createClusterRole({ body: { metadata: { name: AUTHOR_WRITER_ROLE }, rules: [{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs }] } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: AUTHOR },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: AUTHOR },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: AUTHOR }],
    },
  });
}

/** The admin kubeconfig with the API server's address replaced by the proxy's. */
function throughProxy(kc: KubeConfig, port: number): string {
  const exported = JSON.parse(kc.exportConfig()) as { clusters: { cluster: { server: string } }[] };
  for (const entry of exported.clusters) entry.cluster.server = `https://127.0.0.1:${port}`;
  return JSON.stringify(exported);
}

export async function startWorld(log: (line: string) => void, logDir?: string): Promise<SoakWorld> {
  log('building the product (npm run build)');
  await buildProduct();
  const plane = await startControlPlane({
    log,
    // Watches served by etcd itself, so that a compaction expires them (410 Gone) as a watch cache
    // that has moved past a revision does.
    apiserverFlags: ['--watch-cache=false'],
    beforeControllerManager: async (kc) => {
      await applyManifestFiles(kc, [CRD_DIR]);
      await waitForCrdEstablished(kc, 'resourcedistributions.apps.kruise.io');
    },
  });
  let replicas: Replicas | undefined;
  let apiProxy: TcpProxy | undefined;
  try {
    const kube = new SoakKube(plane.kubeConfig);
    await kube.createNamespace(OWN_NAMESPACE);
    await kube.createNamespace(SOURCE_NAMESPACE);
    await authorRoles(plane.kubeConfig);
    const dir = logDir ?? (await mkdtemp(join(tmpdir(), 'rd-soak-logs-')));
    const certDir = await mkdtemp(join(tmpdir(), 'rd-soak-certs-'));
    const apiserverPort = Number(new URL(plane.serverUrl).port);
    apiProxy = await startTcpProxy(() => apiserverPort);
    const kubeconfig = join(certDir, 'kubeconfig');
    await writeFile(kubeconfig, throughProxy(plane.kubeConfig, apiProxy.port), { mode: 0o600 });
    replicas = await Replicas.create({
      entry: join(REPO_ROOT, 'dist/main.js'),
      nodeFlags: (await imageRuntime(join(REPO_ROOT, 'Dockerfile'))).nodeFlags,
      logDir: dir,
      env: (proxyPort) => ({
        ...SETTINGS,
        KUBECONFIG: kubeconfig,
        RD_MODE: 'local',
        RD_PORT: '0',
        RD_CERT_DIR: certDir,
        RD_WEBHOOK_URL: `https://127.0.0.1:${proxyPort}`,
        // Only this control plane's API server may send reviews, as `npm run dev` runs it.
        RD_WEBHOOK_CLIENT_CA_FILE: plane.webhookClient.caFile,
        RD_WEBHOOK_CLIENT_NAMES: plane.webhookClient.commonName,
      }),
    });
    // One at a time: the first writes the certificates the second then loads.
    await replicas.start(0);
    await replicas.start(1);
    await waitForWebhooks(kube.custom);
    return { plane, apiProxy, kube, replicas, coordination: plane.kubeConfig.makeApiClient(CoordinationV1Api), logDir: dir };
  } catch (error) {
    await replicas?.close();
    await apiProxy?.close();
    await plane.stop();
    throw error;
  }
}
