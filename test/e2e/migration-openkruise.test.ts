// Migration from a running OpenKruise v1.9.0 (kruise-manager built from its Go module, pinned in
// test/tools/kruise-manager/), with the documented switch: see test/e2e/support/kruise-migration.ts.
// OpenKruise master, from a source tree, is the same test run by `npm run test:kruise-migration`.
import { ensureTool } from '../control-plane/index.js';
import { kruiseModuleDir } from '../control-plane/kruise-manager.js';
import { describeKruiseMigration } from './support/kruise-migration.js';

describeKruiseMigration({ version: 'v1.9.0', sourceDir: kruiseModuleDir, binary: () => ensureTool('kruise-manager') });
