// Writes docs/reference/api.md from the CRDs of webhook-config/crd/ (`npm run docs:api`); run it
// after editing a CRD: a unit test fails while the page and the CRDs disagree.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiReference } from './docs/api-reference.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The CRD files, in name order, as the page lists them. */
export async function crdFiles(root: string): Promise<{ file: string; text: string }[]> {
  const dir = join(root, 'webhook-config/crd');
  const files = (await readdir(dir)).filter((name) => name.endsWith('.yaml')).sort();
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(join(dir, file), 'utf8') })));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await writeFile(join(ROOT, 'docs/reference/api.md'), apiReference(await crdFiles(ROOT)));
  console.log('docs/reference/api.md');
}
