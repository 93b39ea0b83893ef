import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, readdir, rename, rm, constants } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { acquireLock } from './build-lock.js';

/** The Go wrapper module that pins Kubernetes and etcd (go.mod, go.sum, tools.go). */
export const MODULE_DIR = dirname(fileURLToPath(import.meta.url));

/**
 * The wrapper modules of the version matrix (`npm run test:k8s-versions`), one per Kubernetes
 * minor: versions/v<major>.<minor>/, written by versions/new-version.sh.
 */
export const VERSIONS_DIR = join(MODULE_DIR, 'versions');

/** What selects a wrapper module of VERSIONS_DIR instead of this folder's, e.g. `1.30`. */
export const KUBERNETES_VERSION_VARIABLE = 'RD_KUBERNETES_VERSION';

/**
 * The wrapper module that pins the Kubernetes servers, etcd and kubectl of this run: this folder's,
 * or the one of VERSIONS_DIR that RD_KUBERNETES_VERSION (a minor, `1.30`) names. Tools pinned by
 * their own modules (helm, promtool, ...) do not change with it.
 */
export async function kubernetesModuleDir(selected = process.env[KUBERNETES_VERSION_VARIABLE]): Promise<string> {
  if (!selected) return MODULE_DIR;
  if (!/^1\.\d{1,3}$/.test(selected)) throw new Error(`${KUBERNETES_VERSION_VARIABLE}=${selected} is not a Kubernetes minor such as 1.30`);
  const dir = join(VERSIONS_DIR, `v${selected}`);
  try {
    await access(join(dir, 'go.mod'), constants.R_OK);
  } catch {
    const known = (await readdir(VERSIONS_DIR)).filter((name) => /^v1\.\d+$/.test(name)).map((name) => name.slice(1));
    throw new Error(`no wrapper module for Kubernetes ${selected} in ${VERSIONS_DIR} (have: ${known.join(', ') || 'none'}; add one with new-version.sh)`);
  }
  return dir;
}

export interface BinaryPaths {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
}

export interface EnsureBinariesOptions {
  log?: (line: string) => void;
}

interface BinarySpec {
  /** File name in binaryCacheDir(). */
  file: string;
  /** Go package path, built from `moduleDir`. */
  pkg: string;
  /** The wrapper module that pins it; default MODULE_DIR. */
  moduleDir?: string;
  /** Built per selected Kubernetes version (the servers, etcd, kubectl) rather than once per default. */
  perKubernetesVersion?: boolean;
  /** Linker flags (-ldflags). */
  ldflags?: string;
}

/**
 * What Kubernetes' own build stamps into its binaries: without it they report the version
 * `v0.0.0-master+$Format:%H$`, which kubectl and client libraries cannot parse.
 */
function kubernetesLdflags(version: string): string {
  const [major = '', minor = ''] = version.replace(/^v/, '').split('.');
  const values = { gitVersion: version, gitMajor: major, gitMinor: minor, gitTreeState: 'clean' };
  return ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']
    .flatMap((pkg) => Object.entries(values).map(([key, value]) => `-X ${pkg}.${key}=${value}`))
    .join(' ');
}

/** A binary of the selected Kubernetes module: its file name carries the version it is stamped with. */
async function kubernetesBinary(name: string): Promise<BinarySpec> {
  const moduleDir = await kubernetesModuleDir();
  const version = await kubernetesVersion(join(moduleDir, 'go.mod'));
  return { file: `${name}-${version}`, pkg: `k8s.io/kubernetes/cmd/${name}`, ldflags: kubernetesLdflags(version), moduleDir, perKubernetesVersion: true };
}

async function serverSpecs(): Promise<(BinarySpec & { key: keyof BinaryPaths })[]> {
  const moduleDir = await kubernetesModuleDir();
  return [
    { key: 'etcd', file: 'etcd', pkg: 'go.etcd.io/etcd/server/v3', moduleDir, perKubernetesVersion: true },
    { key: 'kubeApiserver', ...(await kubernetesBinary('kube-apiserver')) },
    { key: 'kubeControllerManager', ...(await kubernetesBinary('kube-controller-manager')) },
  ];
}

const PROGRESS_EVERY_MS = 30_000;
const STDERR_TAIL_CHARS = 4_000;

// The toolchain that is installed is the one that builds; never download another behind our back.
const goEnv = (): NodeJS.ProcessEnv => ({ ...process.env, GOTOOLCHAIN: 'local' });

/** The version a wrapper go.mod requires of `module`. */
async function requiredVersion(goModPath: string, module: string): Promise<string> {
  const goMod = await readFile(goModPath, 'utf8');
  const escaped = module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!match?.[1]) throw new Error(`no ${module} requirement in ${goModPath}`);
  return match[1];
}

export function kubernetesVersion(goModPath = join(MODULE_DIR, 'go.mod')): Promise<string> {
  return requiredVersion(goModPath, 'k8s.io/kubernetes');
}

export async function goVersion(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('go', ['env', 'GOVERSION'], { cwd: MODULE_DIR, env: goEnv() });
    return stdout.trim();
  } catch (error) {
    throw new Error(`cannot run "go env GOVERSION" (is Go installed and on PATH?): ${String(error)}`, { cause: error });
  }
}

/**
 * `${XDG_CACHE_HOME:-~/.cache}/resource-distributor/k8s-<version>-<go version>/bin`, for the
 * Kubernetes version of `moduleDir` (by default this folder's, where every tool goes).
 */
export async function binaryCacheDir(moduleDir = MODULE_DIR): Promise<string> {
  const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const [k8s, go] = await Promise.all([kubernetesVersion(join(moduleDir, 'go.mod')), goVersion()]);
  return join(cacheHome, 'resource-distributor', `k8s-${k8s}-${go}`, 'bin');
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function missingBinaries(binDir: string, specs: readonly BinarySpec[]): Promise<BinarySpec[]> {
  const present = await Promise.all(specs.map((spec) => exists(join(binDir, spec.file))));
  return specs.filter((_, i) => !present[i]);
}

function pathsIn(binDir: string, specs: readonly (BinarySpec & { key: keyof BinaryPaths })[]): BinaryPaths {
  const path = (key: keyof BinaryPaths): string => join(binDir, specs.find((spec) => spec.key === key)?.file ?? key);
  return { etcd: path('etcd'), kubeApiserver: path('kubeApiserver'), kubeControllerManager: path('kubeControllerManager') };
}

function runGoBuild(spec: BinarySpec, output: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const flags = spec.ldflags === undefined ? [] : ['-ldflags', spec.ldflags];
  const child = spawn('go', ['build', '-buildvcs=false', ...flags, '-o', output, spec.pkg], {
    cwd: spec.moduleDir ?? MODULE_DIR,
    env: goEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const ticker = setInterval(() => {
    log(`still building ${spec.file}: ${Math.round((Date.now() - started) / 1000)} s`);
  }, PROGRESS_EVERY_MS);
  return new Promise<void>((resolve, reject) => {
    child.on('error', (error) => {
      clearInterval(ticker);
      reject(new Error(`cannot start go build for ${spec.file}: ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      clearInterval(ticker);
      if (code === 0) {
        log(`built ${spec.file} in ${Math.round((Date.now() - started) / 1000)} s`);
        resolve();
      } else {
        reject(new Error(`go build ${spec.pkg} failed (${signal ?? `exit ${String(code)}`}):\n${stderr}`));
      }
    });
  });
}

async function build(spec: BinarySpec, binDir: string, log: (line: string) => void): Promise<void> {
  const final = join(binDir, spec.file);
  // Built under a temporary name and renamed, so a reader never sees a half-written binary.
  const temporary = join(binDir, `.${spec.file}.tmp-${process.pid}`);
  log(`building ${spec.file} from ${spec.pkg} (a cold build takes several minutes)`);
  try {
    await runGoBuild(spec, temporary, log);
    await rename(temporary, final);
  } finally {
    await rm(temporary, { force: true });
  }
}

const defaultLog = (line: string): void => console.error(`[control-plane] ${line}`);

/** Builds the missing ones of `specs` into binaryCacheDir() under `lockName`; returns that folder. */
async function ensureBuilt(specs: readonly BinarySpec[], lockName: string, log: (line: string) => void): Promise<string> {
  // One folder per call: the specs of a call are all per Kubernetes version, or none is.
  const binDir = await binaryCacheDir(specs.some((spec) => spec.perKubernetesVersion) ? await kubernetesModuleDir() : MODULE_DIR);
  if ((await missingBinaries(binDir, specs)).length === 0) return binDir;

  await mkdir(binDir, { recursive: true });
  const release = await acquireLock(join(binDir, lockName), log);
  try {
    // Another run may have built them while this one waited for the lock.
    for (const spec of await missingBinaries(binDir, specs)) await build(spec, binDir, log);
  } finally {
    await release();
  }
  return binDir;
}

/**
 * Returns the paths of etcd, kube-apiserver and kube-controller-manager, building the missing ones
 * from the selected Go module (kubernetesModuleDir()) into a per-version cache outside the repository.
 */
export async function ensureBinaries(options: EnsureBinariesOptions = {}): Promise<BinaryPaths> {
  const specs = await serverSpecs();
  return pathsIn(await ensureBuilt(specs, '.build.lock', options.log ?? defaultLog), specs);
}

/**
 * The benchmark's own Go programs, in folders of this module: `write-loop` (the client-go baseline
 * for API writes) and `admission-load` (the constant-rate load generator for the webhooks).
 */
export type BenchProgram = 'write-loop' | 'admission-load';

/** Our own source changes while the versions stay: the file name carries a hash of it. */
async function benchProgramSpec(name: BenchProgram): Promise<BinarySpec> {
  return { file: `${name}-${await sourceHash(join(MODULE_DIR, name))}`, pkg: `resource-distributor/control-plane/${name}` };
}

/**
 * Returns the path of one of the benchmark's Go programs, built from the same module as the
 * servers into the same cache. Its own lock, so it does not wait for a server build.
 */
export async function ensureBenchProgram(name: BenchProgram, options: EnsureBinariesOptions = {}): Promise<string> {
  const spec = await benchProgramSpec(name);
  return join(await ensureBuilt([spec], `.${name}.lock`, options.log ?? defaultLog), spec.file);
}

/** Kubernetes servers beyond the control plane's own (the node tier's kubelet and scheduler), same version as the API server. */
export type KubernetesServer = 'kubelet' | 'kube-scheduler';

/** Returns the path of `name` built from the selected Kubernetes module (file `<name>-<version>`); its own lock, like the tools. */
export async function ensureKubernetesServer(name: KubernetesServer, options: EnsureBinariesOptions = {}): Promise<string> {
  const spec = await kubernetesBinary(name);
  return join(await ensureBuilt([spec], `.${name}.lock`, options.log ?? defaultLog), spec.file);
}

/**
 * Test tools, each pinned by a wrapper module: kubectl by this folder's, the others by
 * test/tools/<name>/. kstatus is a program of ours there (kstatus of sigs.k8s.io/cli-utils over
 * objects on stdin), not a command of the module it pins.
 */
export type ToolName = 'kubectl' | 'helm' | 'promtool' | 'kustomize' | 'kstatus' | 'kruise-manager';

const TOOLS_DIR = join(MODULE_DIR, '..', 'tools');
const TOOL_MODULES: Record<Exclude<ToolName, 'kubectl'>, { module: string; pkg: string }> = {
  helm: { module: 'helm.sh/helm/v3', pkg: 'helm.sh/helm/v3/cmd/helm' },
  promtool: { module: 'github.com/prometheus/prometheus', pkg: 'github.com/prometheus/prometheus/cmd/promtool' },
  kustomize: { module: 'sigs.k8s.io/kustomize/kustomize/v5', pkg: 'sigs.k8s.io/kustomize/kustomize/v5' },
  kstatus: { module: 'sigs.k8s.io/cli-utils', pkg: '.' },
  // OpenKruise's manager, for the migration test (a peer, not a tool: about 5 minutes to build).
  'kruise-manager': { module: 'github.com/openkruise/kruise', pkg: 'github.com/openkruise/kruise' },
};

/** Our own source changes while the versions stay: a hash of the folder's .go files. */
async function sourceHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const sources = (await readdir(dir)).filter((file) => file.endsWith('.go')).sort();
  for (const file of sources) hash.update(`${file}\0`).update(await readFile(join(dir, file))).update('\0');
  return hash.digest('hex').slice(0, 12);
}

async function toolSpec(name: ToolName): Promise<BinarySpec> {
  // kubectl comes from the same Kubernetes module as the servers.
  if (name === 'kubectl') return kubernetesBinary('kubectl');
  const { module, pkg } = TOOL_MODULES[name];
  const moduleDir = join(TOOLS_DIR, name);
  const file = `${name}-${await requiredVersion(join(moduleDir, 'go.mod'), module)}`;
  return { file: pkg === '.' ? `${file}-${await sourceHash(moduleDir)}` : file, pkg, moduleDir };
}

/**
 * Returns the path of a test tool (kubectl, helm, promtool, kustomize, kstatus), built from its Go
 * module into the same cache as the servers on first use. Its own lock, so it does not wait for a server build.
 */
export async function ensureTool(name: ToolName, options: EnsureBinariesOptions = {}): Promise<string> {
  const spec = await toolSpec(name);
  return join(await ensureBuilt([spec], `.${name}.lock`, options.log ?? defaultLog), spec.file);
}

/**
 * The Karmada commands the fleet tier runs, from the wrapper module test/tools/karmada/ (which
 * requires github.com/karmada-io/karmada and imports them in tools.go). karmadactl checks and runs
 * interpreter customizations offline (`karmadactl interpret`).
 */
export type KarmadaCommand = 'aggregated-apiserver' | 'controller-manager' | 'scheduler' | 'webhook' | 'karmadactl';

const KARMADA_MODULE = 'github.com/karmada-io/karmada';
export const KARMADA_MODULE_DIR = join(TOOLS_DIR, 'karmada');

async function karmadaSpec(command: KarmadaCommand): Promise<BinarySpec> {
  const version = await requiredVersion(join(KARMADA_MODULE_DIR, 'go.mod'), KARMADA_MODULE);
  const file = command === 'karmadactl' ? `karmadactl-${version}` : `karmada-${command}-${version}`;
  // Without the stamp the commands report v0.0.0-master.
  const ldflags = `-X ${KARMADA_MODULE}/pkg/version.gitVersion=${version}`;
  return { file, pkg: `${KARMADA_MODULE}/cmd/${command}`, moduleDir: KARMADA_MODULE_DIR, ldflags };
}

/** Returns the path of a Karmada command, built on first use into the same cache as the servers; its own lock. */
export async function ensureKarmada(command: KarmadaCommand, options: EnsureBinariesOptions = {}): Promise<string> {
  const spec = await karmadaSpec(command);
  return join(await ensureBuilt([spec], `.karmada-${command}.lock`, options.log ?? defaultLog), spec.file);
}

/** Where the Go module cache holds Karmada's module (its CRDs and webhook configuration ship in it). */
export async function karmadaSourceDir(): Promise<string> {
  const { stdout } = await promisify(execFile)('go', ['list', '-m', '-json', KARMADA_MODULE], { cwd: KARMADA_MODULE_DIR, env: goEnv() });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go list -m ${KARMADA_MODULE} names no folder (is the module downloaded?)`);
  return dir;
}
