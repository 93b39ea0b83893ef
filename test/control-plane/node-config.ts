import { join } from 'node:path';
import { stringify } from 'yaml';
import { NODE_IMAGES } from './node-images.js';
import type { NodeNetwork } from './node-network.js';
import { NODE_COMMANDS } from './node-packages.js';

/** Where a node keeps everything: one temp dir, removed when it stops. */
export interface NodePaths {
  dir: string;
  /** Bind-mounted over /run in the node's mount namespace (containerd's shim sockets land here). */
  run: string;
  /** Bind-mounted over /var/log (the kubelet's /var/log/containers links). */
  varLog: string;
  /** One file per kernel setting the kubelet insists on, bind-mounted over /proc/sys in the node's mount namespace. */
  sysctl: string;
  containerdConfig: string;
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  runcRoot: string;
  cniConfDir: string;
  cniIpamDir: string;
  /** containerd's registry hosts (`<host:port>/hosts.toml`), read at each pull. */
  registryHosts: string;
  kubeletConfig: string;
  kubeletKubeconfig: string;
  kubeletRoot: string;
  kubeletCertDir: string;
  podLogs: string;
  resolvConf: string;
  images: string;
  /** Written by the namespace holder once its mounts are in place. */
  namespacesReady: string;
  holderScript: string;
}

export function nodePaths(dir: string): NodePaths {
  const containerd = join(dir, 'containerd');
  const kubelet = join(dir, 'kubelet');
  return {
    dir,
    run: join(dir, 'run'),
    varLog: join(dir, 'var-log'),
    sysctl: join(dir, 'sysctl'),
    containerdConfig: join(containerd, 'config.toml'),
    containerdRoot: join(containerd, 'root'),
    containerdState: join(containerd, 'state'),
    containerdSocket: join(containerd, 'containerd.sock'),
    runcRoot: join(containerd, 'runc'),
    cniConfDir: join(dir, 'cni', 'net.d'),
    registryHosts: join(containerd, 'certs.d'),
    cniIpamDir: join(dir, 'cni', 'ipam'),
    kubeletConfig: join(kubelet, 'config.yaml'),
    kubeletKubeconfig: join(kubelet, 'kubeconfig'),
    kubeletRoot: join(kubelet, 'root'),
    kubeletCertDir: join(kubelet, 'pki'),
    podLogs: join(dir, 'pod-logs'),
    resolvConf: join(dir, 'resolv.conf'),
    images: join(dir, 'images'),
    namespacesReady: join(dir, 'namespaces.ready'),
    holderScript: join(dir, 'namespaces.sh'),
  };
}

/**
 * The kernel settings the kubelet checks at start (and would otherwise write machine-wide:
 * kernel.panic_on_oops=1 among them). The node sees these values through bind mounts in its own
 * mount namespace, and the kubelet runs with protectKernelDefaults, so it never writes any.
 */
export const KUBELET_SYSCTLS: Record<string, number> = {
  'vm.overcommit_memory': 1,
  'vm.panic_on_oom': 0,
  'kernel.panic': 10,
  'kernel.panic_on_oops': 1,
  'kernel.keys.root_maxkeys': 1_000_000,
  'kernel.keys.root_maxbytes': 25_000_000,
};

/**
 * Runs as pid 1 of the node's pid namespace, inside its own mount and network namespaces. When it
 * ends, the kernel kills every process of the namespace (kubelet, containerd, shims, containers),
 * and the namespaces with their mounts, links and iptables rules go away with the last of them.
 * On SIGTERM (a stop, or the watchdog of processes.ts when the test process died) it first kills
 * them itself and removes the node's cgroups, which would otherwise outlive it.
 */
export function holderScript(paths: NodePaths, cgroupRoot: string): string {
  return [
    'set -eu',
    `mount --bind '${paths.run}' /run`,
    `mount --bind '${paths.varLog}' /var/log`,
    `for f in '${paths.sysctl}'/*; do mount --bind "$f" "/proc/sys/$(basename "$f" | tr . /)"; done`,
    'ip link set lo up',
    // Per network namespace: the node routes between its link and the pods' bridge.
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
    'others() { for p in /proc/[0-9]*; do [ "$p" = /proc/1 ] || return 0; done; return 1; }',
    'cleanup() {',
    '  trap - TERM INT HUP',
    '  kill -KILL -1 2>/dev/null || true',
    // Reap them (they are all children of pid 1 by now) until none is left, 10 s at most.
    '  i=0; while others && [ $i -lt 100 ]; do wait 2>/dev/null || true; sleep 0.1; i=$((i + 1)); done',
    `  for h in /sys/fs/cgroup/*/; do [ -d "\${h}${cgroupRoot}" ] && find "\${h}${cgroupRoot}" -depth -type d -exec rmdir {} + 2>/dev/null || true; done`,
    '  exit 0',
    '}',
    'trap cleanup TERM INT HUP',
    `touch '${paths.namespacesReady}'`,
    // `wait` also reaps the orphans the kernel hands to pid 1 (exited shims).
    'while :; do sleep 3600 & wait; done',
    '',
  ].join('\n');
}

export function containerdConfig(paths: NodePaths): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    'version = 2',
    `root = "${paths.containerdRoot}"`,
    `state = "${paths.containerdState}"`,
    '[grpc]',
    `  address = "${paths.containerdSocket}"`,
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = "${join(paths.dir, 'containerd', 'opt')}"`,
    `[${cri}]`,
    `  sandbox_image = "${NODE_IMAGES.pause}"`,
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    '  netns_mounts_under_state_dir = true',
    // The machine withholds CAP_SYS_RESOURCE: a score below containerd's own (the pause
    // container's -998) cannot be written, and runc would fail to start the sandbox.
    '  restrict_oom_score_adj = true',
    `  [${cri}.containerd]`,
    '    snapshotter = "overlayfs"',
    '    default_runtime_name = "runc"',
    `    [${cri}.containerd.runtimes.runc]`,
    '      runtime_type = "io.containerd.runc.v2"',
    `      [${cri}.containerd.runtimes.runc.options]`,
    '        SystemdCgroup = false',
    `        Root = "${paths.runcRoot}"`,
    `  [${cri}.registry]`,
    `    config_path = "${paths.registryHosts}"`,
    `  [${cri}.cni]`,
    `    bin_dir = "${NODE_COMMANDS.cniBinDir}"`,
    `    conf_dir = "${paths.cniConfDir}"`,
    '',
  ].join('\n');
}

/** How containerd reaches registry `host` (host:port, HTTPS): trusting `caFile`, for pulls only. */
export function registryHostsToml(host: string, caFile: string): string {
  return [`server = "https://${host}"`, `[host."https://${host}"]`, '  capabilities = ["pull", "resolve"]', `  ca = "${caFile}"`, ''].join('\n');
}

/** bridge + host-local in the node's network namespace; containerd adds loopback itself. No masquerading: nothing leaves the machine. */
export function cniConfig(paths: NodePaths, network: NodeNetwork): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'rd-node',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: network.podCidr }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: paths.cniIpamDir },
        },
      ],
    },
    null,
    2,
  );
}

export interface KubeletConfigInput {
  paths: NodePaths;
  network: NodeNetwork;
  /** The CA whose certificates the kubelet accepts from callers (the API server's kubelet client certificate). */
  clientCaFile: string;
  cgroupRoot: string;
  /**
   * The longest a crashed container waits to be restarted (1s-300s; the kubelet's default is
   * 300 s, doubling from 10 s): set through the alpha feature gate KubeletCrashLoopBackOffMax.
   */
  maxContainerRestartPeriod?: string;
}

/** The kubelet's configuration fields that bound its restart backoff, when asked to. */
function restartBackoff(maxContainerRestartPeriod: string | undefined): object {
  if (maxContainerRestartPeriod === undefined) return {};
  return { featureGates: { KubeletCrashLoopBackOffMax: true }, crashLoopBackOff: { maxContainerRestartPeriod } };
}

export function kubeletConfig({ paths, network, clientCaFile, cgroupRoot, maxContainerRestartPeriod }: KubeletConfigInput): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: clientCaFile } },
    authorization: { mode: 'Webhook' },
    address: network.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    // containerd 1.6 does not answer the RuntimeConfig call: the kubelet falls back to this.
    cgroupDriver: 'cgroupfs',
    cgroupRoot,
    // The machine mounts cgroup v1; the kubelet refuses it only when told to.
    failCgroupV1: false,
    failSwapOn: false,
    protectKernelDefaults: true,
    makeIPTablesUtilChains: false,
    containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
    podLogsDir: paths.podLogs,
    resolvConf: paths.resolvConf,
    volumePluginDir: join(paths.dir, 'kubelet', 'volume-plugins'),
    // A test machine's disk may be fuller than a production node's: never evict the tests' pods.
    evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // The default (Watch) gives its per-object watch one second to sync before a mount fails with
    // "failed to sync secret cache" and is retried: with 50 pods starting on 2 cores that second
    // is the API server's load, not whether the object exists. Get reads it at mount time, so a
    // FailedMount here means the Secret or ConfigMap was not there.
    configMapAndSecretChangeDetectionStrategy: 'Get',
    ...restartBackoff(maxContainerRestartPeriod),
  });
}

const b64 = (pem: string): string => Buffer.from(pem).toString('base64');

/** The kubelet reaches the API server through the node's relay on the host side of its link. */
export function kubeletKubeconfig(serverUrl: string, caCert: string, client: { cert: string; key: string }): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    // The API server's certificate names localhost and 127.0.0.1, not the relay's address.
    clusters: [{ name: 'local', cluster: { server: serverUrl, 'certificate-authority-data': b64(caCert), 'tls-server-name': 'localhost' } }],
    users: [{ name: 'node', user: { 'client-certificate-data': b64(client.cert), 'client-key-data': b64(client.key) } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: 'node' } }],
    'current-context': 'local',
  });
}
