// npm run test:k8s-versions -- --kubernetes 1.NN [--files a.test.ts,b.test.ts]
// Builds the control plane (etcd, kube-apiserver, kube-controller-manager, kubectl) of one
// Kubernetes minor from its wrapper module (test/control-plane/versions/v1.NN/; the default
// module's minor needs none), then runs a representative subset of the e2e tier against it. Prints
// the build and test times and the pass counts; exits as the tests did.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBinaries, ensureTool, KUBERNETES_VERSION_VARIABLE, kubernetesModuleDir, kubernetesVersion, MODULE_DIR } from '../control-plane/binaries.js';
import { REPO_ROOT } from '../control-plane/index.js';

/**
 * What the API server of each minor has to get right for the product: admission webhooks
 * (distributions, namespaces, pods, dry runs), the CRD's schema and CEL validation, reads of the
 * OpenAPI v3 documents and `kubectl explain`, conversion between v1alpha1 and v1beta1, and copies
 * reconciled through watches, the garbage collector and namespace deletion.
 */
export const REPRESENTATIVE_FILES = [
  'test/e2e/smoke.test.ts',
  'test/e2e/admission.test.ts',
  'test/e2e/pod-mutation.test.ts',
  'test/e2e/api-versions.test.ts',
  'test/e2e/reconcile-kinds.test.ts',
  'test/e2e/reconcile-copies.test.ts',
];

const say = (line: string): void => console.error(`[k8s-versions ${new Date().toISOString().slice(11, 19)}] ${line}`);

interface VitestJson {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
}

function runVitest(files: readonly string[], env: NodeJS.ProcessEnv, outputFile: string): Promise<number> {
  const vitest = join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');
  const args = [vitest, 'run', '--project', 'e2e', '--reporter=default', '--reporter=json', `--outputFile.json=${outputFile}`, ...files];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** The minor of the default wrapper module runs without RD_KUBERNETES_VERSION; any other needs its own module. */
async function selection(minor: string): Promise<string | undefined> {
  const defaultVersion = await kubernetesVersion(join(MODULE_DIR, 'go.mod'));
  return defaultVersion.startsWith(`v${minor}.`) ? undefined : minor;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { kubernetes: { type: 'string' }, files: { type: 'string' } } });
  if (!values.kubernetes) {
    say('usage: npm run test:k8s-versions -- --kubernetes 1.NN [--files a.test.ts,b.test.ts]');
    return 2;
  }
  const selected = await selection(values.kubernetes);
  if (selected === undefined) delete process.env[KUBERNETES_VERSION_VARIABLE];
  else process.env[KUBERNETES_VERSION_VARIABLE] = selected;
  const version = await kubernetesVersion(join(await kubernetesModuleDir(), 'go.mod'));
  const files = values.files ? values.files.split(',').filter(Boolean) : REPRESENTATIVE_FILES;

  const buildStarted = Date.now();
  say(`Kubernetes ${version}: building etcd, kube-apiserver, kube-controller-manager and kubectl if missing`);
  await ensureBinaries({ log: say });
  await ensureTool('kubectl', { log: say });
  const buildSeconds = (Date.now() - buildStarted) / 1000;

  const outDir = await mkdtemp(join(tmpdir(), 'rd-k8s-versions-'));
  try {
    const testStarted = Date.now();
    const code = await runVitest(files, process.env, join(outDir, 'results.json'));
    const testSeconds = (Date.now() - testStarted) / 1000;
    const result = await readFile(join(outDir, 'results.json'), 'utf8').then((text) => JSON.parse(text) as VitestJson, () => undefined);
    if (!result) {
      say(`Kubernetes ${version}: vitest wrote no results (did the global setup fail?)`);
      return code === 0 ? 1 : code;
    }
    const skipped = result.numPendingTests + result.numTodoTests;
    say(`Kubernetes ${version}: build ${buildSeconds.toFixed(0)} s, tests ${testSeconds.toFixed(0)} s, ${files.length} files, ${result.numTotalTests} tests`);
    console.log(`${result.numPassedTests} passed, ${result.numFailedTests} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
    return code;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
