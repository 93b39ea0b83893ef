// The default as root: the soak's world with the replicas as pods. The control plane with what
// a Deployment needs (the node tier's), a node of its own whose kubelet restarts a killed
// container within a second, the product's image (kept by the node tier, or built and kept now)
// imported into it, and `helm install` of the chart with two replicas. The pods reach the API
// server through a proxy on the machine end of the node's link that the soak holds (the node
// sends their connections to the `kubernetes` Service there), so that a partition cuts them off
// and nothing else.
import { execFile } from 'node:child_process';
import { cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, CoordinationV1Api, CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { createNodeCredentials, ensureProductImage, ensureTool, REPO_ROOT, startNode, type CachedProductImage, type ControlPlane, type LocalNode } from '../control-plane/index.js';
import { startTcpProxy, type TcpProxy } from '../e2e/support/tcp-proxy.js';
import { PodLogs } from './pod-logs.js';
import { PodReplicas } from './pod-replicas.js';
import { LEADER_ELECTION, OWN_NAMESPACE, prepareCluster, SetupError, startPlane, waitForWebhooks, type SoakWorld } from './setup.js';

/**
 * The kubelet's longest restart backoff: each kill restarts the container within a second or so,
 * instead of after 10 s, 20 s, 40 s... up to 5 min (KubeletCrashLoopBackOffMax, alpha in 1.34).
 */
const MAX_CONTAINER_RESTART_PERIOD = '1s';

const RELEASE = 'resource-distributor';
const POD_SELECTOR = 'app.kubernetes.io/name=resource-distributor';

// Helm keeps repositories and plugins under these: none of the user's own.
const HELM = join(tmpdir(), 'rd-helm');
const HELM_HOMES = { HELM_CACHE_HOME: join(HELM, 'cache'), HELM_CONFIG_HOME: join(HELM, 'config'), HELM_DATA_HOME: join(HELM, 'data') };

/** The chart as users install it, with the soak's leader election timing; the CRDs are the soak's own (installed before the garbage collector started). */
async function installChart(helm: string, kubeconfig: string, image: CachedProductImage): Promise<void> {
  const settings = Object.entries(LEADER_ELECTION).flatMap(([name, value]) => ['--set-string', `settings.${name}=${value}`]);
  const args = [
    'install', RELEASE, join(REPO_ROOT, 'charts', 'resource-distributor'),
    '--namespace', OWN_NAMESPACE,
    '--set', `image.repository=${image.repository}`,
    '--set', `image.tag=${image.tag}`,
    // Imported into the node: never pulled.
    '--set', 'image.pullPolicy=Never',
    '--set', 'crds.install=false',
    ...settings,
    '--wait', '--timeout', '5m',
  ];
  try {
    await promisify(execFile)(helm, args, { env: { ...process.env, KUBECONFIG: kubeconfig, ...HELM_HOMES }, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    throw new SetupError(`helm install failed: ${failed.stderr ?? ''}${failed.stdout ?? String(error)}`);
  }
}

/**
 * The soak's CRD (webhook-config/crd, installed before the chart) names the conversion Service in
 * the chart's default namespace; the release is in the soak's own. Without this, every distribution
 * written in v1alpha1 is refused (the API server finds no Service to convert it).
 */
async function conversionInOwnNamespace(plane: ControlPlane): Promise<void> {
  const body = { spec: { conversion: { webhook: { clientConfig: { service: { namespace: OWN_NAMESPACE } } } } } };
  await plane.kubeConfig
    .makeApiClient(ApiextensionsV1Api)
    .patchCustomResourceDefinition({ name: 'resourcedistributions.apps.kruise.io', body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
}

/**
 * A token for reading the replicas' /metrics, as Prometheus reads them (README: Monitoring): a
 * ServiceAccount of the soak's bound to a role with `get` on /metrics, and a token requested for it.
 */
async function metricsReaderToken(plane: ControlPlane): Promise<string> {
  const core = plane.kubeConfig.makeApiClient(CoreV1Api);
  const rbac = plane.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const name = 'soak-metrics-reader';
  await core.createNamespacedServiceAccount({ namespace: OWN_NAMESPACE, body: { metadata: { name } } });
  await rbac.createClusterRole({ body: { metadata: { name }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'ServiceAccount', name, namespace: OWN_NAMESPACE }] },
  });
  const request = await core.createNamespacedServiceAccountToken({ namespace: OWN_NAMESPACE, name, body: { spec: { audiences: [], expirationSeconds: 24 * 3600 } } });
  return request.status?.token ?? '';
}

export async function startPodWorld(log: (line: string) => void, logDir: string): Promise<SoakWorld> {
  const credentials = await createNodeCredentials();
  // While the control plane and the node start: the image (kept, or built now) and helm.
  const image = ensureProductImage(log);
  image.catch(() => undefined);
  const helm = ensureTool('helm', { log });
  helm.catch(() => undefined);
  let plane: ControlPlane | undefined;
  let node: LocalNode | undefined;
  let apiProxy: TcpProxy | undefined;
  const stop = async (): Promise<void> => {
    // The pods' logs outlive the node: the report names where they are (`instances/` holds every
    // container instance's whole log, `pods/` the files the kubelet still kept at the end).
    if (node) await cp(node.podLogsDir, join(logDir, 'pods'), { recursive: true }).catch(() => undefined);
    await apiProxy?.close();
    await node?.stop();
    await plane?.stop();
    await credentials.remove();
  };
  try {
    plane = await startPlane(log, credentials);
    node = await startNode(plane, credentials, { log, maxContainerRestartPeriod: MAX_CONTAINER_RESTART_PERIOD });
    const apiserverPort = Number(new URL(plane.serverUrl).port);
    apiProxy = await startTcpProxy(() => apiserverPort, { host: node.network.hostIp });
    await node.routeKubernetesServiceTo(`https://${node.network.hostIp}:${apiProxy.port}`);
    const kube = await prepareCluster(plane);
    const product = await image;
    await node.importImage(product.archive);
    await conversionInOwnNamespace(plane);
    log(`installing the chart (${product.repository}:${product.tag}, 2 replicas)`);
    await installChart(await helm, plane.kubeconfigPath, product);
    const scrapeToken = await metricsReaderToken(plane);
    const replicas = await PodReplicas.create({ core: kube.core, namespace: OWN_NAMESPACE, labelSelector: POD_SELECTOR, logs: new PodLogs(node.podLogsDir, OWN_NAMESPACE, join(logDir, 'instances')), scrapeToken, log });
    await waitForWebhooks(kube.custom);
    const coordination = plane.kubeConfig.makeApiClient(CoordinationV1Api);
    const settings = { ...LEADER_ELECTION, 'kubelet crashLoopBackOff.maxContainerRestartPeriod': MAX_CONTAINER_RESTART_PERIOD };
    return { plane, apiProxy, kube, replicas, coordination, logDir, settings, stop };
  } catch (error) {
    await stop().catch((stopError: unknown) => log(`teardown after a failed start: ${String(stopError)}`));
    throw error;
  }
}
