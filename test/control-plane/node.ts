import { execFile, execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, readdir, readlink, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CoreV1Api, RbacAuthorizationV1Api, type V1Node } from '@kubernetes/client-node';
import { ensureKubernetesServer } from './binaries.js';
import type { ControlPlane } from './control-plane.js';
import { registerTeardown } from './exit-hooks.js';
import { waitUntilReady } from './network.js';
import {
  KUBELET_SYSCTLS,
  cniConfig,
  containerdConfig,
  holderScript,
  kubeletConfig,
  kubeletKubeconfig,
  nodePaths,
  registryHostsToml,
  type NodePaths,
} from './node-config.js';
import { DEFAULT_NODE_IMAGES, NODE_IMAGES, writeNodeImages, type NodeImage } from './node-images.js';
import {
  chooseNodeNetwork,
  connectNodeNetwork,
  deleteLink,
  linkExists,
  routeKubernetesService,
  startRelay,
  type NodeNetwork,
  type Relay,
} from './node-network.js';
import { NODE_COMMANDS, ensureNodePackages } from './node-packages.js';
import { KUBERNETES_SERVICE_IP, createCertificateAuthority, issueClientCert } from './pki.js';
import { startProcess, type ManagedProcess } from './processes.js';

const run = promisify(execFile);

/**
 * What the API server needs before it starts so that it can reach nodes' kubelets (logs, exec):
 * a client certificate (group system:masters) from a CA of the node tier's own, which every
 * kubelet accepts, and the flags that point it at the nodes' InternalIP.
 */
export interface NodeCredentials {
  /** Append to StartControlPlaneOptions.apiserverFlags. */
  apiserverFlags: string[];
  /**
   * StartControlPlaneOptions.extraControllers: the EndpointSlice controller, so that a Service's
   * endpoints follow its pods and the API server's endpoint routing finds them.
   */
  extraControllers: string[];
  /** The CA kubelets accept callers' certificates from. */
  kubeletClientCaFile: string;
  dir: string;
  remove(): Promise<void>;
}

export async function createNodeCredentials(): Promise<NodeCredentials> {
  const dir = await mkdtemp(join(tmpdir(), 'rd-node-pki-'));
  const unregister = registerTeardown({ stop: () => remove(), killNow: () => rmSync(dir, { recursive: true, force: true }) });
  const remove = async (): Promise<void> => {
    await rm(dir, { recursive: true, force: true });
    unregister();
  };
  try {
    const ca = await createCertificateAuthority('resource-distributor-test-kubelet-client-ca');
    const client = await issueClientCert(ca, 'kube-apiserver-kubelet-client', ['system:masters']);
    const files = { ca: join(dir, 'kubelet-client-ca.crt'), cert: join(dir, 'kubelet-client.crt'), key: join(dir, 'kubelet-client.key') };
    await Promise.all([
      writeFile(files.ca, ca.cert, { mode: 0o600 }),
      writeFile(files.cert, client.cert, { mode: 0o600 }),
      writeFile(files.key, client.key, { mode: 0o600 }),
    ]);
    return {
      apiserverFlags: [
        `--kubelet-client-certificate=${files.cert}`,
        `--kubelet-client-key=${files.key}`,
        // A node's hostname resolves nowhere; its InternalIP is the end of its link.
        '--kubelet-preferred-address-types=InternalIP',
        // Webhooks (and aggregated APIs) behind a Service are called on a ready endpoint's pod IP,
        // which the machine routes into the node; ClusterIPs would need kube-proxy rules on the machine.
        '--enable-aggregator-routing=true',
      ],
      extraControllers: ['endpointslice-controller'],
      kubeletClientCaFile: files.ca,
      dir,
      remove,
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

export interface StartNodeOptions {
  /** Node name (default `rd-node`); its kubelet authenticates as `system:node:<name>`. */
  name?: string;
  log?: (line: string) => void;
  /** Skip the cache lookup (and build) and use this kubelet. */
  kubelet?: string;
  /** How long the node may take to register Ready; default 120 s. */
  readyTimeoutMs?: number;
  /** Images to import besides the pause and busybox ones (`nodejs`). */
  images?: readonly NodeImage[];
  /** The kubelet's longest restart backoff for crashed containers (KubeletConfigInput.maxContainerRestartPeriod); default the kubelet's (5 min). */
  maxContainerRestartPeriod?: string;
}

/** What a stopped node must not leave behind; checked by `leftovers()`. */
export interface NodeTrace {
  dir: string;
  link?: string;
  /** `mnt:[inode]` of the node's mount namespace. */
  mountNamespace?: string;
  cgroupRoot?: string;
}

export interface LocalNode {
  name: string;
  dir: string;
  network: NodeNetwork;
  /** Names of the images present on the node (use `imagePullPolicy: Never`). */
  images: Partial<Record<NodeImage, string>>;
  /** containerd's socket, for `ctr`/CRI calls made inside the node's namespaces (see `exec`). */
  containerdSocket: string;
  /** The kubelet's pod log folder (`<namespace>_<pod>_<uid>/<container>/<restart count>.log`), on the machine. */
  podLogsDir: string;
  /**
   * Sends pods' connections to the `kubernetes` Service to `url` (`https://<host ip>:<port>`, the
   * machine end of the link) instead of the node's relay, from now on (a DNAT rule ahead of the
   * first); the kubelet keeps its own way to the API server.
   */
  routeKubernetesServiceTo(url: string): Promise<void>;
  /** Imports an image archive (OCI or docker) into containerd's CRI namespace: its image is then present for pods. */
  importImage(archive: string): Promise<void>;
  /** Lets the node's containerd pull from registry `host` (host:port, HTTPS with a certificate of `caCert`). */
  trustRegistry(host: string, caCert: string): Promise<void>;
  /** Runs a command inside the node's mount, network and pid namespaces; resolves to its stdout. */
  exec(command: string, args: readonly string[]): Promise<string>;
  /**
   * Stops the kubelet, containerd and every container, removes the node's namespaces, link,
   * cgroups and files and its Node object; rejects, naming them, if any of those is left afterwards.
   */
  stop(): Promise<void>;
  /** What is left of this node on the machine (empty once stopped cleanly). */
  leftovers(): Promise<string[]>;
  /** What `leftovers()` looks for, for a check made from another process (see nodeLeftovers). */
  trace: NodeTrace;
}

const CGROUP_MOUNT = '/sys/fs/cgroup';
const GONE_TIMEOUT_MS = 15_000;

const defaultLog = (line: string): void => console.error(`[node] ${line}`);

/** The namespaces of the holder process (pid 1 of the node's pid namespace), for nsenter. */
const enterNode = (holderPid: number): string[] => ['-t', String(holderPid), '-m', '-n', '-p', '--'];

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The cgroup v1 hierarchies mounted here (cpu, memory, pids, ..., name=systemd), and the v2 one if any. */
async function cgroupHierarchies(): Promise<{ v1: string[]; all: string[] }> {
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  const all = mounts
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields[4]?.startsWith(`${CGROUP_MOUNT}/`) && /^cgroup2?$/.test(fields[fields.indexOf('-') + 1] ?? ''))
    .map((fields) => ({ path: fields[4] ?? '', v2: fields[fields.indexOf('-') + 1] === 'cgroup2' }));
  return { v1: all.filter((h) => !h.v2).map((h) => h.path), all: all.map((h) => h.path) };
}

/** The kubelet requires its cgroup root to exist in every hierarchy; cpuset needs cpus and mems before it takes tasks. */
async function createCgroupRoot(name: string): Promise<void> {
  for (const hierarchy of (await cgroupHierarchies()).v1) {
    const dir = join(hierarchy, name);
    await mkdir(dir, { recursive: true });
    if (hierarchy.endsWith('/cpuset')) {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) await writeFile(join(dir, file), await readFile(join(hierarchy, file), 'utf8'));
    }
  }
}

/** Removes `dir` and every cgroup below it, deepest first (a cgroup is removed with rmdir once empty). */
async function removeCgroupTree(dir: string): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) if (entry.isDirectory()) await removeCgroupTree(join(dir, entry.name));
  await rmdir(dir);
}

/** Retries `removeCgroupTree`: EBUSY while the last tasks of a killed container are still exiting. */
async function removeCgroupTreeWhenEmpty(dir: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      await removeCgroupTree(dir);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
}

async function removeCgroupRoot(name: string): Promise<void> {
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  for (const hierarchy of (await cgroupHierarchies()).all) await removeCgroupTreeWhenEmpty(join(hierarchy, name), deadline);
}

/** Pids of processes whose mount namespace is `mountNamespace` or whose command line names `dir`. */
async function processesOf(trace: NodeTrace): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
    if (Number(pid) === process.pid) continue;
    const [ns, cmdline] = await Promise.all([
      readlink(`/proc/${pid}/ns/mnt`).catch(() => ''),
      readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''),
    ]);
    if ((trace.mountNamespace && ns === trace.mountNamespace) || cmdline.includes(trace.dir)) {
      found.push(`process ${pid} (${cmdline.split('\0').slice(0, 3).join(' ').slice(0, 120)})`);
    }
  }
  return found;
}

/** What is left on the machine of the node `trace` describes. */
export async function nodeLeftovers(trace: NodeTrace): Promise<string[]> {
  const left = await processesOf(trace);
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  for (const line of mounts.split('\n')) if (line.includes(trace.dir)) left.push(`mount ${line.split(' ')[4] ?? line}`);
  if (trace.link && (await linkExists(trace.link))) left.push(`network link ${trace.link}`);
  if (trace.cgroupRoot) {
    for (const hierarchy of (await cgroupHierarchies()).all) {
      if (await exists(join(hierarchy, trace.cgroupRoot))) left.push(`cgroup ${join(hierarchy, trace.cgroupRoot)}`);
    }
  }
  if (await exists(trace.dir)) left.push(`directory ${trace.dir}`);
  return left;
}

/** Polls `check` until true (resolves true) or until `timeoutMs` passed (resolves false). */
async function waitUntil(check: () => Promise<boolean>, timeoutMs = GONE_TIMEOUT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

function isReady(node: V1Node | undefined): boolean {
  return node?.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false;
}

async function prepareFiles(paths: NodePaths, cgroupRoot: string): Promise<void> {
  for (const dir of [paths.run, paths.varLog, paths.sysctl, paths.cniConfDir, paths.cniIpamDir, paths.registryHosts, paths.containerdRoot, paths.containerdState, paths.kubeletRoot, paths.kubeletCertDir, paths.podLogs]) {
    await mkdir(dir, { recursive: true });
  }
  await Promise.all([
    ...Object.entries(KUBELET_SYSCTLS).map(([name, value]) => writeFile(join(paths.sysctl, name), `${value}\n`)),
    writeFile(paths.holderScript, holderScript(paths, cgroupRoot)),
    // Pods resolve names against their own loopback, never a resolver of the machine's.
    writeFile(paths.resolvConf, 'nameserver 127.0.0.1\n'),
    writeFile(paths.containerdConfig, containerdConfig(paths)),
  ]);
}

/**
 * The pid of pid 1 of the node's pid namespace: the child unshare forked (its other child is the
 * watchdog of processes.ts, in our namespace), known by the second pid in its NSpid line.
 */
async function namespacePid1(unsharePid: number): Promise<number> {
  const children = await readFile(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8');
  for (const child of children.trim().split(' ').filter(Boolean)) {
    const status = await readFile(`/proc/${child}/status`, 'utf8').catch(() => '');
    if (/^NSpid:\s+\d+\s+1$/m.test(status)) return Number(child);
  }
  throw new Error(`the node's namespace holder (pid ${unsharePid}) has no child in a pid namespace of its own`);
}

/** What a node needs of its control plane (a ControlPlane, or one rebuilt from its kubeconfig in a test worker). */
export type NodePlane = Pick<ControlPlane, 'serverUrl' | 'kubeConfig' | 'clientCa'>;

/**
 * Starts a node for `plane`: its own pid, mount and network namespaces (made by `unshare`, held by
 * a shell that is pid 1 there), linked to the machine by a veth pair; containerd (Debian's, own
 * config, root, state and socket in the node's temp dir) with the node images imported; and the
 * kubelet (built from the same Kubernetes module as the API server) registered as `system:node:<name>`
 * with the ClusterRole system:node. Resolves once the node is Ready. `plane` must have been
 * started with `credentials.apiserverFlags`.
 */
export async function startNode(plane: NodePlane, credentials: Pick<NodeCredentials, 'kubeletClientCaFile'>, options: StartNodeOptions = {}): Promise<LocalNode> {
  const log = options.log ?? defaultLog;
  const name = options.name ?? 'rd-node';
  const started = Date.now();
  if (process.getuid?.() !== 0) throw new Error('a node needs root (namespaces, mounts, cgroups, network links)');
  await ensureNodePackages(log);
  const kubelet = options.kubelet ?? (await ensureKubernetesServer('kubelet', { log }));

  const dir = await mkdtemp(join(tmpdir(), 'rd-node-'));
  const running = new RunningNode(name, dir);
  try {
    const images = [...new Set([...DEFAULT_NODE_IMAGES, ...(options.images ?? [])])];
    const node = await boot(running, plane, credentials, { kubelet, images, readyTimeoutMs: options.readyTimeoutMs ?? 120_000, maxContainerRestartPeriod: options.maxContainerRestartPeriod });
    log(`node ${name} Ready at ${node.network.nodeIp} (pods ${node.network.podCidr}) in ${((Date.now() - started) / 1000).toFixed(1)} s (dir ${dir})`);
    return node;
  } catch (error) {
    const logs = await running.logTails();
    await running.stop().catch((stopError: unknown) => log(`while stopping the node after a failed start: ${String(stopError)}`));
    if (error instanceof Error && !/last lines of its log/.test(error.message)) error.message += `\n${logs}`;
    throw error;
  }
}

/** The processes, relay and traces of one node: stopped in one go from whatever state a start reached. */
class RunningNode {
  readonly trace: NodeTrace;
  readonly paths: NodePaths;
  /** unshare, whose child is pid 1 of the node's pid namespace. */
  holder: ManagedProcess | undefined;
  readonly processes: ManagedProcess[] = [];
  relay: Relay | undefined;
  private stopping: Promise<void> | undefined;
  private readonly unregister: () => void;

  constructor(
    readonly name: string,
    readonly dir: string,
  ) {
    this.paths = nodePaths(dir);
    this.trace = { dir, cgroupRoot: `rd-node-${dir.slice(-6)}` };
    this.unregister = registerTeardown({ stop: () => this.stop(), killNow: () => this.killNow() });
  }

  stop(): Promise<void> {
    this.stopping ??= this.stopAll().finally(() => this.unregister());
    return this.stopping;
  }

  async logTails(): Promise<string> {
    const children = [this.holder, ...this.processes].filter((child) => child !== undefined);
    const tails = await Promise.all(children.map(async (child) => `--- ${child.name} ---\n${await child.tail(2_000)}`));
    return tails.join('\n');
  }

  private async stopAll(): Promise<void> {
    const { trace } = this;
    // Politely first; then the end of pid 1 takes every process of the namespace with it.
    for (const child of [...this.processes].reverse()) await child.stop();
    await this.holder?.stop();
    await this.relay?.close();
    if (trace.mountNamespace) await waitUntil(async () => (await processesOf(trace)).length === 0);
    const link = trace.link;
    if (link && !(await waitUntil(async () => !(await linkExists(link))))) await deleteLink(link);
    if (trace.cgroupRoot) await removeCgroupRoot(trace.cgroupRoot);
    await rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
    const left = await nodeLeftovers(trace);
    if (left.length > 0) throw new Error(`node ${this.name} left behind: ${left.join('; ')}`);
  }

  /** From the `exit` hook: synchronous only. */
  private killNow(): void {
    for (const child of this.processes) child.killNow();
    // SIGTERM, not SIGKILL: pid 1 of the namespace then kills every process there and removes the
    // node's cgroups on its own, after this process is gone (unshare ignores SIGTERM while it waits;
    // SIGKILL to it would kill pid 1 at once, through --kill-child, and leave the cgroups behind).
    this.holder?.killNow('SIGTERM');
    if (this.trace.link) {
      try {
        execFileSync('ip', ['link', 'delete', 'dev', this.trace.link], { stdio: 'ignore' });
      } catch {
        // Gone with the namespace already.
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts the namespaces; resolves to pid 1 of the node's pid namespace. */
async function startNamespaces(running: RunningNode): Promise<number> {
  const { paths } = running;
  const unshare = startProcess(
    'node-namespaces',
    'unshare',
    ['--pid', '--fork', '--kill-child', '--mount-proc', '--mount', '--net', '--propagation', 'private', '--', 'sh', paths.holderScript],
    running.dir,
  );
  running.holder = unshare;
  await waitUntilReady(unshare, 'namespaces ready', () => exists(paths.namespacesReady), 10_000);
  const pid1 = await namespacePid1(unshare.pid);
  running.trace.mountNamespace = await readlink(`/proc/${pid1}/ns/mnt`);
  return pid1;
}

/** Starts containerd in the node and imports the node images into its CRI namespace (k8s.io). */
async function startContainerd(running: RunningNode, pid1: number, images: Promise<Partial<Record<NodeImage, string>>>): Promise<void> {
  const { paths } = running;
  const inNode = enterNode(pid1);
  const containerd = startProcess('containerd', 'nsenter', [...inNode, NODE_COMMANDS.containerd, '--config', paths.containerdConfig], running.dir);
  running.processes.push(containerd);
  const ctr = ctrIn(pid1, paths);
  await waitUntilReady(containerd, 'its socket answers', () => ctr(['version']).then(() => true, () => false), 30_000);
  for (const archive of Object.values(await images)) if (archive) await ctr(['images', 'import', archive]);
}

/** `ctr` inside the node, on its containerd's socket and CRI namespace (k8s.io). */
function ctrIn(pid1: number, paths: NodePaths): (args: readonly string[]) => Promise<{ stdout: string }> {
  return (args) => run('nsenter', [...enterNode(pid1), NODE_COMMANDS.ctr, '--address', paths.containerdSocket, '--namespace', 'k8s.io', ...args]);
}

/** The kubelet's credentials (a client certificate of the plane's CA for system:node:<name>), its RBAC grant, and the relay to the API server. */
async function prepareKubeletAccess(running: RunningNode, plane: NodePlane, network: NodeNetwork): Promise<void> {
  running.relay = await startRelay(network.hostIp, Number(new URL(plane.serverUrl).port));
  const [caCert, caKey] = await Promise.all([readFile(plane.clientCa.certFile, 'utf8'), readFile(plane.clientCa.keyFile, 'utf8')]);
  const identity = await issueClientCert({ cert: caCert, key: caKey }, `system:node:${running.name}`, ['system:nodes']);
  await writeFile(running.paths.kubeletKubeconfig, kubeletKubeconfig(running.relay.url, caCert, identity), { mode: 0o600 });
  await bindNodeRole(plane, running.name);
}

async function boot(
  running: RunningNode,
  plane: NodePlane,
  credentials: Pick<NodeCredentials, 'kubeletClientCaFile'>,
  { kubelet, images: wanted, readyTimeoutMs, maxContainerRestartPeriod }: { kubelet: string; images: readonly NodeImage[]; readyTimeoutMs: number; maxContainerRestartPeriod?: string },
): Promise<LocalNode> {
  const { paths, trace, name } = running;
  await prepareFiles(paths, trace.cgroupRoot ?? '');
  const images = writeNodeImages(paths.images, wanted);
  images.catch(() => undefined);

  const pid1 = await startNamespaces(running);
  const network = await connectWithRetry(pid1, trace);
  await writeFile(join(paths.cniConfDir, '10-rd-node.conflist'), cniConfig(paths, network));
  await startContainerd(running, pid1, images);
  await prepareKubeletAccess(running, plane, network);
  await routeKubernetesService(enterNode(pid1), NODE_COMMANDS.iptables, KUBERNETES_SERVICE_IP, running.relay?.url ?? '');

  const cgroupRoot = trace.cgroupRoot ?? '';
  await createCgroupRoot(cgroupRoot);
  await writeFile(paths.kubeletConfig, kubeletConfig({ paths, network, clientCaFile: credentials.kubeletClientCaFile, cgroupRoot: `/${cgroupRoot}`, maxContainerRestartPeriod }));
  const inNode = enterNode(pid1);
  const kubeletArgs = [
    `--config=${paths.kubeletConfig}`,
    `--kubeconfig=${paths.kubeletKubeconfig}`,
    `--root-dir=${paths.kubeletRoot}`,
    `--cert-dir=${paths.kubeletCertDir}`,
    `--hostname-override=${name}`,
    `--node-ip=${network.nodeIp}`,
  ];
  const kubeletProcess = startProcess('kubelet', 'nsenter', [...inNode, kubelet, ...kubeletArgs], running.dir);
  running.processes.push(kubeletProcess);
  const core = plane.kubeConfig.makeApiClient(CoreV1Api);
  const ready = async (): Promise<boolean> => isReady(await core.readNode({ name }).catch(() => undefined));
  await waitUntilReady(kubeletProcess, `node ${name} Ready`, ready, readyTimeoutMs);
  return {
    name,
    dir: running.dir,
    network,
    images: Object.fromEntries(wanted.map((image) => [image, NODE_IMAGES[image]])),
    containerdSocket: paths.containerdSocket,
    podLogsDir: paths.podLogs,
    routeKubernetesServiceTo: (url) => routeKubernetesService(inNode, NODE_COMMANDS.iptables, KUBERNETES_SERVICE_IP, url, { first: true }),
    importImage: async (archive) => {
      await ctrIn(pid1, paths)(['images', 'import', archive]);
    },
    trustRegistry: async (host, caCert) => {
      const dir = join(paths.registryHosts, host);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'ca.crt'), caCert);
      await writeFile(join(dir, 'hosts.toml'), registryHostsToml(host, join(dir, 'ca.crt')));
    },
    exec: async (command, args) => (await run('nsenter', [...inNode, command, ...args])).stdout,
    stop: async () => {
      await running.stop();
      // A stopped node's registration would still read Ready for a while: the scheduler must not
      // place pods on it. The plane may be gone already (its own stop removes everything).
      await core.deleteNode({ name }).catch(() => undefined);
    },
    leftovers: () => nodeLeftovers(trace),
    trace,
  };
}

/** Another node may pick the same free index at the same moment; its `ip link add` then fails and the next free index is tried. */
async function connectWithRetry(pid1: number, trace: NodeTrace): Promise<NodeNetwork> {
  for (let attempt = 1; ; attempt++) {
    const network = await chooseNodeNetwork();
    try {
      await connectNodeNetwork(network, pid1);
      trace.link = network.link;
      return network;
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

/** The RBAC grants of a kubelet (the API server runs RBAC only, no Node authorizer). */
async function bindNodeRole(plane: NodePlane, name: string): Promise<void> {
  const rbac = plane.kubeConfig.makeApiClient(RbacAuthorizationV1Api);
  const bindingName = `rd-node:${name}`;
  const body = {
    metadata: { name: bindingName },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `system:node:${name}` }],
  };
  await rbac.deleteClusterRoleBinding({ name: bindingName }).catch(() => undefined);
  await rbac.createClusterRoleBinding({ body });
}
