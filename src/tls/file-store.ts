import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CertificateBundle } from './certificates.js';
import { BUNDLE_KEYS, bundleEntries, bundleFromEntries, type CertificateStore, type StoredBundle } from './store.js';

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Local mode: PEM files in one directory (certs/ for `npm run dev`, a temp dir in tests). */
export function fileStore(dir: string): CertificateStore {
  return {
    async load() {
      const entries = new Map<string, string | undefined>();
      for (const key of Object.values(BUNDLE_KEYS)) entries.set(key, await readOptional(join(dir, key)));
      const bundle = bundleFromEntries((key) => entries.get(key));
      return bundle ? { bundle } : undefined;
    },
    async save(bundle: CertificateBundle): Promise<StoredBundle> {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // mkdir's mode applies only to a folder it creates: one that existed keeps its mode otherwise.
      await chmod(dir, 0o700);
      for (const [key, value] of Object.entries(bundleEntries(bundle))) {
        // Write then rename, so a reader never sees half a file.
        const path = join(dir, key);
        await writeFile(`${path}.tmp`, value, { mode: 0o600 });
        await rename(`${path}.tmp`, path);
      }
      return { bundle };
    },
  };
}
