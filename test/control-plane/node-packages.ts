import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The Debian packages a node runs on: the container runtime (containerd, its runc shim and ctr),
 * the OCI runtime, the CNI plugins (bridge, host-local, loopback), a static busybox (the only
 * binary of the pause and test images), the tools that build the node's namespaces and iptables
 * (the route to the `kubernetes` Service in the node's network namespace).
 */
export const NODE_PACKAGES = ['containerd', 'runc', 'containernetworking-plugins', 'busybox-static', 'iproute2', 'util-linux', 'iptables'] as const;

/** Where the node finds what those packages install. */
export const NODE_COMMANDS = {
  containerd: '/usr/bin/containerd',
  shim: '/usr/bin/containerd-shim-runc-v2',
  ctr: '/usr/bin/ctr',
  runc: '/usr/sbin/runc',
  busybox: '/bin/busybox',
  cniBinDir: '/usr/lib/cni',
  iptables: '/usr/sbin/iptables',
} as const;

const CNI_PLUGINS = ['bridge', 'host-local', 'loopback'] as const;

/** A set of Debian packages something on the node tier needs, and the files that prove them there. */
export interface DebianPackages {
  /** Whose packages, for messages: "the node's", "the image build's". */
  owner: string;
  packages: readonly string[];
  files: readonly string[];
}

const NODE: DebianPackages = {
  owner: "the node's",
  packages: NODE_PACKAGES,
  files: [
    NODE_COMMANDS.containerd,
    NODE_COMMANDS.shim,
    NODE_COMMANDS.ctr,
    NODE_COMMANDS.runc,
    NODE_COMMANDS.busybox,
    NODE_COMMANDS.iptables,
    ...CNI_PLUGINS.map((plugin) => `${NODE_COMMANDS.cniBinDir}/${plugin}`),
  ],
};

async function missingPackages(packages: readonly string[]): Promise<string[]> {
  // dpkg-query exits non-zero when one is unknown, but still prints the others.
  const { stdout } = await run('dpkg-query', ['-W', '-f', '${Package} ${db:Status-Status}\\n', ...packages]).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
  );
  const installed = new Set(
    stdout
      .split('\n')
      .map((line) => line.trim().split(' '))
      .filter(([, status]) => status === 'installed')
      .map(([name]) => name),
  );
  return packages.filter((name) => !installed.has(name));
}

async function missingFiles(files: readonly string[]): Promise<string[]> {
  const present = await Promise.all(files.map((file) => access(file, constants.X_OK).then(() => true, () => false)));
  return files.filter((_, i) => !present[i]);
}

async function aptGet(args: readonly string[]): Promise<void> {
  await run('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/**
 * Installs `wanted.packages` when some are missing (as root, with apt-get; `apt-get update` only
 * when the first attempt fails), saying which; fails with the list when it cannot.
 */
export async function ensureDebianPackages(wanted: DebianPackages, log: (line: string) => void): Promise<void> {
  const { owner, packages } = wanted;
  const missing = await missingPackages(packages);
  if (missing.length > 0) {
    const command = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
    if (process.getuid?.() !== 0) {
      throw new Error(`${owner} Debian packages ${missing.join(', ')} are missing; install them as root: ${command}`);
    }
    const started = Date.now();
    log(`installing ${owner} Debian packages ${missing.join(', ')} (${command})`);
    try {
      await aptGet(['install', '-y', '--no-install-recommends', ...missing]);
    } catch {
      log('apt-get install failed; running apt-get update and trying again');
      try {
        await aptGet(['update']);
        await aptGet(['install', '-y', '--no-install-recommends', ...missing]);
      } catch (error) {
        const stderr = (error as { stderr?: string }).stderr ?? String(error);
        throw new Error(`cannot install ${owner} Debian packages (${command}):\n${stderr.slice(-2_000)}`, { cause: error });
      }
    }
    log(`installed ${missing.join(', ')} in ${Math.round((Date.now() - started) / 1000)} s`);
  }
  const absent = await missingFiles(wanted.files);
  if (absent.length > 0) {
    throw new Error(`${owner} packages (${packages.join(', ')}) are installed but these files are missing: ${absent.join(', ')}`);
  }
}

/** Lua 5.1, the Lua of Argo CD's health checks (gopher-lua): the e2e runs integrations/argocd/health.lua under it. */
export const LUA_COMMAND = '/usr/bin/lua5.1';
const LUA: DebianPackages = { owner: "the Argo CD health check's", packages: ['lua5.1'], files: [LUA_COMMAND] };

/** Installs Lua 5.1 when it is missing; returns its path. */
export async function ensureLua(log: (line: string) => void): Promise<string> {
  await ensureDebianPackages(LUA, log);
  return LUA_COMMAND;
}

/** The node's packages (NODE_PACKAGES). */
export function ensureNodePackages(log: (line: string) => void): Promise<void> {
  return ensureDebianPackages(NODE, log);
}
