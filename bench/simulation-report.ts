// The simulation's figures as a markdown table (printed, and bench/results/latest-simulation-<size>.md)
// and as JSON (bench/results/simulation-<timestamp>.json, git-ignored), each beside its target.
import { readFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { fmtBytes, fmtMs } from './format.js';
import { writeJson, writeMarkdown } from './report.js';
import type { Summary } from './stats.js';

interface Memory {
  heap: number;
  rss: number;
}

export interface SimulationResult {
  size: 'smoke' | 'default';
  startedAt: string;
  machine: string;
  shape: { namespaces: number; teams: number; allNamespaces: number; selectors: number; lists: number; listedNames: number; distributions: number; copies: number; podRequests: number };
  cached: { namespaces: number; distributions: number; copies: number };
  sync: { ms: number; cpuMs: number; peakRss: number };
  firstPass: { ms: number; cpuMs: number; writes: number; reads: number };
  memory: { before: Memory; settled: Memory };
  /** stallMs: the longest the event loop was held while it ran. */
  sweep: { ms: number; cpuMs: number; writes: number; reads: number; stallMs: number };
  newNamespace: { copies: number; expected: number; copiesMs: number; settledMs: number; cpuMs: number; writes: number };
  newNamespaceDuringSweep: { copies: number; expected: number; copiesMs: number };
  pods: { trivial: Summary; validation: Summary; mutation: Summary; mutationAnswer: string };
}

export async function machineSummary(): Promise<string> {
  const info = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  const model = info.split('\n').find((line) => line.startsWith('model name'))?.split(':')[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
  return `${model}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; Node ${process.version}`;
}

const MiB = 2 ** 20;
const met = (ok: boolean): string => (ok ? 'met' : 'not met');

function latency(summary: Summary): string {
  return `p50 ${fmtMs(summary.p50)}, p99 ${fmtMs(summary.p99)}, max ${fmtMs(summary.max)}`;
}

export function renderSimulation(result: SimulationResult): string {
  const { shape, memory, pods } = result;
  const heap = memory.settled.heap - memory.before.heap;
  const overTrivial = Math.max(pods.validation.p99, pods.mutation.p99) - pods.trivial.p99;
  const rows: string[][] = [
    ['caches synced (lists of every distribution, namespace and copy)', `${fmtMs(result.sync.ms)} (${(result.sync.cpuMs / 1000).toFixed(1)} CPU-s); peak RSS ${fmtBytes(result.sync.peakRss)}`, ''],
    ['first full pass after the start (every distribution reconciled)', `${fmtMs(result.firstPass.ms)}, ${(result.firstPass.cpuMs / 1000).toFixed(1)} CPU-s; ${result.firstPass.writes} writes, ${result.firstPass.reads} reads`, ''],
    ['heap after GC, the product\'s (settled minus before the start)', `${fmtBytes(heap)} (${fmtBytes(heap / shape.copies)} per copy)`, `≤ 1 GiB: ${met(heap <= 1024 * MiB)}`],
    ['RSS after GC (whole process)', `${fmtBytes(memory.settled.rss)} (before the start: ${fmtBytes(memory.before.rss)})`, ''],
    ['one full sweep', `${(result.sweep.cpuMs / 1000).toFixed(1)} CPU-s, ${fmtMs(result.sweep.ms)}; ${result.sweep.writes} writes, ${result.sweep.reads} reads`, `≤ 60 CPU-s: ${met(result.sweep.cpuMs <= 60_000)}`],
    ['… the longest the event loop was held during it (webhooks and watch events wait that long)', fmtMs(result.sweep.stallMs), ''],
    ['a new namespace: admitted → its copies written by the generator', `${result.newNamespace.copies} of ${result.newNamespace.expected} copies in ${fmtMs(result.newNamespace.copiesMs)}`, ''],
    ['the same while a full sweep is under way', `${result.newNamespaceDuringSweep.copies} of ${result.newNamespaceDuringSweep.expected} copies in ${fmtMs(result.newNamespaceDuringSweep.copiesMs)}`, ''],
    ['… and the reconciles a new namespace triggers done (at rest)', `${fmtMs(result.newNamespace.settledMs)}, ${(result.newNamespace.cpuMs / 1000).toFixed(2)} CPU-s; ${result.newNamespace.writes} writes`, ''],
    ['trivial admission route (read, parse, allow the same Pod review)', latency(pods.trivial), ''],
    ['pod webhook (copies before pods; copies in place)', latency(pods.validation), ''],
    [`pod mutation (${pods.mutationAnswer})`, latency(pods.mutation), `p99 within 1 ms of trivial: ${met(overTrivial <= 1)} (+${fmtMs(overTrivial)})`],
  ];
  return [
    `# resource-distributor simulation (size: ${result.size})`,
    '',
    `Run ${result.startedAt}. Machine: ${result.machine}. Simulated: the product's controller (caches, catalog, planner, reconciler, generator, pod webhooks through the admission app's routes, in-process) over a generated cluster that lists generated objects and acknowledges writes at once; the API server's own cost is not included.`,
    '',
    `World: ${shape.namespaces.toLocaleString('en')} namespaces (labelled by ${shape.teams} teams), ${shape.distributions.toLocaleString('en')} distributions ` +
      `(${shape.allNamespaces} all-namespaces ConfigMaps, ${shape.selectors.toLocaleString('en')} Secrets by label selector of which ${shape.teams} registry credentials injected into pods, ${shape.lists.toLocaleString('en')} ConfigMaps by name list), ` +
      `${shape.copies.toLocaleString('en')} copies, all in sync at the start. Cached: ${result.cached.namespaces.toLocaleString('en')} namespaces, ${result.cached.distributions.toLocaleString('en')} distributions, ${result.cached.copies.toLocaleString('en')} copies. ` +
      `Pod rows: ${shape.podRequests.toLocaleString('en')} requests each over 5 interleaved rounds after a warm-up, one at a time (\`app.request\`, no socket): a pod in a namespace where its copies are in place, naming two distributed Secrets (one an injected registry credential, its image from that registry), a distributed ConfigMap and a name nobody distributes.`,
    '',
    '| what | simulated | target |',
    '|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');
}

export async function writeSimulation(outDir: string, result: SimulationResult, report: string): Promise<string[]> {
  return [await writeJson(outDir, `simulation-${result.startedAt.replace(/[:.]/g, '-')}.json`, result), await writeMarkdown(outDir, `simulation-${result.size}`, `${report}\n`)];
}
