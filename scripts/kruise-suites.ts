// `npm run test:kruise-suites -- --kruise v1.9.0` (a tagged OpenKruise module, from the module
// proxy) or `-- --source <folder>` (a snapshot or checkout of openkruise/kruise): builds that
// release's own e2e suite unchanged and runs its ResourceDistribution specs, each suite file against
// a control plane of its own with this project serving ResourceDistribution (both versions,
// conversion webhook); prints the counts per suite file. `--ginkgo.<flag>=<value>` goes to the suite.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startLocalServer, type RunningServer } from '../src/main.js';
import { onlyKnownDifferences, summarizeGinkgoReport, type KnownDifference, type SuiteCounts } from '../test/control-plane/ginkgo-report.js';
import { ensureKruiseSuite, type KruiseSuiteOrigin } from '../test/control-plane/kruise-suite.js';
import { REPO_ROOT, startLocalCluster, type ControlPlane } from '../test/control-plane/index.js';
import { connectionOf } from '../test/kube-client.js';

const log = (line: string): void => console.error(`[kruise-suites] ${line}`);

/** Ginkgo's label of every ResourceDistribution spec, in both suite files. */
const DEFAULT_LABEL_FILTER = 'ResourceDistribution';
/** The suite files of ResourceDistribution, under the suite's test/e2e/. */
const SUITE_FILES = ['apps/v1alpha1/resourcedistribution.go', 'apps/v1beta1/resourcedistribution.go'];

/**
 * Where this project differs from OpenKruise by choice (docs/migrating-from-openkruise.md, "Kruise's
 * own e2e suites"): such a spec may fail, and only by its documented assertion.
 */
const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    spec: 'resourcedistribution functionality checker',
    failure: 'to have length 6',
    why: "status.conditions holds OpenKruise's six conditions, in its order, then Ready and Stalled (read by kstatus, Flux and Argo CD): eight, where the spec expects exactly six",
  },
];

interface Options {
  origin: KruiseSuiteOrigin;
  labelFilter: string;
  ginkgoArgs: string[];
}

function parseOptions(argv: string[]): Options {
  const { values, tokens } = parseArgs({
    args: argv,
    options: { kruise: { type: 'string' }, source: { type: 'string' }, 'label-filter': { type: 'string' } },
    strict: false,
    tokens: true,
  });
  const ginkgoArgs = tokens.flatMap((token) => (token.kind === 'option' && token.name.startsWith('ginkgo.') ? [token.rawName + (token.value === undefined ? '' : `=${token.value}`)] : []));
  const kruise = typeof values.kruise === 'string' ? values.kruise : undefined;
  const source = typeof values.source === 'string' ? values.source : undefined;
  if ((kruise === undefined) === (source === undefined)) {
    throw new Error('usage: npm run test:kruise-suites -- (--kruise <tag, e.g. v1.9.0> | --source <openkruise/kruise folder>) [--label-filter <ginkgo label filter>] [--ginkgo.<flag>=<value> ...]');
  }
  const labelFilter = typeof values['label-filter'] === 'string' ? values['label-filter'] : DEFAULT_LABEL_FILTER;
  return { origin: kruise === undefined ? { source: source ?? '' } : { version: kruise }, labelFilter, ginkgoArgs };
}

/**
 * A control plane with the CRD only (no example policies: they would distribute into the suite's
 * namespaces) and the product. Kruise's framework waits for the `default` ServiceAccount of each
 * namespace it creates, as a real cluster makes them: hence the ServiceAccount controller.
 */
async function startProduct(workDir: string): Promise<{ plane: ControlPlane; server: RunningServer }> {
  const plane = await startLocalCluster({ manifests: [], kubeconfigPath: join(workDir, 'kubeconfig'), extraControllers: ['serviceaccount-controller'], log });
  try {
    const server = await startLocalServer({
      connection: connectionOf(plane.kubeConfig),
      env: {
        RD_LOG_LEVEL: 'warn',
        RD_WEBHOOK_CLIENT_CA_FILE: plane.webhookClient.caFile,
        RD_WEBHOOK_CLIENT_NAMES: plane.webhookClient.commonName,
        RD_REGISTER_CONVERSION: 'true',
      },
      certDir: join(workDir, 'certs'),
    });
    return { plane, server };
  } catch (error) {
    await plane.stop();
    throw error;
  }
}

/** The suite reads its kubeconfig from KUBECONFIG only (its --kubeconfig flag is parsed but unused). */
function runSuite(binary: string, kubeconfig: string, args: string[]): Promise<number> {
  log(`KUBECONFIG=${kubeconfig} ${binary} ${args.join(' ')}`);
  const child = spawn(binary, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, KUBECONFIG: kubeconfig } });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

function printCounts(counts: SuiteCounts[], revision: string): void {
  console.log(`\nOpenKruise ${revision}: ResourceDistribution e2e specs against resource-distributor`);
  for (const suite of counts) {
    console.log(`  ${suite.suite}: ${suite.passed} passed, ${suite.failed} failed${suite.skipped ? `, ${suite.skipped} not run` : ''}`);
    for (const name of suite.passedNames) console.log(`    passed: ${name}`);
    for (const spec of suite.notPassed) {
      console.log(`    ${spec.state}${spec.known ? ' (a documented difference)' : ''}: ${spec.name}: ${spec.reason}`);
      if (spec.known) console.log(`      why: ${spec.known}`);
    }
  }
  if (counts.length === 0) console.log('  no ResourceDistribution spec ran');
}

/**
 * One suite file on a control plane and product of its own: a spec that fails midway leaves its
 * namespaces behind (the suites clean up only at their end), and the other file's selectors match
 * them (both label theirs `e2e-rd-group: one`), so a failure in one file would fail the other.
 */
async function runFile(binary: string, file: string, options: Options, reportPath: string): Promise<unknown[]> {
  const workDir = await mkdtemp(join(tmpdir(), 'kruise-suites-'));
  try {
    const { plane, server } = await startProduct(workDir);
    try {
      await runSuite(binary, plane.kubeconfigPath, [
        `--ginkgo.label-filter=${options.labelFilter}`,
        `--ginkgo.focus-file=${file}`,
        `--ginkgo.json-report=${reportPath}`,
        '--ginkgo.no-color',
        ...options.ginkgoArgs,
      ]);
    } finally {
      await server.stop();
      await plane.stop();
    }
    return JSON.parse(await readFile(reportPath, 'utf8')) as unknown[];
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const suite = await ensureKruiseSuite(options.origin, log);
  log(`suite of OpenKruise ${suite.revision} from ${suite.dir}`);
  const reportDir = join(REPO_ROOT, '.local', 'kruise-suites');
  await mkdir(reportDir, { recursive: true });
  const counts: SuiteCounts[] = [];
  for (const file of SUITE_FILES) {
    const reportPath = join(reportDir, `${suite.revision}-${file.replaceAll('/', '-')}.json`);
    const report = await runFile(suite.binary, file, options, reportPath);
    log(`Ginkgo's report: ${reportPath}`);
    counts.push(...summarizeGinkgoReport(report as [], (name) => name === file, KNOWN_DIFFERENCES));
  }
  printCounts(counts, suite.revision);
  // The suite exits 1 for the documented differences too: its specs decide, not its exit code.
  const clean = onlyKnownDifferences(counts);
  if (!clean) log('a spec failed that is not a documented difference');
  process.exitCode = clean ? 0 : 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
