import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ensureBinaries, type BinaryPaths } from './binaries.js';
import { registerTeardown } from './exit-hooks.js';
import { writeKubeconfig } from './kubeconfig.js';
import { freePorts, httpGet, waitUntilReady, type TlsClient } from './network.js';
import { writeControlPlanePki } from './pki.js';
import { startProcess, type ManagedProcess } from './processes.js';
import { apiserverArgs, controllerManagerArgs, etcdArgs, type Ports } from './server-args.js';

export interface ControlPlane {
  kubeconfigPath: string;
  /** Admin (system:masters) client configuration. */
  kubeConfig: KubeConfig;
  serverUrl: string;
  /** Temp dir with certificates, kubeconfig, etcd data and one `<server>.log` per process. */
  dir: string;
  stop(): Promise<void>;
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
}

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
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(binaries, { ...options, log });
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
  const serverUrl = `https://127.0.0.1:${apiserver}`;

  const etcd = startProcess('etcd', binaries.etcd, etcdArgs(dir, ports), dir);
  processes.push(etcd);
  await waitUntilReady(etcd, 'healthy', async () => (await httpGet(`http://127.0.0.1:${etcdClient}/health`))?.body.includes('"true"') ?? false, timeout);

  const kubeApiserver = startProcess('kube-apiserver', binaries.kubeApiserver, apiserverArgs(dir, ports, pki), dir);
  processes.push(kubeApiserver);
  const tls: TlsClient = { ca: pki.caCert, cert: pki.admin.cert, key: pki.admin.key };
  await waitUntilReady(kubeApiserver, '/readyz', async () => (await httpGet(`${serverUrl}/readyz`, tls))?.status === 200, timeout);
  await waitUntilReady(
    kubeApiserver,
    'namespace default',
    async () => (await httpGet(`${serverUrl}/api/v1/namespaces/default`, tls))?.status === 200,
    timeout,
  );

  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeKubeconfig(kubeconfigPath, serverUrl, pki.caCert, pki.admin);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(await readFile(kubeconfigPath, 'utf8'));
  await options.beforeControllerManager?.(kubeConfig);

  const controllerManager = startProcess('kube-controller-manager', binaries.kubeControllerManager, controllerManagerArgs(kubeconfigPath), dir);
  processes.push(controllerManager);
  await waitForControllers(controllerManager, timeout);
  return { kubeconfigPath, kubeConfig, serverUrl };
}

// kube-controller-manager runs without a serving port (--secure-port=0), so its log is the only
// readiness signal: both controllers started and the garbage collector's monitors synced.
const CONTROLLERS_READY = [
  /"Started controller" controller="namespace-controller"/,
  /"Started controller" controller="garbage-collector-controller"/,
  /all resource monitors have synced/,
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
