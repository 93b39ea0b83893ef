// Everything the soak runs against: a control plane of its own and two replicas of the product
// electing a leader behind one address that the API server calls. Here what both ways of running
// the replicas share, and `--replicas processes`: the product built as its image builds it, run
// as two local processes. Pods (the default as root): pod-world.ts.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoordinationV1Api, CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { imageRuntime } from '../../bench/entry-command.js';
import { applyManifestFiles, CRD_DIR, REPO_ROOT, startControlPlane, waitForCrdEstablished, type ControlPlane, type NodeCredentials } from '../control-plane/index.js';
import { startTcpProxy, type TcpProxy } from '../e2e/support/tcp-proxy.js';
import { AUTHOR, SOURCE_NAMESPACE } from './model.js';
import { ProcessReplicas } from './replicas.js';
import type { SoakReplicas } from './soak-replicas.js';
import { AUTHOR_WRITER_ROLE, RD, SoakKube } from './soak-kube.js';

export const OWN_NAMESPACE = 'soak-system';
export const LEASE = { namespace: OWN_NAMESPACE, name: 'resource-distributor', durationMs: 4_000 };

/** Short leader election timing, so that faults hand over within seconds. */
export const LEADER_ELECTION: Record<string, string> = {
  RD_LEASE_DURATION: `${LEASE.durationMs}ms`,
  RD_RENEW_DEADLINE: '3s',
  RD_RETRY_PERIOD: '500ms',
};

/** The processes' settings besides the defaults (the chart sets the others for pods). */
const PROCESS_SETTINGS: Record<string, string> = {
  RD_NAMESPACE: OWN_NAMESPACE,
  RD_LEADER_ELECTION: 'true',
  ...LEADER_ELECTION,
  RD_LOG_LEVEL: 'info',
};

export class SetupError extends Error {}

export interface SoakWorld {
  plane: ControlPlane;
  /** The replicas' only way to the API server. */
  apiProxy: TcpProxy;
  kube: SoakKube;
  replicas: SoakReplicas;
  coordination: CoordinationV1Api;
  logDir: string;
  /** The replicas' settings besides the defaults, for the report. */
  settings: Record<string, string>;
  /** Stops the replicas, the node and the control plane, keeping the replicas' logs in logDir. */
  stop(): Promise<void>;
}

async function buildProduct(): Promise<void> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(REPO_ROOT, 'tsconfig.build.json')], { stdio: ['ignore', 'inherit', 'inherit'] });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new SetupError(`npm run build failed (tsc exit ${String(code)})`);
}

/** Until the API server calls our distributions webhook: a reserved name is refused by it alone. */
export async function waitForWebhooks(custom: CustomObjectsApi, timeoutMs = 60_000): Promise<void> {
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

/** The control plane; with `node`, what pods of a Deployment need too (the node tier's). */
export function startPlane(log: (line: string) => void, node?: NodeCredentials): Promise<ControlPlane> {
  return startControlPlane({
    log,
    // Watches served by etcd itself, so that a compaction expires them (410 Gone) as a watch cache
    // that has moved past a revision does.
    apiserverFlags: ['--watch-cache=false', ...(node?.apiserverFlags ?? [])],
    extraControllers: node?.extraControllers ?? [],
    workloads: node !== undefined,
    beforeControllerManager: async (kc) => {
      await applyManifestFiles(kc, [CRD_DIR]);
      await waitForCrdEstablished(kc, 'resourcedistributions.apps.kruise.io');
    },
  });
}

export async function prepareCluster(plane: ControlPlane): Promise<SoakKube> {
  const kube = new SoakKube(plane.kubeConfig);
  await kube.createNamespace(OWN_NAMESPACE);
  await kube.createNamespace(SOURCE_NAMESPACE);
  await authorRoles(plane.kubeConfig);
  return kube;
}

export async function startProcessWorld(log: (line: string) => void, logDir: string): Promise<SoakWorld> {
  log('building the product (npm run build)');
  await buildProduct();
  const plane = await startPlane(log);
  let replicas: ProcessReplicas | undefined;
  let apiProxy: TcpProxy | undefined;
  const stop = async (): Promise<void> => {
    await replicas?.close();
    await apiProxy?.close();
    await plane.stop();
  };
  try {
    const kube = await prepareCluster(plane);
    const certDir = await mkdtemp(join(tmpdir(), 'rd-soak-certs-'));
    const apiserverPort = Number(new URL(plane.serverUrl).port);
    apiProxy = await startTcpProxy(() => apiserverPort);
    const kubeconfig = join(certDir, 'kubeconfig');
    await writeFile(kubeconfig, throughProxy(plane.kubeConfig, apiProxy.port), { mode: 0o600 });
    replicas = await ProcessReplicas.create({
      entry: join(REPO_ROOT, 'dist/main.js'),
      nodeFlags: (await imageRuntime(join(REPO_ROOT, 'Dockerfile'))).nodeFlags,
      logDir,
      env: (proxyPort) => ({
        ...PROCESS_SETTINGS,
        KUBECONFIG: kubeconfig,
        RD_MODE: 'local',
        RD_PORT: '0',
        RD_CERT_DIR: certDir,
        RD_WEBHOOK_URL: `https://127.0.0.1:${proxyPort}`,
        // The CRD's conversion webhook at the same shared address, as the replicas serve it in a cluster.
        RD_REGISTER_CONVERSION: 'true',
        // Only this control plane's API server may send reviews, as `npm run dev` runs it.
        RD_WEBHOOK_CLIENT_CA_FILE: plane.webhookClient.caFile,
        RD_WEBHOOK_CLIENT_NAMES: plane.webhookClient.commonName,
      }),
    });
    // One at a time: the first writes the certificates the second then loads.
    await replicas.start(0);
    await replicas.start(1);
    await waitForWebhooks(kube.custom);
    const coordination = plane.kubeConfig.makeApiClient(CoordinationV1Api);
    return { plane, apiProxy, kube, replicas, coordination, logDir, settings: PROCESS_SETTINGS, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
