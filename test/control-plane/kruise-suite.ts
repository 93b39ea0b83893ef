import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, constants, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { binaryCacheDir, MODULE_DIR } from './binaries.js';
import { acquireLock } from './build-lock.js';

const KRUISE_MODULE = 'github.com/openkruise/kruise';
const KRUISE_MANAGER_DIR = join(MODULE_DIR, '..', 'tools', 'kruise-manager');
const PROGRESS_EVERY_MS = 30_000;
const STDERR_TAIL_CHARS = 4_000;

/**
 * OpenKruise's tagged modules are not in the checksum database (go.sum of test/tools/kruise-manager
 * says the same); the installed toolchain builds, never a downloaded one.
 */
const goEnv = (): NodeJS.ProcessEnv => ({ ...process.env, GOTOOLCHAIN: 'local', GONOSUMDB: 'github.com/openkruise' });

/** Which Kruise e2e suite: a tagged module (from the module proxy) or a source folder (a snapshot or checkout). */
export type KruiseSuiteOrigin = { version: string } | { source: string };

export interface KruiseSuite {
  /** The built e2e test binary (Ginkgo), in the cache beside the control plane's binaries. */
  binary: string;
  /** The Kruise folder it was built from. */
  dir: string;
  /** The tag, the source's git commit, or `src-<hash>` outside git. */
  revision: string;
}

/** Downloads (or finds) the tagged module in the Go module cache; returns its folder. */
async function moduleDir(version: string): Promise<string> {
  const { stdout } = await promisify(execFile)('go', ['mod', 'download', '-json', `${KRUISE_MODULE}@${version}`], {
    cwd: KRUISE_MANAGER_DIR,
    env: goEnv(),
    maxBuffer: 1 << 20,
  });
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir) throw new Error(`go mod download ${KRUISE_MODULE}@${version} names no folder`);
  return dir;
}

/** The folder's git commit; `src-<hash>` for a folder outside git (e.g. a `git archive` snapshot). */
async function sourceRevision(dir: string, hash: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('git', ['-C', dir, 'rev-parse', 'HEAD']);
    return stdout.trim();
  } catch {
    return `src-${hash}`;
  }
}

/** What the build depends on in a source folder: every .go file, go.mod and go.sum (not vendor/, not .git/). */
async function sourceHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && (entry.name.endsWith('.go') || entry.name === 'go.mod' || entry.name === 'go.sum'))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .filter((path) => !path.startsWith('vendor/') && !path.startsWith('.git/'))
    .sort();
  for (const file of files) hash.update(`${file}\0`).update(await readFile(join(dir, file))).update('\0');
  return hash.digest('hex').slice(0, 12);
}

async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** `go test -c ./test/e2e` in the Kruise folder, unchanged (vet off: it checks Kruise's code, not ours). */
function runGoTestBuild(dir: string, output: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  const child = spawn('go', ['test', '-c', '-vet=off', '-o', output, './test/e2e'], { cwd: dir, env: goEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const ticker = setInterval(() => log(`still building the Kruise e2e suite: ${Math.round((Date.now() - started) / 1000)} s`), PROGRESS_EVERY_MS);
  return new Promise<void>((resolve, reject) => {
    child.on('error', (error) => {
      clearInterval(ticker);
      reject(new Error(`cannot start go test -c in ${dir}: ${error.message}`));
    });
    child.on('exit', (code, signal) => {
      clearInterval(ticker);
      if (code === 0) {
        log(`built the Kruise e2e suite in ${Math.round((Date.now() - started) / 1000)} s`);
        resolve();
      } else reject(new Error(`go test -c ./test/e2e in ${dir} failed (${signal ?? `exit ${String(code)}`}):\n${stderr}`));
    });
  });
}

/**
 * Returns OpenKruise's e2e test binary for `origin`, building it on first use into the cache of
 * the control plane's binaries: `kruise-e2e-<tag>`, or `kruise-e2e-src-<hash of the sources>` so
 * that another snapshot builds again. Its own lock, like the tools.
 */
export async function ensureKruiseSuite(origin: KruiseSuiteOrigin, log: (line: string) => void): Promise<KruiseSuite> {
  const dir = 'version' in origin ? await moduleDir(origin.version) : origin.source;
  const hash = 'version' in origin ? '' : await sourceHash(dir);
  const revision = 'version' in origin ? origin.version : await sourceRevision(dir, hash);
  const file = 'version' in origin ? `kruise-e2e-${origin.version}` : `kruise-e2e-src-${hash}`;
  const binDir = await binaryCacheDir();
  const binary = join(binDir, file);
  if (await isExecutable(binary)) return { binary, dir, revision };
  await mkdir(binDir, { recursive: true });
  const release = await acquireLock(join(binDir, '.kruise-e2e.lock'), log);
  try {
    if (!(await isExecutable(binary))) {
      log(`building ${file} from ${dir} (a cold build takes several minutes)`);
      const temporary = join(binDir, `.${file}.tmp-${process.pid}`);
      try {
        await runGoTestBuild(dir, temporary, log);
        await rename(temporary, binary);
      } finally {
        await rm(temporary, { force: true });
      }
    }
  } finally {
    await release();
  }
  return { binary, dir, revision };
}
