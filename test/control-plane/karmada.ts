// A Karmada control plane on 127.0.0.1 (the fleet tier): our own etcd + kube-apiserver (with the
// front-proxy flags an aggregated API server needs) plus karmada-aggregated-apiserver (it alone
// serves cluster.karmada.io), karmada-webhook (it labels policies and bindings with the IDs the
// controllers select by), karmada-controller-manager and karmada-scheduler, built from Karmada's Go
// module. Member clusters join in push mode, as `karmadactl join` would make them join.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiregistrationV1Api, CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { isAlreadyExists } from '../../src/k8s/errors.js';
import { ensureKarmada, karmadaSourceDir, type KarmadaCommand } from './binaries.js';
import { startControlPlane, type ControlPlane, type StartControlPlaneOptions } from './control-plane.js';
import { registerTeardown } from './exit-hooks.js';
import { applyManifestFiles } from './manifests.js';
import { freePorts, httpGet, waitUntilReady } from './network.js';
import { createCertificateAuthority, issueClientCert, issueServingCert, type KeyAndCert } from './pki.js';
import { startProcess, type ManagedProcess } from './processes.js';

export interface KarmadaPlane {
  /** The Karmada API server's plane (etcd, kube-apiserver, kube-controller-manager). */
  plane: ControlPlane;
  /** Karmada's own servers, for their memory. */
  components: ManagedProcess[];
  stop(): Promise<void>;
}

export interface StartKarmadaOptions {
  log?: (line: string) => void;
  /** More manifests to install with Karmada's CRDs, before kube-controller-manager starts (our CRD). */
  crdPaths?: readonly string[];
}

const FRONT_PROXY_CLIENT = 'front-proxy-client';
// The aggregator dials the ExternalName Service's host but checks the certificate for the Service's own name.
const AGGREGATED_SERVICE_HOST = 'karmada-aggregated-apiserver.karmada-system.svc';
const READY_TIMEOUT_MS = 120_000;
// The servers Karmada runs besides the API server, in start order.
const COMPONENTS = ['aggregated-apiserver', 'webhook', 'controller-manager', 'scheduler'] as const satisfies readonly KarmadaCommand[];

/** Karmada's CRDs as its chart's kustomization lists them (the bindings' conversion patches are left out: one version is used). */
async function karmadaCrdFiles(source: string): Promise<string[]> {
  const crds = join(source, 'charts', 'karmada', '_crds');
  const kustomization = parse(await readFile(join(crds, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  return kustomization.resources.map((resource) => join(crds, resource));
}

interface FleetPki {
  dir: string;
  frontProxyCa: string;
  frontProxyClient: KeyAndCert;
  servingCa: KeyAndCert;
  serving: KeyAndCert;
}

async function writeFleetPki(dir: string): Promise<FleetPki> {
  const [frontProxyCa, servingCa] = await Promise.all([createCertificateAuthority('karmada-front-proxy-ca'), createCertificateAuthority('karmada-components-ca')]);
  const [frontProxyClient, serving] = await Promise.all([issueClientCert(frontProxyCa, FRONT_PROXY_CLIENT), issueServingCert(servingCa, 'karmada-components', [AGGREGATED_SERVICE_HOST])]);
  await mkdir(dir, { recursive: true });
  const files: [string, string][] = [
    ['front-proxy-ca.crt', frontProxyCa.cert],
    ['front-proxy-client.crt', frontProxyClient.cert],
    ['front-proxy-client.key', frontProxyClient.key],
    ['tls.crt', serving.cert],
    ['tls.key', serving.key],
  ];
  await Promise.all(files.map(([file, text]) => writeFile(join(dir, file), text, { mode: 0o600 })));
  return { dir, frontProxyCa: frontProxyCa.cert, frontProxyClient, servingCa, serving };
}

function frontProxyFlags(pki: FleetPki): string[] {
  return [
    `--requestheader-client-ca-file=${join(pki.dir, 'front-proxy-ca.crt')}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT}`,
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-username-headers=X-Remote-User',
    `--proxy-client-cert-file=${join(pki.dir, 'front-proxy-client.crt')}`,
    `--proxy-client-key-file=${join(pki.dir, 'front-proxy-client.key')}`,
  ];
}

async function createOrKeep(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/** cluster.karmada.io through the aggregation layer: an ExternalName Service `localhost` with the port in the APIService. */
async function registerAggregatedApi(kc: KubeConfig, port: number, ca: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  await createOrKeep(() => core.createNamespace({ body: { metadata: { name: 'karmada-system' } } }));
  await createOrKeep(() =>
    core.createNamespacedService({
      namespace: 'karmada-system',
      body: { metadata: { name: 'karmada-aggregated-apiserver' }, spec: { type: 'ExternalName', externalName: 'localhost' } },
    }),
  );
  await kc.makeApiClient(ApiregistrationV1Api).createAPIService({
    body: {
      metadata: { name: 'v1alpha1.cluster.karmada.io' },
      spec: {
        group: 'cluster.karmada.io',
        version: 'v1alpha1',
        groupPriorityMinimum: 2000,
        versionPriority: 10,
        caBundle: Buffer.from(ca).toString('base64'),
        service: { name: 'karmada-aggregated-apiserver', namespace: 'karmada-system', port },
      },
    },
  });
}

/** Karmada's webhook configurations, calling karmada-webhook on 127.0.0.1 instead of its Service. */
async function registerKarmadaWebhooks(kc: KubeConfig, source: string, dir: string, port: number, ca: string): Promise<void> {
  const text = (await readFile(join(source, 'artifacts', 'deploy', 'webhook-configuration.yaml'), 'utf8'))
    .replaceAll('https://karmada-webhook.karmada-system.svc:443', `https://127.0.0.1:${port}`)
    .replaceAll('{{caBundle}}', Buffer.from(ca).toString('base64'));
  const file = join(dir, 'karmada-webhooks.yaml');
  await writeFile(file, text);
  await applyManifestFiles(kc, [file]);
}

async function waitForHealth(child: ManagedProcess, port: number): Promise<void> {
  await waitUntilReady(child, '/healthz', async () => (await httpGet(`http://127.0.0.1:${port}/healthz`))?.status === 200, READY_TIMEOUT_MS);
}

interface Launch {
  plane: ControlPlane;
  binaries: Record<(typeof COMPONENTS)[number], string>;
  pki: FleetPki;
  source: string;
  components: ManagedProcess[];
}

async function startComponents({ plane, binaries, pki, source, components }: Launch): Promise<void> {
  const kubeconfig = `--kubeconfig=${plane.kubeconfigPath}`;
  const [aggregated = 0, webhook = 0, managerHealth = 0, schedulerHealth = 0] = await freePorts(4);
  const start = (name: string, command: string, args: string[]): ManagedProcess => {
    const child = startProcess(name, command, args, plane.dir);
    components.push(child);
    return child;
  };
  start('karmada-aggregated-apiserver', binaries['aggregated-apiserver'], [
    kubeconfig,
    `--authentication-kubeconfig=${plane.kubeconfigPath}`,
    `--authorization-kubeconfig=${plane.kubeconfigPath}`,
    `--etcd-servers=${plane.etcdUrl}`,
    `--tls-cert-file=${join(pki.dir, 'tls.crt')}`,
    `--tls-private-key-file=${join(pki.dir, 'tls.key')}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${aggregated}`,
  ]);
  await registerAggregatedApi(plane.kubeConfig, aggregated, pki.servingCa.cert);
  const webhookServer = start('karmada-webhook', binaries.webhook, [
    kubeconfig,
    '--bind-address=127.0.0.1',
    `--secure-port=${webhook}`,
    `--cert-dir=${pki.dir}`,
    '--metrics-bind-address=0',
    '--health-probe-bind-address=0',
  ]);
  // It registers no health check: ready once its TLS listener answers at all.
  const ca = pki.servingCa.cert;
  await waitUntilReady(webhookServer, 'its listener', async () => (await httpGet(`https://127.0.0.1:${webhook}/convert`, { ca })) !== undefined, READY_TIMEOUT_MS);
  await registerKarmadaWebhooks(plane.kubeConfig, source, plane.dir, webhook, pki.servingCa.cert);
  const manager = start('karmada-controller-manager', binaries['controller-manager'], [
    kubeconfig,
    '--leader-elect=false',
    '--metrics-bind-address=0',
    `--health-probe-bind-address=127.0.0.1:${managerHealth}`,
    // A member's state (Ready, APIs) is read this often; the default 10 s slows joins.
    '--cluster-status-update-frequency=2s',
  ]);
  const scheduler = start('karmada-scheduler', binaries.scheduler, [
    kubeconfig,
    '--leader-elect=false',
    '--metrics-bind-address=0',
    `--health-probe-bind-address=127.0.0.1:${schedulerHealth}`,
  ]);
  await Promise.all([waitForHealth(manager, managerHealth), waitForHealth(scheduler, schedulerHealth), waitForApiService(plane, components[0]!)]);
}

async function waitForApiService(plane: ControlPlane, aggregated: ManagedProcess): Promise<void> {
  const api = plane.kubeConfig.makeApiClient(ApiregistrationV1Api);
  await waitUntilReady(
    aggregated,
    'APIService v1alpha1.cluster.karmada.io Available',
    async () => {
      const service = await api.readAPIService({ name: 'v1alpha1.cluster.karmada.io' });
      return service.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;
    },
    READY_TIMEOUT_MS,
  );
}

async function karmadaBinaries(log: (line: string) => void): Promise<Launch['binaries']> {
  const paths: Partial<Launch['binaries']> = {};
  // One after the other: each is a large Go build on first use.
  for (const command of COMPONENTS) paths[command] = await ensureKarmada(command, { log });
  return paths as Launch['binaries'];
}

/** Starts the Karmada plane; everything stops with `stop()` or when this process goes away. */
export async function startKarmadaPlane(options: StartKarmadaOptions = {}): Promise<KarmadaPlane> {
  const log = options.log ?? ((line: string) => console.error(`[karmada] ${line}`));
  const started = Date.now();
  const binaries = await karmadaBinaries(log);
  const source = await karmadaSourceDir();
  const crds = await karmadaCrdFiles(source);
  const pkiDir = join(tmpdir(), `rd-karmada-pki-${process.pid}-${Date.now()}`);
  const pki = await writeFleetPki(pkiDir);
  const planeOptions: StartControlPlaneOptions = {
    log,
    apiserverFlags: frontProxyFlags(pki),
    beforeControllerManager: (kc) => applyManifestFiles(kc, [...crds, ...(options.crdPaths ?? [])]),
  };
  const plane = await startControlPlane(planeOptions);
  const components: ManagedProcess[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      for (const child of [...components].reverse()) await child.stop();
      await plane.stop();
      await rm(pkiDir, { recursive: true, force: true });
      unregister();
    })());
  const unregister = registerTeardown({ stop, killNow: () => components.forEach((child) => child.killNow()) });
  try {
    await startComponents({ plane, binaries, pki, source, components });
  } catch (error) {
    await stop();
    throw error;
  }
  log(`Karmada plane ready at ${plane.serverUrl} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { plane, components, stop };
}

const MEMBER_ACCOUNT = { namespace: 'kube-system', name: 'karmada-push' };

/** A token of a cluster-admin ServiceAccount of the member's own: what Karmada acts as there. */
async function memberToken(member: KubeConfig): Promise<string> {
  const core = member.makeApiClient(CoreV1Api);
  await createOrKeep(() => core.createNamespacedServiceAccount({ namespace: MEMBER_ACCOUNT.namespace, body: { metadata: { name: MEMBER_ACCOUNT.name } } }));
  await createOrKeep(() =>
    member.makeApiClient(RbacAuthorizationV1Api).createClusterRoleBinding({
      body: {
        metadata: { name: 'karmada-push' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', ...MEMBER_ACCOUNT }],
      },
    }),
  );
  const request = await core.createNamespacedServiceAccountToken({ ...MEMBER_ACCOUNT, body: { spec: { audiences: [], expirationSeconds: 24 * 3600 } } });
  const token = request.status?.token;
  if (!token) throw new Error('the member issued no token');
  return token;
}

/** The CA that signed the member API server's certificate, as its admin kubeconfig holds it. */
function caOf(member: ControlPlane): string {
  const data = member.kubeConfig.getCurrentCluster()?.caData;
  if (!data) throw new Error(`the kubeconfig of ${member.serverUrl} holds no CA`);
  return Buffer.from(data, 'base64').toString('utf8');
}

/**
 * Joins `member` to the fleet in push mode (Karmada's controllers write to it with a token of its
 * own): a Secret `{token, caBundle}` and a Cluster in namespace karmada-cluster. Resolves once
 * the Cluster is Ready.
 */
export async function joinMember(fleet: KubeConfig, name: string, member: ControlPlane, timeoutMs = READY_TIMEOUT_MS): Promise<void> {
  const core = fleet.makeApiClient(CoreV1Api);
  await createOrKeep(() => core.createNamespace({ body: { metadata: { name: 'karmada-cluster' } } }));
  const token = await memberToken(member.kubeConfig);
  await core.createNamespacedSecret({
    namespace: 'karmada-cluster',
    body: { metadata: { name }, stringData: { token, caBundle: caOf(member) } },
  });
  const custom = fleet.makeApiClient(CustomObjectsApi);
  const cluster = { group: 'cluster.karmada.io', version: 'v1alpha1', plural: 'clusters' };
  await custom.createClusterCustomObject({
    ...cluster,
    body: {
      apiVersion: 'cluster.karmada.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name },
      spec: { apiEndpoint: member.serverUrl, syncMode: 'Push', secretRef: { namespace: 'karmada-cluster', name } },
    },
  });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (await custom.getClusterCustomObject({ ...cluster, name })) as KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } };
    if (found.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new Error(`Cluster ${name} not Ready within ${timeoutMs / 1000} s: ${JSON.stringify(found.status ?? {})}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
