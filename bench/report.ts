// The results of a run: one JSON document (bench/results/<timestamp>.json, git-ignored) and the
// same figures as markdown tables (printed section by section, and bench/results/latest-<size>.md).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AdmissionResult } from './admission-latency.js';
import { fmtBytes, fmtMs, fmtNumber, fmtRatio, table } from './format.js';
import type { ContentionResult } from './contention.js';
import type { FanOutResult } from './fan-out.js';
import { renderFanOut } from './fan-out-report.js';
import type { LargeAuthorResult, LargeAuthorRow } from './large-author.js';
import type { LargestResult } from './largest.js';
import type { LoopHeldResult } from './loop-held.js';
import type { MachineInfo } from './machine.js';
import type { MemoryResult } from './memory.js';
import type { PropagationResult } from './propagation.js';
import { renderMetricsFlood, type MetricsFloodResult } from './metrics-flood.js';
import { renderScale, type ScaleResult } from './scale-report.js';
import type { SectionName, SizeName } from './sizes.js';
import type { SteadyStateResult } from './steady-state.js';

export interface SectionResults {
  admission?: AdmissionResult;
  propagation?: PropagationResult;
  'fan-out'?: FanOutResult;
  'steady-state'?: SteadyStateResult;
  memory?: MemoryResult;
  contention?: ContentionResult;
  largest?: LargestResult;
  'large-author'?: LargeAuthorResult;
  scale?: ScaleResult;
  'metrics-flood'?: MetricsFloodResult;
}

export interface BenchResult {
  size: SizeName;
  startedAt: string;
  finishedAt?: string;
  machine?: MachineInfo;
  sections: SectionResults;
  /** 1-minute load average when the run ended. */
  loadAverageAtEnd?: number;
  failures: { section: SectionName | 'setup' | 'teardown'; message: string }[];
}

export function renderMachine(machine: MachineInfo): string {
  return (
    `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Linux ${machine.kernel}; ` +
    `Node ${machine.node}; Kubernetes ${machine.kubernetes} (etcd + kube-apiserver + kube-controller-manager on the same machine); ` +
    `load average at start ${machine.loadAverageAtStart}.`
  );
}

function renderAdmission(result: AdmissionResult): string {
  const rows = result.rows.map((row) => [
    row.endpoint,
    String(row.rate),
    String(row.connections),
    fmtNumber(row.achievedRps),
    fmtMs(row.latencyMs.p50),
    fmtMs(row.latencyMs.p99),
    fmtMs(row.latencyMs.max),
    String(row.errors + row.timeouts),
    String(row.non2xx),
    String(row.accessReviews),
  ]);
  return [
    '## 1. Admission latency',
    '',
    `HTTPS over loopback, keep-alive HTTP/1.1 connections (at most the number given), requests sent at a constant rate (evenly spaced, whether or not earlier ones have been answered, as an API server calls a webhook when objects arrive) by a Go load generator in its own process limited to one core; a response time runs from the moment the request is handed to the connection pool, so waiting for a free connection counts. ` +
      `${result.rows[0]?.durationSeconds ?? '?'} s per row after a warm-up (pod rows: the seconds given are over all rounds). ` +
      `Baseline: a trivial route on the same stack (Hono over node:https, same certificate) answering a fixed small JSON. ` +
      `Distribution validation: a valid CREATE with includedNamespaces ${result.targetNamespaces.join(', ')} by one fixed user; ` +
      `namespace: a dry-run CREATE (no generation); pod (copies in place): a Pod CREATE in a namespace where the image-pull Secret it references is distributed and its copy already there ` +
      `(the common case of "copies before pods": the caches say nothing is pending, no API request); pod mutation: a Pod CREATE from the registry of that Secret (distributed with imagePullSecretInjection MatchingImages), answered with the JSONPatch that adds it. ` +
      `The pod webhooks' baseline is "trivial admission": the same server stack reading the same Pod review, parsing it and allowing it (the least any webhook must do); ` +
      `these three rows run in interleaved rounds at the same rate, each round after its own warm-up, and their percentiles are over all rounds' samples. ` +
      `The "crowded" rows repeat pod mutation and its baseline the same way once ${result.crowd.distributions} more distributions with imagePullSecretInjection MatchingImages exist, ` +
      `each targeting another namespace and listing ${result.crowd.excludedNames} excluded names (what one tenant may create): a pod's cost must not grow with them.`,
    '',
    table(['endpoint', 'rate req/s', 'connections', 'achieved req/s', 'p50', 'p99', 'max', 'errors', 'non-2xx', 'SARs sent'], rows),
    '',
    `SubjectAccessReview answers are cached ${result.sarCacheTtlMs / 1000} s per (user, groups, verb, kind, namespace): with one fixed user the ` +
      `validation asks the API server only on a cache miss (the first request, then once per expiry), so nearly every request is a cache hit; ` +
      `"SARs sent" counts those misses (warm-up included).`,
  ].join('\n');
}

/** The peer's side of the propagation, or why it has none (reports made before it: nothing). */
function kruisePropagationRow(result: PropagationResult): { row?: string[]; note: string } {
  const peer = result.kruise;
  if (peer === undefined) return { note: '' };
  if (peer.state !== 'measured') return { note: `OpenKruise's kruise-manager: ${peer.state === 'skipped' ? 'skipped' : 'FAILED'} in this run (${peer.reason}).` };
  const { side } = peer;
  return {
    row: ['OpenKruise v1.9.0', fmtMs(side.latencyMs.p50), fmtMs(side.latencyMs.p99), fmtMs(side.latencyMs.max), fmtMs(side.wallMs), `${fmtMs(side.createLatencyMs.p50)} / ${fmtMs(side.createLatencyMs.p99)}`],
    note:
      `OpenKruise's kruise-manager, with the fan-out's flags, on a fresh control plane of its own, given the same distributions and then the same namespaces at the same pace, after ours. ` +
      `Kruise ÷ ours: p50 ${fmtRatio(side.latencyMs.p50 / result.latencyMs.p50)}, p99 ${fmtRatio(side.latencyMs.p99 / result.latencyMs.p99)} (above 1: our copies come sooner).`,
  };
}

function renderPropagation(result: PropagationResult): string {
  const kruise = kruisePropagationRow(result);
  const ours = [
    'resource-distributor',
    fmtMs(result.latencyMs.p50),
    fmtMs(result.latencyMs.p99),
    fmtMs(result.latencyMs.max),
    fmtMs(result.wallMs),
    `${fmtMs(result.createLatencyMs.p50)} / ${fmtMs(result.createLatencyMs.p99)}`,
  ];
  return [
    '## 2. Propagation',
    '',
    `${result.namespaces} namespaces created at ${result.ratePerSecond}/s while ${result.distributions} distributions select them; ` +
      'per namespace, from its create response to all its copies visible through a watch.',
    '',
    table(['', 'p50', 'p99', 'max', 'first create -> last copy', 'namespace create p50 / p99'], kruise.row === undefined ? [ours] : [ours, kruise.row]),
    '',
    `The product made ${fmtNumber(result.requestsPerCopy, 2)} API requests per copy (${result.failedRequests} failed): ` +
      `${Object.entries(result.requests).map(([key, count]) => `${key}: ${count}`).join(', ')}.`,
    ...(kruise.note === '' ? [] : ['', kruise.note]),
  ].join('\n');
}

function renderMemory(result: MemoryResult): string {
  const { more } = result;
  return [
    '## 4. Memory',
    '',
    `The product's own process (node dist/main.js), sampled after a full garbage collection: idle right after its start; with everything above converged ` +
      `(${result.copies} copies tracked over ${result.namespaces} namespaces); then after two more distributions over the fleet (${more.copies} copies). ` +
      'RSS from /proc; heap used from its /metrics. Heap per copy: the growth since idle over all copies (warming up included), and the growth the last copies added (the cost of one more copy).',
    '',
    table(
      ['copies tracked', 'RSS', 'heap used', 'heap per copy'],
      [
        ['0 (idle)', fmtBytes(result.idle.rss), fmtBytes(result.idle.heapUsed), '-'],
        [String(result.copies), fmtBytes(result.after.rss), fmtBytes(result.after.heapUsed), `${fmtBytes(result.bytesPerCopy)} (since idle)`],
        [String(more.copies), fmtBytes(more.sample.rss), fmtBytes(more.sample.heapUsed), `${fmtBytes(more.bytesPerCopy)} (the last ${more.copies - result.copies})`],
      ],
    ),
  ].join('\n');
}

function renderSteadyState(result: SteadyStateResult): string {
  const requests = Object.entries(result.byRequest).map(([key, count]) => `${key}: ${count}`).join(', ') || 'none';
  return [
    '## 5. Steady state',
    '',
    `Everything above converged (${result.distributions} distributions, ${result.copiesTracked} copies), then the product is left alone for ${fmtNumber(result.idleSeconds)} s ` +
      `with its full sweep every ${result.sweepIntervalSeconds} s (${result.reconciles} reconciles in the window). CPU is the product process's over the whole window.`,
    '',
    table(
      ['idle window', 'reconciles', 'API writes', 'API reads', 'CPU', 'CPU per reconcile'],
      [[fmtMs(result.wallMs), String(result.reconciles), String(result.writes), String(result.reads), fmtMs(result.cpuMs), result.reconciles > 0 ? fmtMs(result.cpuMs / result.reconciles) : '-']],
    ),
    '',
    `Requests in the window: ${requests}.`,
  ].join('\n');
}

const plural = (count: number, noun: string): string => `${count} ${noun}${count === 1 ? '' : 's'}`;

function renderContention(result: ContentionResult): string {
  const n = result.copies.toLocaleString('en-US');
  const rounds = (values: readonly number[]): string => values.map(fmtMs).join(', ');
  return [
    '## 6. Contention',
    '',
    `${plural(result.objectSyncs, 'ObjectSync')}, each copying its source Secret to the same ${result.destinationsPerSync} namespaces (${n} copies; the product made ${plural(result.distributions, 'distribution')} of them), ` +
      `all copies in place ${fmtMs(result.createMs)} after the first create request. An unrelated distribution (one ConfigMap copied into one namespace) has its data changed: ` +
      `from the update request until a watch shows its copy with the new data, first with the product idle, then right after every ObjectSync source was edited (every copy must be rewritten). ` +
      `Rewrite: from the first source edit until every ObjectSync copy carries it. Median of ${plural(result.rounds, 'round')} (idle ${rounds(result.idleRoundsMs)}; during the rewrite ${rounds(result.stormRoundsMs)}; ` +
      `rewrite ${rounds(result.rewriteRoundsMs)}); copies already rewritten when the unrelated copy changed: ${result.rewrittenBeforeUnrelated.join(', ')} of ${n}. ` +
      `Per rewrite, until the product was quiet again (medians): ${fmtNumber(result.rewriteWork.writes)} API writes, ${fmtNumber(result.rewriteWork.reconciles)} reconciles, ${fmtMs(result.rewriteWork.cpuMs)} of product CPU. ` +
      'Deletion: from the delete requests until the last copy is gone (watch) and until no ObjectSync is left (the product released their finalizers).',
    '',
    table(
      ['', 'time', 'baseline (same run)', 'ratio'],
      [
        ['unrelated change, idle', fmtMs(result.idleMs), '-', '-'],
        [`unrelated change during a ${n}-copy ObjectSync rewrite`, fmtMs(result.stormMs), fmtMs(result.idleMs), fmtRatio(result.ratio)],
        [`ObjectSync rewrite, ${n} copies`, `${fmtMs(result.rewriteMs)} (${fmtNumber(result.copiesPerSecond)} copies/s)`, '-', '-'],
        [`ObjectSync deletion, ${n} copies`, `${fmtMs(result.deletion.objectSyncsGoneMs)} (copies gone ${fmtMs(result.deletion.copiesGoneMs)})`, '-', '-'],
      ],
    ),
  ].join('\n');
}

function renderLargeAuthorRow(label: string, row: LargeAuthorRow): string[] {
  const reviews = row.product.map((a) => String(a.accessReviews)).join(', ');
  const answer = row.denied.length === 0 ? `allowed (${row.product.length}/${row.product.length})` : `refused ${row.denied.length}/${row.product.length}: ${row.denied[0]?.slice(0, 120) ?? ''}`;
  return [
    label,
    `${fmtMs(row.productMs.p50)} / ${fmtMs(row.productMs.max)}`,
    `${fmtMs(row.baselineMs.p50)} / ${fmtMs(row.baselineMs.max)}`,
    fmtRatio(row.ratio),
    fmtMs(row.webhookMs),
    reviews,
    answer,
  ];
}

function renderLargeAuthor(result: LargeAuthorResult): string {
  const n = result.namespaces.toLocaleString('en-US');
  const { rows, stored, cleanup } = result;
  const rounds = (row: LargeAuthorRow, side: 'product' | 'baseline'): string => row[side].map((a) => fmtMs(a.ms)).join(', ');
  return [
    '## 8. Large distributions by authors RBAC allows',
    '',
    `One distribution (a ConfigMap template) listing ${n} namespace names (the create body: ${fmtBytes(result.bodyBytes)}). User A holds a RoleBinding in each of the ${n} namespaces ` +
      'to a ClusterRole granting create and update on configmaps (namespace-scoped); user B holds the same ClusterRole through a ClusterRoleBinding (cluster-wide). ' +
      'Requests go through the API server as those users (the admin client impersonating them, a new connection per request as kubectl makes one per command), timed from the request to its answer: ' +
      `a dry-run create (dryRun=All; the webhook is called, nothing is stored) by A and by B, and a label-only merge patch (what \`kubectl label\` sends) by A of the same ${n}-name distribution, ` +
      `stored before the rounds. Every round starts once the access-review answers the product remembers have expired (RD_SAR_CACHE_TTL, ${fmtMs(result.sarCacheTtlMs)} here): each create is an author's first try. ` +
      'Baseline, in the same rounds: the same requests by the same users with the distribution webhook pointed at a trivial admission route (the bench\'s baseline server, same certificate, reading, parsing and allowing the review): ' +
      `the API server's own work (authorization, validating ${n} entries, calling a webhook with the body) is the same, only the product's differs. p50 / max of ${plural(result.rounds, 'round')}; ` +
      '"webhook\'s own time": the product\'s admission histogram (body read to verdict, median); access reviews: those the product sent, per round.',
    '',
    table(
      ['request', 'product p50 / max', 'baseline p50 / max', 'ratio (p50)', "webhook's own time", 'access reviews', 'answer'],
      [
        renderLargeAuthorRow(`create, ${n} names, A (RoleBinding in each namespace)`, rows.namespaceScoped),
        renderLargeAuthorRow(`create, ${n} names, B (ClusterRoleBinding)`, rows.clusterWide),
        renderLargeAuthorRow(`label added to the stored ${n}-name distribution, by A`, rows.labelUpdate),
      ],
    ),
    '',
    `Rounds: A's create ${rounds(rows.namespaceScoped, 'product')} (baseline ${rounds(rows.namespaceScoped, 'baseline')}); ` +
      `B's create ${rounds(rows.clusterWide, 'product')} (baseline ${rounds(rows.clusterWide, 'baseline')}); ` +
      `label ${rounds(rows.labelUpdate, 'product')} (baseline ${rounds(rows.labelUpdate, 'baseline')}). ` +
      `The stored distribution: created for real by A in ${fmtMs(stored.create.ms)} (${plural(stored.create.accessReviews, 'access review')}), every copy written ${fmtMs(stored.convergedMs)} after the request. ` +
      `Setup: ${n} namespaces and RoleBindings in ${fmtMs(result.setupMs)}; deleted at the end (the delete requests: ${fmtMs(cleanup.deleteRequestsMs)}; the namespace controller removes them afterwards, not waited for).`,
  ].join('\n');
}

function renderLargest(result: LargestResult): string {
  const { admission: a, reconcile: r } = result;
  const answer = a.answer.allowed
    ? `allowed, ${a.answer.warnings} warnings`
    : `denied (${a.answer.code ?? '?'}): ${(a.answer.message ?? '').split('\n')[0]?.slice(0, 120) ?? ''}`;
  const run = (label: string, x: LargestResult['reconcile']['small']): string[] => [
    label,
    fmtMs(x.createMs),
    fmtMs(x.convergedMs),
    fmtMs(x.cpuMs),
    `${fmtNumber(x.reconciles)} (${fmtMs(x.reconcileMeanMs)})`,
  ];
  const rounds = (runs: readonly { convergedMs: number }[]): string => runs.map((x) => fmtMs(x.convergedMs)).join(', ');
  return [
    '## 7. Largest distribution',
    '',
    `Admission: an AdmissionReview of ${fmtBytes(a.shape.bytes)} (the API server's request limit; the product reads up to ${fmtBytes(a.bodyLimitBytes)}): ` +
      `${a.shape.includedEntries} included and ${a.shape.excludedEntries} excluded namespace names of 63 characters (none exist), ` +
      `${a.shape.matchLabels} matchLabels and ${a.shape.expressions} expressions with ${a.shape.values} values (keys of 317, values of 63 characters), ` +
      `and a Secret template whose ${a.shape.sharedKeys} keys are all in both data and stringData. POSTed ${a.requests} times in sequence over one keep-alive HTTPS connection after a warm-up. ` +
      'Baseline: the same bytes to a route of the same server stack that reads the whole body and answers a small JSON, alternating with the product.',
    '',
    table(
      ['', 'p50', 'p99', 'max', 'answer'],
      [
        ['product: distribution webhook', fmtMs(a.product.p50), fmtMs(a.product.p99), fmtMs(a.product.max), answer],
        ['baseline: read the body, answer', fmtMs(a.baseline.p50), fmtMs(a.baseline.p99), fmtMs(a.baseline.max), 'every byte read'],
        ['product / baseline', fmtRatio(a.ratio.p50), fmtRatio(a.ratio.p99), fmtRatio(a.ratio.max), ''],
      ],
    ),
    '',
    `The product's own mean (its admission histogram, body read to verdict): ${fmtMs(a.serverMeanMs)}. SubjectAccessReviews sent: ${a.accessReviews} ` +
      '(a selector asks once per verb for every namespace, then the answers are cached).',
    '',
    `Reconcile: created through the API server, the largest distribution it can store (etcd's default 1.5 MiB request limit; the API server accepts 3 MiB but cannot store that): ` +
      `${fmtBytes(r.shape.bytes)} as created, ${fmtBytes(r.largest.storedBytes)} with its status; ${r.shape.includedEntries} included entries naming the ${r.targets} target namespaces ` +
      `(repeated: an included namespace that does not exist counts as desired and never succeeds), ${r.shape.excludedEntries} excluded names of 63 characters, ` +
      `a selector of ${r.shape.matchLabels} label and ${r.shape.expressions} expressions (${r.shape.values} values) over the same namespaces. ` +
      `Baseline: the same ConfigMap template over the same ${r.targets} namespaces listed once by name (${fmtBytes(r.smallBytes)}). ` +
      `From the create request until the status, seen through a watch, reports every target succeeded for its generation; CPU: the product process's until it is quiet again. ` +
      `Median of ${r.smallRounds.length} rounds (converged: small ${rounds(r.smallRounds)}; largest ${rounds(r.largestRounds)}).`,
    '',
    table(
      ['distribution', 'create request', 'create -> converged', 'product CPU', 'reconciles (mean)'],
      [
        run(`small (${r.targets} names)`, r.small),
        run('largest', r.largest),
        ['largest / small', fmtRatio(r.ratio.createMs), fmtRatio(r.ratio.convergedMs), fmtRatio(r.ratio.cpuMs), ''],
      ],
    ),
    '',
    ...(result.loopHeld === undefined ? [] : [renderLoopHeld(result.loopHeld)]),
  ].join('\n');
}

function renderLoopHeld(h: LoopHeldResult): string {
  return [
    `Hostile requests: each POSTed to the distribution webhook while a prober sends trivial admission reviews (a DELETE, allowed at once) back to back on a second connection; ` +
      `the slowest probe during the request is how long any other webhook call waited. Baseline: the same against a trivial admission endpoint of the same server stack that parses the same body and allows it. ` +
      `Median of ${h.rounds} rounds after a warm-up; a probe alone takes ${fmtMs(h.idleProbeMs.product)} (product), ${fmtMs(h.idleProbeMs.baseline)} (baseline). ` +
      "The product's event-loop delay: its resource_distributor_nodejs_eventloop_lag_max_seconds over the rounds (sampled every 10 ms).",
    '',
    table(
      ['input', 'size', 'answer: product / baseline', 'slowest probe: product / baseline', 'worst probe: product / baseline', 'event-loop delay, max'],
      h.rows.map((r) => [
        r.input,
        fmtBytes(r.bytes),
        `${fmtMs(r.product.answerMs)} / ${fmtMs(r.baseline.answerMs)}`,
        `${fmtMs(r.product.slowestProbeMs)} / ${fmtMs(r.baseline.slowestProbeMs)}`,
        `${fmtMs(r.worstProbeMs.product)} / ${fmtMs(r.worstProbeMs.baseline)}`,
        fmtMs(r.loopDelayMaxMs),
      ]),
    ),
  ].join('\n');
}

/** One renderer per section, keyed by its name: a section without results renders as nothing. */
const RENDERERS: { [K in SectionName]: (result: NonNullable<SectionResults[K]>) => string } = {
  admission: renderAdmission,
  propagation: renderPropagation,
  'fan-out': renderFanOut,
  memory: renderMemory,
  'steady-state': renderSteadyState,
  contention: renderContention,
  largest: renderLargest,
  'large-author': renderLargeAuthor,
  scale: renderScale,
  'metrics-flood': renderMetricsFlood,
};

export function renderSection<K extends SectionName>(name: K, sections: SectionResults): string {
  const result = sections[name];
  return result === undefined ? '' : RENDERERS[name](result);
}

export function renderReport(result: BenchResult, order: readonly SectionName[]): string {
  const parts = [`# resource-distributor benchmark (size: ${result.size})`, '', `Run ${result.startedAt} -> ${result.finishedAt ?? 'unfinished'}.`];
  if (result.machine) parts.push(renderMachine(result.machine));
  if (result.loadAverageAtEnd !== undefined) parts.push(`Load average at the end: ${result.loadAverageAtEnd}.`);
  for (const name of order) {
    const text = renderSection(name, result.sections);
    if (text) parts.push('', text);
  }
  if (result.failures.length > 0) {
    parts.push('', '## Failures', '', ...result.failures.map((f) => `- ${f.section}: ${f.message.split('\n')[0] ?? ''}`));
  }
  return `${parts.join('\n')}\n`;
}

export async function writeJson(dir: string, file: string, result: object): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, file);
  await writeFile(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/** One table per size, so that a smoke run never replaces the figures of a full one. */
export async function writeMarkdown(dir: string, size: string, text: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `latest-${size}.md`);
  await writeFile(path, text);
  return path;
}
