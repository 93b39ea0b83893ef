// npm run bench:hostile [-- --budget-ms 100]
//
// How long the product's own code holds the event loop for inputs made to stall it: the glob
// inputs that once held it for 31, 37 and 81 s, and the costliest inputs admission still lets
// through (at its bounds for name patterns and copyMetadata globs). Each case runs the product's
// functions as the webhooks and the reconciler call them, synchronously: while one runs, nothing
// else in the process does, so its time is the event loop's delay. Prints a table; exits 1 when a
// case takes longer than the budget (its median of 5 runs), so the budget is held by CI.
import { applyCopyMetadata } from '../src/domain/copy-metadata.js';
import { credentialsMatch, registryKeys } from '../src/domain/registry-credentials.js';
import { compileSpecValidator } from '../src/domain/schema.js';
import { computeTargets, listedTargets } from '../src/domain/targets.js';
import type { NamespaceInfo, Resource, Targets } from '../src/domain/types.js';
import { validateDistribution } from '../src/domain/validate.js';
import { loadCrdSchema } from '../src/k8s/crd-schema.js';
import { median, round } from './stats.js';

const RUNS = 5;
const NAMESPACES = 10_000;
const schema = compileSpecValidator(loadCrdSchema());
const b64 = (value: string): string => Buffer.from(value).toString('base64');

function budgetMs(argv: readonly string[]): number {
  const at = argv.indexOf('--budget-ms');
  const value = at < 0 ? 100 : Number(argv[at + 1]);
  if (!(value > 0)) throw new Error('--budget-ms takes a positive number of milliseconds');
  return value;
}

function distribution(targets: Targets, extra: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ResourceDistribution',
    metadata: { name: 'hostile' },
    spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } }, targets, ...extra },
  };
}

/** Admission's work on the distribution's targets, then one pass's targets over every namespace. */
function admitAndTarget(make: () => unknown, namespaces: readonly NamespaceInfo[]): () => void {
  // Made anew for each run, before it is timed: the compiled rules are remembered per targets object.
  const object = make();
  return () => {
  const { problems } = validateDistribution({ object, schema });
  if (problems.length > 0) return;
  const { targets } = (object as { spec: { targets: Targets } }).spec;
  listedTargets(targets);
  computeTargets(targets, namespaces);
  };
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
  /** Makes the input, and returns the work to time. */
  run: () => () => void;
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
    run: () => () => credentialsMatch(registryKeys('kubernetes.io/dockerconfigjson', pullSecret), `${'a'.repeat(4000)}.com/app:1`),
  },
  {
    name: 'registry key a*a*a*b.com, an image host of 253 characters',
    before: '-',
    run: () => () => credentialsMatch(registryKeys('kubernetes.io/dockerconfigjson', pullSecret), `${'a'.repeat(249)}.com/app:1`),
  },
  {
    name: 'copyMetadata a*a*a*a*a*a*a*a*b, a source with a 63-character annotation key',
    before: '81 s (reconciler)',
    run: () => () => applyCopyMetadata(hostileSource, { annotations: { include: ['a*a*a*a*a*a*a*a*b'] } }),
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
      applyCopyMetadata(
        { ...hostileSource, metadata: { name: 'settings', annotations: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`${'a'.repeat(250)}.io/${String(i).padStart(62, 'a')}`, 'x'])) } },
        { annotations: { include: Array.from({ length: 40 }, (_, i) => `*a${i}*b`) } },
      ),
  },
];

function main(): void {
  const budget = budgetMs(process.argv);
  const over: string[] = [];
  console.log(`| input | before | median ms (of ${RUNS}) | longest event-loop delay ms |`);
  console.log('|---|---|---|---|');
  for (const { name, before, run } of cases) {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const work = run();
      const start = performance.now();
      work();
      times.push(performance.now() - start);
    }
    const ms = median(times);
    console.log(`| ${name} | ${before} | ${round(ms, 2)} | ${round(Math.max(...times), 2)} |`);
    if (ms > budget) over.push(`${name}: ${round(ms, 1)} ms`);
  }
  if (over.length > 0) {
    console.error(`over the budget of ${budget} ms:\n${over.join('\n')}`);
    process.exitCode = 1;
  } else console.log(`every input within the budget of ${budget} ms`);
}

main();
