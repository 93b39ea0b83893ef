// npm run bench:hostile [-- --budget-ms 100]
//
// How long the product's own code works on inputs made to stall it, and how long it holds the event
// loop at a time: the glob inputs that once held it for 31, 37 and 81 s, and the costliest inputs
// admission still lets through (at its bounds for name patterns, copyMetadata and copyData globs). Each case
// runs the product's functions as the webhooks and the reconciler call them, step by step where
// they give the loop a turn between steps (admission's slices, the reconciler's turns): the
// longest step is the longest the loop is held. Prints a table; exits 1 when a case's work takes
// longer than the budget, or its longest step longer than the hold budget (medians of 5 runs), so
// both are held by CI. How long they hold the product's own process, beside a trivial admission
// endpoint: `npm run bench -- --only loop-held`.
import { applyCopyData } from '../src/domain/copy-data.js';
import { applyCopyMetadata } from '../src/domain/copy-metadata.js';
import { credentialsMatch, registryKeys } from '../src/domain/registry-credentials.js';
import { compileSpecValidator } from '../src/domain/schema.js';
import type { Steps } from '../src/domain/steps.js';
import { listedTargets, patternIndexSteps, targetsInSteps } from '../src/domain/targets.js';
import type { NamespaceInfo, Resource, Targets } from '../src/domain/types.js';
import { validationSteps } from '../src/domain/validate.js';
import { loadCrdSchema } from '../src/k8s/crd-schema.js';
import { median, round } from './stats.js';

const RUNS = 5;
const NAMESPACES = 10_000;
const schema = compileSpecValidator(loadCrdSchema());
const b64 = (value: string): string => Buffer.from(value).toString('base64');

function budgetMs(argv: readonly string[], flag: string, fallback: number): number {
  const at = argv.indexOf(flag);
  const value = at < 0 ? fallback : Number(argv[at + 1]);
  if (!(value > 0)) throw new Error(`${flag} takes a positive number of milliseconds`);
  return value;
}

/** A Secret of 6,000 keys of 253 characters (a fresh object: the selection is remembered per object). */
function largeSecret(): Resource {
  const data = Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [`${'a'.repeat(245)}${String(i).padStart(8, '0')}`, 'eA==']));
  return { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'large' }, data };
}

function distribution(targets: Targets, extra: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ResourceDistribution',
    metadata: { name: 'hostile' },
    spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } }, targets, ...extra },
  };
}

/**
 * Admission's work on the distribution's targets in its steps (its rules, then the access check's
 * names, then the plan preview), then the reconciler's: its own copy of the object (from the
 * watch), its patterns indexed a list a turn, one pass's targets over every namespace.
 */
function admitAndTarget(make: () => unknown, namespaces: readonly NamespaceInfo[]): () => Steps<void> {
  // Made anew for each run, before it is timed: the compiled rules are remembered per targets object.
  const object = make();
  const watched = structuredClone(object);
  return function* () {
    const { problems } = yield* validationSteps({ object, schema });
    if (problems.length > 0) return;
    const { targets } = (object as { spec: { targets: Targets } }).spec;
    yield;
    listedTargets(targets);
    yield;
    yield* targetsInSteps(targets, namespaces);
    yield;
    const theirs = (watched as { spec: { targets: Targets } }).spec.targets;
    yield* patternIndexSteps(theirs);
    yield* targetsInSteps(theirs, namespaces);
  };
}

/** Work done in one step (then none). */
function* once(work: () => unknown): Steps<void> {
  work();
  yield;
}

const namespaces: NamespaceInfo[] = Array.from({ length: NAMESPACES }, (_, i) => ({ name: `${'a'.repeat(57)}-${String(i).padStart(5, '0')}`, labels: {}, terminating: false }));
const longNames = Array.from({ length: 5 }, (_, i) => ({ name: `${'a'.repeat(62)}${i}` }));

function namesAgainstExclusions(count: number): Targets {
  return {
    includedNamespaces: { list: Array.from({ length: count }, (_, i) => ({ name: `${'a'.repeat(57)}-${String(i).padStart(5, '0')}` })) },
    excludedNamespaces: { list: Array.from({ length: 5 }, (_, i) => ({ pattern: `*x${i}*` })) },
  };
}

interface Case {
  name: string;
  before: string;
  /** Makes the input, and returns the work to time, in the steps between which the product gives the loop a turn. */
  run: () => () => Steps<void>;
}

const pullSecret = { '.dockerconfigjson': b64(JSON.stringify({ auths: { 'a*a*a*b.com': { auth: b64('tenant:secret') } } })) };
const hostileSource: Resource = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', annotations: { ['a'.repeat(63)]: 'x' } },
  data: { a: '1' },
};

const cases: Case[] = [
  {
    name: `name pattern a*a*a*a*a*a*a*b, five 63-character names; then ${NAMESPACES} namespaces`,
    before: '30.9 s (admission)',
    run: () => admitAndTarget(() => distribution({ includedNamespaces: { list: longNames }, excludedNamespaces: { list: [{ pattern: 'a*a*a*a*a*a*a*b' }] } }), namespaces),
  },
  {
    name: 'registry key a*a*a*b.com, an image host of 4,000 characters',
    before: '37.5 s (pod admission)',
    run: () => () => once(() => credentialsMatch(registryKeys('kubernetes.io/dockerconfigjson', pullSecret), `${'a'.repeat(4000)}.com/app:1`)),
  },
  {
    name: 'registry key a*a*a*b.com, an image host of 253 characters',
    before: '-',
    run: () => () => once(() => credentialsMatch(registryKeys('kubernetes.io/dockerconfigjson', pullSecret), `${'a'.repeat(249)}.com/app:1`)),
  },
  {
    name: 'copyMetadata a*a*a*a*a*a*a*a*b, a source with a 63-character annotation key',
    before: '81 s (reconciler)',
    run: () => () => once(() => applyCopyMetadata(hostileSource, { annotations: { include: ['a*a*a*a*a*a*a*a*b'] } })),
  },
  {
    name: `10,000 names and 10,000 exclusion patterns (each its own start); then ${NAMESPACES} namespaces`,
    before: '18.6 s (admission)',
    run: () =>
      admitAndTarget(
        () => distribution({
          includedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ name: `team-${i}` })) },
          excludedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ pattern: `team-${i}-*` })) },
        }),
        namespaces,
      ),
  },
  {
    name: `the costliest patterns per name admission allows (4 of *aN*b*); then ${NAMESPACES} namespaces`,
    before: '-',
    run: () => admitAndTarget(() => distribution({ includedNamespaces: { list: Array.from({ length: 4 }, (_, i) => ({ pattern: `*a${i}*b*` })) } }), namespaces),
  },
  {
    name: '1,000 names of 63 characters against the costliest exclusions admission allows (5 of *xN*)',
    before: '-',
    run: () => admitAndTarget(() => distribution(namesAgainstExclusions(1_000)), []),
  },
  {
    name: '10,000 names of 63 characters against the same: denied',
    before: '-',
    run: () => admitAndTarget(() => distribution(namesAgainstExclusions(10_000)), []),
  },
  {
    name: 'copyMetadata near its bound (40 globs of *aN*b), a source with 200 keys of 317 characters',
    before: '-',
    run: () => () =>
      once(() =>
        applyCopyMetadata(
          { ...hostileSource, metadata: { name: 'settings', annotations: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`${'a'.repeat(250)}.io/${String(i).padStart(62, 'a')}`, 'x'])) } },
          { annotations: { include: Array.from({ length: 40 }, (_, i) => `*a${i}*b`) } },
        ),
      ),
  },
  {
    name: 'copyData near its bound (*a*a*a*a*a*b*), a source of 6,000 keys of 253 characters (1.5 MB, what the API server stores at most)',
    before: '-',
    run: () => {
      const source = largeSecret();
      return () => once(() => applyCopyData(source, { include: ['*a*a*a*a*a*b*'] }));
    },
  },
  {
    name: 'copyData include ca.crt, exclude *.key, the same source',
    before: '-',
    run: () => {
      const source = largeSecret();
      return () => once(() => applyCopyData(source, { include: ['ca.crt'], exclude: ['*.key'] }));
    },
  },
];

/** The whole work's time, and its longest step's, in ms. */
function timed(steps: Steps<void>): { ms: number; heldMs: number } {
  const start = performance.now();
  let heldMs = 0;
  for (;;) {
    const stepStart = performance.now();
    const step = steps.next();
    heldMs = Math.max(heldMs, performance.now() - stepStart);
    if (step.done === true) break;
  }
  return { ms: performance.now() - start, heldMs };
}

function main(): void {
  const budget = budgetMs(process.argv, '--budget-ms', 100);
  // What one request may hold every other webhook call and the reconciler up for: a few ms measured
  // here (bench/results and docs/concepts/targets.md), with room for a garbage collection.
  const holdBudget = budgetMs(process.argv, '--hold-budget-ms', 15);
  const over: string[] = [];
  console.log(`| input | before | work ms, median (of ${RUNS}) | longest hold of the event loop ms, median | longest hold, max |`);
  console.log('|---|---|---|---|---|');
  for (const { name, before, run } of cases) {
    const runs = Array.from({ length: RUNS }, () => {
      const work = run()();
      // A collection left over from making the input would be timed as the product's.
      (globalThis as { gc?: () => void }).gc?.();
      return timed(work);
    });
    const ms = median(runs.map((r) => r.ms));
    const held = median(runs.map((r) => r.heldMs));
    console.log(`| ${name} | ${before} | ${round(ms, 2)} | ${round(held, 2)} | ${round(Math.max(...runs.map((r) => r.heldMs)), 2)} |`);
    if (ms > budget) over.push(`${name}: worked ${round(ms, 1)} ms (budget ${budget} ms)`);
    if (held > holdBudget) over.push(`${name}: held the event loop ${round(held, 1)} ms at a time (budget ${holdBudget} ms)`);
  }
  if (over.length > 0) {
    console.error(`over the budget:\n${over.join('\n')}`);
    process.exitCode = 1;
  } else console.log(`every input within the budgets: ${budget} ms of work, ${holdBudget} ms held at a time`);
}

main();
