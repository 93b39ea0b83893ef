import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { ensureBinaries, ensureKubernetesServer, kubernetesModuleDir, kubernetesVersion, type BinaryPaths } from './binaries.js';
import { registerTeardown } from './exit-hooks.js';
import { writeKubeconfig } from './kubeconfig.js';
import { freePorts, httpGet, waitUntilReady, type TlsClient } from './network.js';
import { WEBHOOK_CLIENT_NAME, writeControlPlanePki } from './pki.js';
import { startProcess, type ManagedProcess } from './processes.js';
import { admissionConfigFiles, apiserverArgs, apiserverVersionArgs, controllerManagerArgs, etcdArgs, schedulerArgs, type Ports } from './server-args.js';

export interface ControlPlane {
  kubeconfigPath: string;
  /** Admin (system:masters) client configuration. */
  kubeConfig: KubeConfig;
  serverUrl: string;
  /** etcd's client URL (plain HTTP on loopback), for tests that compact or inspect storage. */
  etcdUrl: string;
  /**
   * The certificate the API server presents to webhooks: its CA (cert and key, to issue others)
   * and common name; a webhook verifies callers with these.
   */
  webhookClient: { caFile: string; caKeyFile: string; commonName: string };
  /** The CA the API server trusts for client certificates (cert and key), to issue more (a node's). */
  clientCa: { certFile: string; keyFile: string };
  /** Temp dir with certificates, kubeconfig, etcd data and one `<server>.log` per process. */
  dir: string;
  /**
   * Stops one server (SIGTERM, SIGKILL after 5 s; `crash`: SIGKILL at once), waits `downMs`,
   * starts it again with the same flags, ports and data, and resolves once it is ready again.
   */
  restart(server: RestartableServer, options?: RestartOptions): Promise<void>;
  /** The servers running now (name and pid), e.g. to read their memory. */
  pids(): { name: string; pid: number }[];
  stop(): Promise<void>;
}

export type RestartableServer = 'etcd' | 'kube-apiserver';

export interface RestartOptions {
  crash?: boolean;
  downMs?: number;
}

export interface StartControlPlaneOptions {
  log?: (line: string) => void;
  /**
   * Runs once the API server is ready and before kube-controller-manager starts. Install CRDs
   * here: the garbage collector discovers new resource types only every 30 s.
   */
  beforeControllerManager?: (kubeConfig: KubeConfig) => Promise<void>;
  /** Skip the cache lookup (and build) and use these binaries. */
  binaries?: BinaryPaths;
  /** Per-server readiness timeout; default 60 s. */
  readyTimeoutMs?: number;
  /** Extra kube-apiserver flags, appended to the defaults. */
  apiserverFlags?: readonly string[];
  /** kube-controller-manager controllers to run besides the defaults (e.g. `endpointslice-controller` for a node tier). */
  extraControllers?: readonly string[];
  /**
   * What Deployments' pods need to run on a node: ServiceAccount admission (each pod gets its
   * token volume; a namespace's pods wait for its `default` ServiceAccount) with the controllers
   * that create those ServiceAccounts and publish the root CA, the Deployment, ReplicaSet and
   * disruption controllers, the node lifecycle controller, and kube-scheduler (built like the kubelet, from the same module).
   */
  workloads?: boolean;
}

/** The controllers `workloads` adds. */
// node-lifecycle-controller: a kubelet registers its node tainted not-ready; the controller lifts the
// taint once the node is Ready, and only then does the scheduler place pods there.
const WORKLOAD_CONTROLLERS = [
  'serviceaccount-controller',
  'root-ca-cert-publisher',
  'deployment-controller',
  'replicaset-controller',
  'disruption-controller',
  'node-lifecycle-controller',
];

const ATTEMPTS = 3;

function portInUse(error: unknown): boolean {
  return error instanceof Error && /address already in use/i.test(error.message);
}

/**
 * Starts etcd, kube-apiserver and kube-controller-manager on free loopback ports in a fresh temp
 * dir. Resolves when the API server is ready and namespace `default` exists. Everything is torn
 * down by `stop()`, or when this process exits or receives SIGINT/SIGTERM/SIGHUP.
 */
export async function startControlPlane(options: StartControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? ((line: string) => console.error(`[control-plane] ${line}`));
  const binaries = options.binaries ?? (await ensureBinaries({ log }));
  const versionFlags = apiserverVersionArgs(await kubernetesVersion(join(await kubernetesModuleDir(), 'go.mod')));
  const apiserverFlags = [...versionFlags, ...(options.apiserverFlags ?? [])];
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binaries, { ...options, apiserverFlags, log });
    } catch (error) {
      // Another process may grab a port between choosing it and the server binding it.
      if (!portInUse(error) || attempt >= ATTEMPTS) throw error;
      log(`a port was taken meanwhile; retrying (attempt ${attempt + 1} of ${ATTEMPTS})`);
    }
  }
}

type Options = StartControlPlaneOptions & { log: (line: string) => void };

async function startOnce(binaries: BinaryPaths, options: Options): Promise<ControlPlane> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'rd-control-plane-'));
  const processes: ManagedProcess[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= stopAll(processes, dir).finally(() => unregister()));
  const unregister = registerTeardown({
    stop,
    killNow: () => {
      for (const child of processes) child.killNow();
      rmSync(dir, { recursive: true, force: true });
    },
  });
  try {
    const plane = await boot(binaries, dir, processes, options);
    options.log(`control plane ready at ${plane.serverUrl} in ${((Date.now() - started) / 1000).toFixed(1)} s (dir ${dir})`);
    return { ...plane, dir, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** How to start one server and when it counts as ready; kept so that it can be restarted. */
interface ServerSpec {
  name: string;
  command: string;
  args: string[];
  ready(child: ManagedProcess): Promise<void>;
}

/** Starts `spec` in slot `at` of `processes` (default: a new last slot; the order is the stop order reversed). */
async function launch(spec: ServerSpec, dir: string, processes: ManagedProcess[], at = processes.length): Promise<void> {
  const child = startProcess(spec.name, spec.command, spec.args, dir);
  processes[at] = child;
  await spec.ready(child);
}

async function boot(
  binaries: BinaryPaths,
  dir: string,
  processes: ManagedProcess[],
  options: Options,
): Promise<Omit<ControlPlane, 'dir' | 'stop'>> {
  const timeout = options.readyTimeoutMs ?? 60_000;
  const pkiDir = join(dir, 'pki');
  await mkdir(pkiDir);
  const [pki, [etcdClient = 0, etcdPeer = 0, apiserver = 0]] = await Promise.all([writeControlPlanePki(pkiDir), freePorts(3)]);
  const ports: Ports = { etcdClient, etcdPeer, apiserver };
  await Promise.all(admissionConfigFiles(dir, pki).map((file) => writeFile(file.path, file.text, { mode: 0o600 })));
  const serverUrl = `https://127.0.0.1:${apiserver}`;
  const etcdUrl = `http://127.0.0.1:${etcdClient}`;
  const tls: TlsClient = { ca: pki.caCert, cert: pki.admin.cert, key: pki.admin.key };

  const specs: Record<RestartableServer, ServerSpec> = {
    etcd: {
      name: 'etcd',
      command: binaries.etcd,
      args: etcdArgs(dir, ports),
      ready: (child) => waitUntilReady(child, 'healthy', async () => (await httpGet(`${etcdUrl}/health`))?.body.includes('"true"') ?? false, timeout),
    },
    'kube-apiserver': {
      name: 'kube-apiserver',
      command: binaries.kubeApiserver,
      args: [...apiserverArgs(dir, ports, pki, { serviceAccountAdmission: options.workloads ?? false }), ...(options.apiserverFlags ?? [])],
      ready: async (child) => {
        await waitUntilReady(child, '/readyz', async () => (await httpGet(`${serverUrl}/readyz`, tls))?.status === 200, timeout);
        await waitUntilReady(
          child,
          'namespace default',
          async () => (await httpGet(`${serverUrl}/api/v1/namespaces/default`, tls))?.status === 200,
          timeout,
        );
      },
    },
  };
  await launch(specs.etcd, dir, processes);
  await launch(specs['kube-apiserver'], dir, processes);

  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfigPath, serverUrl, pki.caCert, pki.admin);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(await readFile(kubeconfigPath, 'utf8'));
  await options.beforeControllerManager?.(kubeConfig);

  const controllers = [...(options.workloads ? WORKLOAD_CONTROLLERS : []), ...(options.extraControllers ?? [])];
  const controllerManager = startProcess('kube-controller-manager', binaries.kubeControllerManager, controllerManagerArgs(kubeconfigPath, controllers, pki.files.caCert), dir);
  processes.push(controllerManager);
  await waitForControllers(controllerManager, timeout);
  if (options.workloads) {
    const scheduler = await ensureKubernetesServer('kube-scheduler', { log: options.log });
    processes.push(startProcess('kube-scheduler', scheduler, schedulerArgs(kubeconfigPath), dir));
  }

  const restart = async (server: RestartableServer, restartOptions: RestartOptions = {}): Promise<void> => {
    const index = processes.findIndex((child) => child.name === server && !child.hasExited());
    const running = processes[index];
    if (!running) throw new Error(`${server} is not running`);
    await running.stop(restartOptions.crash ? 0 : undefined);
    if (restartOptions.downMs) await sleep(restartOptions.downMs);
    options.log(`restarting ${server}`);
    await launch(specs[server], dir, processes, index);
  };
  const webhookClient = { caFile: pki.files.webhookClientCaCert, caKeyFile: pki.files.webhookClientCaKey, commonName: WEBHOOK_CLIENT_NAME };
  const clientCa = { certFile: pki.files.caCert, keyFile: pki.files.caKey };
  const pids = (): { name: string; pid: number }[] => processes.filter((child) => !child.hasExited()).map(({ name, pid }) => ({ name, pid }));
  return { kubeconfigPath, kubeConfig, serverUrl, etcdUrl, webhookClient, clientCa, restart, pids };
}

// kube-controller-manager runs without a serving port (--secure-port=0), so its log is the only
// readiness signal: both controllers started and the garbage collector's monitors synced. These are
// the controllers' own lines, the same from v1.30 to v1.37 but for the case of the last (v1.37 no
// longer logs "Started controller" at the default verbosity).
const CONTROLLERS_READY = [
  /"Starting namespace controller"/,
  /"Starting controller" .*controller="garbagecollector"/,
  /all resource monitors have synced/i,
];

async function waitForControllers(child: ManagedProcess, timeoutMs: number): Promise<void> {
  await waitUntilReady(
    child,
    'controllers started',
    async () => {
      const log = await readFile(child.logPath, 'utf8');
      return CONTROLLERS_READY.every((line) => line.test(log));
    },
    timeoutMs,
  );
}

async function stopAll(processes: readonly ManagedProcess[], dir: string): Promise<void> {
  // Clients first, storage last.
  for (const child of [...processes].reverse()) await child.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}
