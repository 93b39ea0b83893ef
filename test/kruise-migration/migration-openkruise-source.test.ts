// Migration from a running kruise-manager built from an OpenKruise source tree (a snapshot of
// master: its CRD stores v1beta1 behind its conversion webhook), the same test as the v1.9.0 one
// of the e2e tier (test/e2e/support/kruise-migration.ts). CI has no source tree: this tier runs
// only when asked, `KRUISE_SOURCE=<dir> npm run test:kruise-migration` (docs/development.md).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { binaryCacheDir } from '../control-plane/index.js';
import { describeKruiseMigration } from '../e2e/support/kruise-migration.js';

/** The tree named by KRUISE_SOURCE: this tier's one input. */
async function sourceDir(): Promise<string> {
  const dir = process.env.KRUISE_SOURCE;
  if (dir === undefined || dir === '') throw new Error('KRUISE_SOURCE must name an OpenKruise source tree (see docs/development.md)');
  await access(join(dir, 'config/crd/bases/apps.kruise.io_resourcedistributions.yaml')).catch(() => {
    throw new Error(`KRUISE_SOURCE=${dir} is not an OpenKruise source tree: no config/crd/bases/apps.kruise.io_resourcedistributions.yaml`);
  });
  return resolve(dir);
}

/** `go build` in the tree (its own go.mod; Go's build cache makes a second run quick), into the tools cache. */
async function build(): Promise<string> {
  const dir = await sourceDir();
  const output = join(await binaryCacheDir(), `kruise-manager-source-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
  console.log(`building kruise-manager from ${dir} (a first build takes minutes)`);
  const env = { ...process.env, GONOSUMDB: 'github.com/openkruise', GOFLAGS: '-buildvcs=false' };
  await promisify(execFile)('go', ['build', '-o', output, '.'], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 });
  return output;
}

describeKruiseMigration({ version: 'from KRUISE_SOURCE', sourceDir, binary: build });
