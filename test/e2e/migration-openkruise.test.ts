// Migration from a running OpenKruise v1.9.0 (kruise-manager built from its Go module, pinned in
// test/tools/kruise-manager/), with the documented switch: see test/e2e/support/kruise-migration.ts.
// OpenKruise master, from a source tree, is the same test run by `npm run test:kruise-migration`.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ensureTool } from '../control-plane/index.js';
import { describeKruiseMigration } from './support/kruise-migration.js';

/** OpenKruise v1.9.0's own files, from its module as the Go module proxy serves it. */
async function kruiseModuleDir(): Promise<string> {
  const env = { ...process.env, GOFLAGS: '-mod=mod', GONOSUMDB: 'github.com/openkruise' };
  const { stdout } = await promisify(execFile)('go', ['mod', 'download', '-json', 'github.com/openkruise/kruise'], { cwd: 'test/tools/kruise-manager', env });
  return (JSON.parse(stdout) as { Dir: string }).Dir;
}

describeKruiseMigration({ version: 'v1.9.0', sourceDir: kruiseModuleDir, binary: () => ensureTool('kruise-manager') });
