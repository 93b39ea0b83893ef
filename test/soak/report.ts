// The run's report, as markdown: what was done, what broke, how long the product took to be right
// again after each fault, what it cost.
import { summarize } from '../../bench/stats.js';
import type { Coverage } from './checker.js';
import type { FaultRun } from './faults.js';
import type { Found, Tally } from './ledger.js';
import type { ProductSummary } from './soak-replicas.js';

export interface Convergence {
  round: number;
  step: number;
  fault?: FaultRun;
  /** From the end of the round's last operation (and fault) to a check with no violation. */
  quietToConvergedMs?: number;
  converged: boolean;
  coverage: Coverage;
}

/** Counts over the run of what the checks held to the promises, and what they let pass. */
export interface RunTally {
  podsChecked: number;
  podReferences: number;
  podsExempt: number;
  podsRefused: number;
  refusalsTolerated: number;
  /** Failed calls to our webhooks the API server counted while a replica was killed or frozen. */
  webhookErrorsTolerated: number;
  /** Stretches between two reads of those counts that were checked. */
  webhookStretches: number;
}

export function emptyTally(): RunTally {
  return { podsChecked: 0, podReferences: 0, podsExempt: 0, podsRefused: 0, refusalsTolerated: 0, webhookErrorsTolerated: 0, webhookStretches: 0 };
}

export interface SoakResult {
  seed: number;
  minutes: number;
  startedAt: string;
  setupSeconds: number;
  wallSeconds: number;
  rounds: number;
  steps: number;
  operations: [string, Tally][];
  failures: { step: number; op: string; message: string }[];
  convergences: Convergence[];
  violations: Found[];
  product: ProductSummary;
  apiRequests: RequestTotals;
  logDir: string;
  settings: Record<string, string>;
  tally: RunTally;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete']);

export interface RequestTotals {
  /** By `<verb> <resource>`. */
  byRequest: Record<string, number>;
  /** Everything but the Lease: leader election renews it every RD_RETRY_PERIOD whatever happens. */
  total: number;
  writes: number;
  lease: number;
}

export function requestTotals(byRequest: Record<string, number>): RequestTotals {
  const entries = Object.entries(byRequest);
  const sum = (keep: (verb: string, resource: string) => boolean): number =>
    entries.filter(([key]) => keep(key.split(' ')[0] ?? '', key.split(' ')[1] ?? '')).reduce((total, [, n]) => total + n, 0);
  return {
    byRequest,
    total: sum((_, resource) => resource !== 'leases'),
    writes: sum((verb, resource) => resource !== 'leases' && WRITE_VERBS.has(verb)),
    lease: sum((_, resource) => resource === 'leases'),
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function convergenceRows(convergences: readonly Convergence[]): string[] {
  const byKind = new Map<string, { fromFault: number[]; fromRecovery: number[]; timeouts: number }>();
  for (const c of convergences) {
    const kind = c.fault?.kind ?? '(no fault)';
    const row = byKind.get(kind) ?? { fromFault: [], fromRecovery: [], timeouts: 0 };
    if (!c.converged || c.quietToConvergedMs === undefined) row.timeouts += 1;
    else if (c.fault) {
      const convergedAt = c.fault.recoveredAt + c.quietToConvergedMs;
      row.fromFault.push(convergedAt - c.fault.startedAt);
      row.fromRecovery.push(c.quietToConvergedMs);
    } else row.fromRecovery.push(c.quietToConvergedMs);
    byKind.set(kind, row);
  }
  const fmt = (samples: number[]): string => {
    if (samples.length === 0) return '—';
    const s = summarize(samples);
    return `${seconds(s.p50)} / ${seconds(s.p99)} / ${seconds(s.max)}`;
  };
  return [...byKind].sort(([a], [b]) => a.localeCompare(b)).map(([kind, row]) => `| ${kind} | ${row.fromRecovery.length + row.timeouts} | ${fmt(row.fromFault)} | ${fmt(row.fromRecovery)} | ${row.timeouts} |`);
}

function violationRows(result: SoakResult): string[] {
  if (result.violations.length === 0) return ['None.'];
  return [
    '| rule | subject | first seen (replay) | quiet periods | detail |',
    '|---|---|---|---|---|',
    ...result.violations.map((v) => `| ${v.rule} | ${v.subject} | seed ${result.seed}, round ${v.round}, step ${v.step} | ${v.seen} | ${v.detail.replaceAll('|', '\\|').slice(0, 400)} |`),
  ];
}

/**
 * The distributions and ObjectSyncs webhooks fail closed: a call the API server could not complete
 * (a replica killed or stopped with a connection open to it) refuses that change. Tolerated only
 * while such a fault was under way (check-refusals.ts); any other is a violation.
 */
function webhookFailures(result: SoakResult): string {
  const calls = result.failures.filter((f) => f.message.includes('failed calling webhook'));
  if (calls.length === 0) return 'No webhook call failed.';
  const list = calls.map((f) => `step ${f.step}: ${/: ([^:]+)$/.exec(f.message)?.[1] ?? f.message}`).join(', ');
  return `Operations refused because the API server's call to a webhook failed: ${calls.length}, of which ${result.tally.refusalsTolerated} while a replica was killed or frozen and not back yet (tolerated; any other is a violation) (${list}).`;
}

function webhookMetricsLine(tally: RunTally): string {
  return `The API server's own count of failed calls to our webhooks (\`apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error"}\`, failing closed, and \`apiserver_admission_webhook_fail_open_count\`), checked over ${tally.webhookStretches} stretches between two reads of /metrics: ${tally.webhookErrorsTolerated} failed while a replica was killed or frozen and not back yet (tolerated; one at any other time is a violation).`;
}

function podLine(tally: RunTally): string {
  return `Pods admitted and held to "copies before pods" (the cluster read at each pod's resourceVersion): ${tally.podsChecked}, referencing ${tally.podReferences} copies that had to exist; not held to it (created during a fault or within 5 s of its recovery, or their revision compacted): ${tally.podsExempt}; refused by the API server: ${tally.podsRefused}.`;
}

/** Summed over the last check of every quiet period. */
function coverageLine(convergences: readonly Convergence[]): string {
  const sum = (pick: (c: Coverage) => number): number => convergences.reduce((total, c) => total + pick(c.coverage), 0);
  const states = ['ok', 'conflict', 'missing', 'wrong', 'namespace-missing'] as const;
  const targets = states.map((s) => `${s} ${sum((c) => c.targets[s])}`).join(', ');
  return `Checked (summed over the last check of each quiet period): ${sum((c) => c.distributions)} distributions, ${sum((c) => c.objectSyncs)} ObjectSyncs, ${sum((c) => c.adoptions)} objects made for adoption where their distribution writes, ${sum((c) => c.authoredCopies)} copies of the limited author's distributions; the distributions' target namespaces holding: ${targets}; ${sum((c) => c.objects)} objects of the soak's names looked at.`;
}

/** How the replicas ran, and how many ran and ended. */
function productLines(product: ProductSummary): { setup: string; replicas: string; ended: string } {
  const pods = product.mode === 'pods';
  const unexpected = product.unexpected.length > 0 ? ` (${product.unexpected.join('; ')})` : '';
  return {
    setup: pods ? 'control plane, node, image, helm install of two replicas' : 'build, control plane, two replicas',
    replicas: pods
      ? "Replicas: two pods of the image built from the Dockerfile, installed with the Helm chart on a node of the soak's own (kubelet, containerd); kill and SIGSTOP hit their containers' main processes on the machine, the kubelet restarts a killed one."
      : 'Replicas: two local processes (`--replicas processes`) behind a proxy that routes to the ready ones.',
    ended: `${pods ? "Container instances started (each pod's first, and one per restart)" : 'Replicas started'}: ${product.started}; killed or stopped by the soak (including the final SIGTERM): ${product.endedBySoak}; exited on their own: ${product.unexpected.length}${unexpected}.`,
  };
}

export function renderReport(result: SoakResult): string {
  const ops = result.operations.reduce((sum, [, t]) => sum + t.ok + t.failed + t.skipped, 0);
  const faults = result.convergences.filter((c) => c.fault);
  const faultCounts = new Map<string, number>();
  for (const c of faults) faultCounts.set(c.fault?.kind ?? '', (faultCounts.get(c.fault?.kind ?? '') ?? 0) + 1);
  const product = productLines(result.product);
  const perOp = (n: number): string => (ops === 0 ? '—' : (n / ops).toFixed(1));
  return [
    `# Soak: ${result.minutes} min, seed ${result.seed}`,
    '',
    `Started ${result.startedAt}; setup ${result.setupSeconds.toFixed(0)} s (${product.setup}); wall time ${result.wallSeconds.toFixed(0)} s in all.`,
    product.replicas,
    `${result.rounds} rounds, ${ops} operations (steps 1-${result.steps}), ${faults.length} faults; **${result.violations.length} violations**.`,
    `Replay: \`npm run soak -- --minutes ${result.minutes} --seed ${result.seed}\` runs the same operations and faults in the same order (their timing against the product's is not replayed). Replica logs (as pods: \`instances/\`, every container instance's whole log) and the operations journal (ops.jsonl): \`${result.logDir}\`.`,
    `Settings: ${Object.entries(result.settings).map(([k, v]) => `${k}=${v}`).join(', ')}.`,
    '',
    '## Operations',
    '',
    '| operation | ok | failed | skipped (nothing to do) |',
    '|---|---|---|---|',
    ...result.operations.sort(([a], [b]) => a.localeCompare(b)).map(([op, t]) => `| ${op} | ${t.ok} | ${t.failed} | ${t.skipped} |`),
    '',
    webhookFailures(result),
    '',
    webhookMetricsLine(result.tally),
    '',
    podLine(result.tally),
    '',
    result.failures.length === 0 ? 'No operation failed.' : `Failed operations (the API server or a webhook refused or could not answer; first 10): ${result.failures.slice(0, 10).map((f) => `step ${f.step} ${f.op}: ${f.message}`).join('; ')}`,
    '',
    '## Faults and convergence',
    '',
    `Faults: ${[...faultCounts].map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}.`,
    '',
    '| after | quiet periods | converged from the fault, p50 / p99 / max | from the end of the round (fault recovered), p50 / p99 / max | not converged in time |',
    '|---|---|---|---|---|',
    ...convergenceRows(result.convergences),
    '',
    coverageLine(result.convergences),
    '',
    '## Violations',
    '',
    ...violationRows(result),
    '',
    '## Product',
    '',
    product.ended,
    `API requests made by the replicas (their /metrics at each quiet period, summed over every replica's life; a killed replica's requests after its last quiet period are not counted), leader election's Lease requests (${result.apiRequests.lease}) left out: ${result.apiRequests.total} (${perOp(result.apiRequests.total)} per operation), of which writes ${result.apiRequests.writes} (${perOp(result.apiRequests.writes)} per operation).`,
    '',
    `By request: ${Object.entries(result.apiRequests.byRequest).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ')}.`,
    '',
  ].join('\n');
}
