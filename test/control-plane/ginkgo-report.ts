/**
 * Ginkgo's JSON report (`--ginkgo.json-report`) summed up per suite file: how many specs of each
 * passed, and which did not, with the first line of why.
 */

interface SpecReport {
  ContainerHierarchyTexts?: string[] | null;
  LeafNodeType?: string;
  LeafNodeText?: string;
  LeafNodeLocation?: { FileName?: string };
  State?: string;
  Failure?: { Message?: string };
}

interface SuiteReport {
  SpecReports?: SpecReport[] | null;
}

export interface NotPassed {
  name: string;
  state: string;
  reason: string;
  /** Why, when this failure is a documented difference (see KnownDifference). */
  known?: string;
}

/**
 * A spec that fails against us by a documented choice of ours: it counts as known only when it
 * fails and its failure message holds `failure` (any other failure of it is a failure like any).
 */
export interface KnownDifference {
  /** The spec's own text (Ginkgo's leaf node text). */
  spec: string;
  failure: string;
  why: string;
}

export interface SuiteCounts {
  /** The suite's file, from `test/e2e/` on (`apps/v1beta1/resourcedistribution.go`). */
  suite: string;
  passed: number;
  /** The names of the specs that passed, in the order they ran. */
  passedNames: string[];
  failed: number;
  /** Specs that ran and did not pass: failed, panicked, timed out, interrupted or aborted. */
  notPassed: NotPassed[];
  /** Specs of this file that did not run (filtered out, pending or skipped). */
  skipped: number;
}

const RAN_AND_NOT_PASSED = new Set(['failed', 'panicked', 'timedout', 'interrupted', 'aborted']);
const SUITE_FILE = /\/test\/e2e\/(.+\.go)$/;

const REASON_CHARS = 240;

/**
 * Gomega's message on one line, without its dumps of Go values: its own words are the unindented
 * lines; of a dump it keeps an error's text (the line under `<*errors.T | 0x…>:`) and a length
 * (`len:8` of `<[]T | len:8, cap:8>: [`).
 */
function reasonOf(text: string | undefined): string {
  const lines = (text ?? '').split('\n');
  const kept: string[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    if (!/^\s/.test(line)) {
      kept.push(line.trim());
      return;
    }
    const header = /^(\s*)<[^>]*>:\s*(.*)$/.exec(line);
    if (!header) return;
    const indent = header[1] ?? '';
    const next = lines[i + 1] ?? '';
    const length = /\| (len:\d+)/.exec(line)?.[1];
    if (header[2] === '' && next.startsWith(indent) && /^\S/.test(next.slice(indent.length))) kept.push(next.trim());
    else if (length !== undefined) kept.push(`(${length})`);
  });
  const reason = kept.join(' ');
  return reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS - 1)}…` : reason;
}

function specName(spec: SpecReport): string {
  return [...(spec.ContainerHierarchyTexts ?? []), spec.LeafNodeText ?? ''].join(' ').trim();
}

function suiteOf(spec: SpecReport): string {
  const file = spec.LeafNodeLocation?.FileName ?? '(unknown)';
  return SUITE_FILE.exec(file)?.[1] ?? file;
}

/** Adds one spec's outcome to its suite's counts. */
function count(counts: SuiteCounts, spec: SpecReport, known: readonly KnownDifference[]): void {
  const state = spec.State ?? 'unknown';
  if (state === 'passed') {
    counts.passed += 1;
    counts.passedNames.push(specName(spec));
  } else if (RAN_AND_NOT_PASSED.has(state)) {
    counts.failed += 1;
    const message = spec.Failure?.Message ?? '';
    const difference = known.find((k) => k.spec === spec.LeafNodeText && state === 'failed' && message.includes(k.failure));
    counts.notPassed.push({ name: specName(spec), state, reason: reasonOf(message), ...(difference ? { known: difference.why } : {}) });
  } else counts.skipped += 1;
}

/** Per suite file whose name passes `include` (all by default), in file-name order; `It` specs only. */
export function summarizeGinkgoReport(reports: SuiteReport[], include: (suite: string) => boolean = () => true, known: readonly KnownDifference[] = []): SuiteCounts[] {
  const bySuite = new Map<string, SuiteCounts>();
  for (const spec of reports.flatMap((report) => report.SpecReports ?? [])) {
    const suite = suiteOf(spec);
    if (spec.LeafNodeType !== 'It' || !include(suite)) continue;
    const counts = bySuite.get(suite) ?? { suite, passed: 0, passedNames: [], failed: 0, notPassed: [], skipped: 0 };
    bySuite.set(suite, counts);
    count(counts, spec, known);
  }
  return [...bySuite.values()].sort((a, b) => a.suite.localeCompare(b.suite));
}

/** True when every spec that did not pass is a known difference (and at least one spec ran). */
export function onlyKnownDifferences(counts: readonly SuiteCounts[]): boolean {
  return counts.some((c) => c.passed + c.failed > 0) && counts.every((c) => c.notPassed.every((spec) => spec.known !== undefined));
}
