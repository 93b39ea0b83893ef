import { mkdir, mkdtemp, readdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CertificateBundle } from '../../../src/tls/certificates.js';
import { fileStore } from '../../../src/tls/file-store.js';

const bundle: CertificateBundle = { ca: { cert: 'ca-cert', key: 'ca-key' }, serving: { cert: 'cert', key: 'key' }, trust: 'trust' };

describe('fileStore', () => {
  // The folder holds the CA's private key: only its owner may list or read it.
  it.each([
    ['a folder it creates', false],
    ['a folder that existed open to everyone', true],
  ])('leaves %s at mode 0700 and the files at 0600', async (_what, existed) => {
    const dir = join(await mkdtemp(join(tmpdir(), 'rd-file-store-')), 'certs');
    if (existed) await mkdir(dir, { mode: 0o777 });
    await fileStore(dir).save(bundle, undefined);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const file of await readdir(dir)) expect((await stat(join(dir, file))).mode & 0o777).toBe(0o600);
    expect((await fileStore(dir).load())?.bundle).toEqual(bundle);
  });
});
