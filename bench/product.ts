// The product as users run it: `node dist/main.js` with the image's Node.js flags (built first with
// `npm run build`) in its own process, local mode, webhooks registered in the API server by URL.
// The bench sees it only from outside: its /metrics, its certificate files, and /proc for memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { loadConfig } from '../src/config.js';
import { GROUP, PLURAL, VERSION } from '../src/domain/types.js';
import type { CertificateBundle } from '../src/tls/certificates.js';
import { fileStore } from '../src/tls/file-store.js';
import { freePorts } from '../test/control-plane/network.js';
import { groupDistribution } from './bench-kube.js';
import { imageRuntime } from './entry-command.js';
import { parseMetrics, type Scrape } from './scrape.js';

/** Sweeps cost nothing at steady state; a short interval lets the steady-state section watch several. */
export const SWEEP_INTERVAL_SECONDS = 10;

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
// SIGUSR2 runs a full garbage collection, so that memory is sampled without garbage waiting to be freed.
const GC_HOOK = `data:text/javascript,${encodeURIComponent("process.on('SIGUSR2', () => globalThis.gc?.())")}`;

export interface Product {
  port: number;
  pid: number;
  applyParallelism: number;
  sarCacheTtlMs: number;
  /** The largest admission review it reads (RD_BODY_LIMIT, as it reads its own environment). */
  bodyLimitBytes: number;
  /** With `metricsAuth`: what scrapes with unknown tokens may cost (RD_METRICS_REVIEW_*). */
  metricsReviews: { ratePerSecond: number; burst: number; concurrency: number } | undefined;
  certificates: CertificateBundle;
  /** Where it keeps its CA and serving certificate (RD_CERT_DIR): a restart given it keeps them. */
  certDir: string;
  scrape(): Promise<Scrape>;
  /**
   * Full garbage collection in the product, then its RSS (from /proc) and, from /metrics, the V8
   * heap used and committed and the memory outside it (external: Buffers, strings held natively).
   */
  memory(): Promise<{ rss: number; heapUsed: number; heapTotal: number; external: number }>;
  /** Whether /readyz answers 200 (its caches synced, its certificates in place). */
  ready(): Promise<boolean>;
  /** The most RSS the process has had (VmHWM). */
  peakRss(): Promise<number>;
  stop(): Promise<void>;
  /** SIGKILL, as the OOM killer sends it; resolves once the process is gone. */
  kill(): Promise<void>;
}

/** Builds dist/ from the sources, as `npm run build` does. */
export async function buildProduct(): Promise<void> {
  const child = spawn(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(REPO_ROOT, 'tsconfig.build.json')], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`npm run build failed (tsc exit ${String(code)})`);
}

function readyOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/readyz', rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.end();
  });
}

function scrapeOnce(port: number, token?: string): Promise<Scrape> {
  return new Promise((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    // Loopback to our own child; its CA is checked by the admission preflight, not here.
    const req = request({ host: '127.0.0.1', port, path: '/metrics', rejectUnauthorized: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(parseMetrics(text)) : reject(new Error(`/metrics answered ${String(res.statusCode)}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A process's memory figure from /proc (VmRSS: now; VmHWM: its peak). */
export async function procMemoryBytes(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1];
  if (kib === undefined) throw new Error(`no ${field} for process ${pid}`);
  return Number(kib) * 1024;
}

/** Sends marker requests until the API server calls both webhooks (a new configuration takes a moment). */
async function waitForWebhooks(kc: KubeConfig, scrape: () => Promise<Scrape>): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const marker = groupDistribution('bench-webhook-marker', 'ConfigMap', 'none');
  const deadline = performance.now() + 30_000;
  let lastError: unknown;
  for (let i = 0; ; i++) {
    try {
      await core.createNamespace({ body: { metadata: { name: `bench-marker-${i}` } }, dryRun: 'All' });
      // Until the API server has taken the CRD's conversion webhook as the product set it, a v1alpha1 create answers 500.
      await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: marker, dryRun: 'All' });
      const metrics = await scrape();
      const namespaces = metrics.sum('resource_distributor_admission_requests_total', { webhook: 'namespaces' });
      const distributions = metrics.sum('resource_distributor_admission_requests_total', { webhook: 'distributions' });
      if (namespaces > 0 && distributions > 0) return;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      const cause = lastError instanceof Error ? `: ${lastError.message.split('\n')[0] ?? ''}` : '';
      throw new Error(`the API server did not call the webhooks within 30 s${cause}`, { cause: lastError });
    }
    await sleep(200);
  }
}

async function waitForServing(child: ChildProcess, scrape: () => Promise<Scrape>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the product exited with code ${child.exitCode} during start`);
    try {
      await scrape();
      return;
    } catch (error) {
      if (performance.now() > deadline) throw new Error(`the product did not serve within ${timeoutMs} ms`, { cause: error });
      await sleep(100);
    }
  }
}

/** The bearer token of a kubeconfig written by writeWriterKubeconfig (JSON, one user). */
async function tokenOf(kubeconfigPath: string): Promise<string> {
  const config = JSON.parse(await readFile(kubeconfigPath, 'utf8')) as { users?: { user?: { token?: string } }[] };
  const token = config.users?.[0]?.user?.token;
  if (token === undefined) throw new Error(`${kubeconfigPath} holds no token`);
  return token;
}

export interface ProductOptions {
  /**
   * RD_METRICS_AUTH, as in a cluster: /metrics answers only a token whose user may get it; the
   * bench scrapes with the kubeconfig's own token (cluster-admin).
   */
  metricsAuth?: boolean;
  /**
   * The process this one replaces (a restart): the new one serves on its port with its CA, as a
   * pod restarted in a cluster sits behind the same Service and keeps its CA in a Secret. With a
   * new URL or CA the restart would rewrite the CRD's conversion webhook, which makes the API
   * server rebuild the distributions' storage and end every watch of them (the garbage
   * collector's included), and the webhook configurations: work no user's restart causes.
   */
  replacing?: Pick<Product, 'port' | 'certDir'>;
}

/** A port and a certificate directory of its own, for a process that replaces none. */
async function newPlace(): Promise<Pick<Product, 'port' | 'certDir'>> {
  const [port = 0] = await freePorts(1);
  return { port, certDir: await mkdtemp(join(tmpdir(), 'rd-bench-certs-')) };
}

export async function startProduct(kc: KubeConfig, kubeconfigPath: string, options: ProductOptions = {}): Promise<Product> {
  const { port, certDir } = options.replacing ?? (await newPlace());
  const sarCacheTtlMs = 10_000;
  // --expose-gc and a SIGUSR2 hook, only so that memory is sampled after a full collection.
  // RD_BENCH_NODE_FLAGS: more Node.js flags for the product, e.g. "--cpu-prof --cpu-prof-dir=/tmp/profile".
  const extra = (process.env.RD_BENCH_NODE_FLAGS ?? '').split(/\s+/).filter((flag) => flag !== '');
  const image = (await imageRuntime(join(REPO_ROOT, 'Dockerfile'))).nodeFlags;
  const env = {
    ...process.env,
    KUBECONFIG: kubeconfigPath,
    RD_MODE: 'local',
    RD_PORT: String(port),
    RD_CERT_DIR: certDir,
    RD_LOG_LEVEL: process.env.RD_BENCH_LOG ?? 'warn',
    RD_SWEEP_INTERVAL: `${SWEEP_INTERVAL_SECONDS}s`,
    RD_SAR_CACHE_TTL: `${sarCacheTtlMs / 1000}s`,
    RD_LEADER_ELECTION: 'false',
    RD_SHUTDOWN_TIMEOUT: '2s',
    RD_METRICS_AUTH: String(options.metricsAuth === true),
    // The control plane's CRD converts through the product, as in a cluster.
    RD_REGISTER_CONVERSION: 'true',
  };
  const token = options.metricsAuth === true ? await tokenOf(kubeconfigPath) : undefined;
  const child = spawn(process.execPath, [...image, '--expose-gc', '--import', GC_HOOK, ...extra, join(REPO_ROOT, 'dist/main.js')], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    const scrape = (): Promise<Scrape> => scrapeOnce(port, token);
    await waitForServing(child, scrape, 60_000);
    const stored = await fileStore(certDir).load();
    if (!stored) throw new Error(`the product wrote no certificates into ${certDir}`);
    await waitForWebhooks(kc, scrape);
    const pid = child.pid ?? 0;
    // The product's own defaults (RD_APPLY_PARALLELISM included), as users run it.
    const config = loadConfig(env);
    return {
      port,
      pid,
      applyParallelism: config.applyParallelism,
      sarCacheTtlMs,
      bodyLimitBytes: config.bodyLimitBytes,
      metricsReviews: options.metricsAuth === true ? config.metricsReviews : undefined,
      certificates: stored.bundle,
      certDir,
      scrape,
      memory: async () => {
        child.kill('SIGUSR2');
        await sleep(500);
        const [rss, metrics] = await Promise.all([procMemoryBytes(pid), scrape()]);
        return {
          rss,
          heapUsed: metrics.sum('resource_distributor_nodejs_heap_size_used_bytes'),
          heapTotal: metrics.sum('resource_distributor_nodejs_heap_size_total_bytes'),
          external: metrics.sum('resource_distributor_nodejs_external_memory_bytes'),
        };
      },
      ready: () => readyOnce(port),
      peakRss: () => procMemoryBytes(pid, 'VmHWM'),
      stop,
      kill: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);
/** Created only to be answered: questions about access, nothing stored. */
const REVIEWS = new Set(['subjectaccessreviews', 'selfsubjectaccessreviews', 'tokenreviews']);

/** API requests the product made between two scrapes, by `verb resource`; writes and reads count objects written and read (access reviews are neither). */
export function requestsBetween(before: Scrape, after: Scrape): { byRequest: Record<string, number>; writes: number; reads: number; errors: number } {
  const byRequest: Record<string, number> = {};
  let writes = 0;
  let reads = 0;
  for (const sample of after.samples('resource_distributor_api_requests_total')) {
    const { verb = '', resource = '' } = sample.labels;
    const n = sample.value - before.sum('resource_distributor_api_requests_total', { verb, resource });
    if (n <= 0) continue;
    byRequest[`${verb} ${resource}`] = n;
    if (WRITE_VERBS.has(verb) && !REVIEWS.has(resource)) writes += n;
    else if (verb === 'get' || verb === 'list') reads += n;
  }
  const errors = after.sum('resource_distributor_api_errors_total') - before.sum('resource_distributor_api_errors_total');
  return { byRequest, writes, reads, errors };
}

/** Reconciles the product ran and CPU it used between two scrapes. */
export function workBetween(before: Scrape, after: Scrape): { reconciles: number; cpuMs: number } {
  const delta = (metric: string): number => after.sum(metric) - before.sum(metric);
  return { reconciles: delta('resource_distributor_reconcile_total'), cpuMs: delta('resource_distributor_process_cpu_seconds_total') * 1000 };
}

/**
 * Waits until the product has nothing queued and made no write for `quietMs` (events caused by
 * its own last writes come back through the watches and are reconciled once more).
 */
export async function waitForQuiet(product: Product, quietMs = 1500, timeoutMs = 120_000): Promise<Scrape> {
  const deadline = performance.now() + timeoutMs;
  let last = await product.scrape();
  for (;;) {
    await sleep(quietMs);
    const now = await product.scrape();
    const quiet = requestsBetween(last, now).writes === 0 && now.sum('resource_distributor_queue_depth') === 0;
    if (quiet) return now;
    if (performance.now() > deadline) throw new Error(`the product kept writing for ${Math.round(timeoutMs / 1000)} s`);
    last = now;
  }
}
