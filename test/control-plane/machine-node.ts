// The machine's Node.js copied into an image's root file system: no registry is reachable, so the
// images that need node (test servers, the Dockerfile's base) are made from the one installed here.
import { execFile } from 'node:child_process';
import { copyFile, cp, mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The machine's Node.js and npm (NodeSource's or Debian's nodejs package). */
const NODE_BINARY = '/usr/bin/node';
const NPM_DIR = '/usr/lib/node_modules/npm';
/** npm reaches its registry through whatever TLS the machine trusts (a proxy may re-sign). */
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** The files `binary` loads (ldd's answer): its interpreter and shared libraries, as absolute paths. */
async function sharedLibraries(binary: string): Promise<string[]> {
  const { stdout } = await run('ldd', [binary]);
  return [...stdout.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((match) => match[1] ?? '').filter(Boolean);
}

/** Copies `file` to the same path under `rootfs` (or to `as`). */
async function copyInto(rootfs: string, file: string, as = file): Promise<void> {
  const target = join(rootfs, as);
  await mkdir(dirname(target), { recursive: true });
  // copyFile follows links: the image holds the library under the name the binary asks for.
  await copyFile(file, target);
}

/** The machine's `node` at `as` in `rootfs`, with the libraries it loads at their own paths. */
export async function addMachineNode(rootfs: string, as = NODE_BINARY): Promise<void> {
  const node = await realpath(NODE_BINARY);
  for (const file of await sharedLibraries(node)) await copyInto(rootfs, file);
  await copyInto(rootfs, node, as);
}

/**
 * The layout of the official node image (what the Dockerfile's build stages and its runtime
 * stage's `rm` rely on): node and npm under /usr/local, users root and node (uid 1000), and the
 * CA bundle with NODE_EXTRA_CA_CERTS pointing at it (set in the image config).
 */
export async function addNodeBase(rootfs: string): Promise<void> {
  await addMachineNode(rootfs, '/usr/local/bin/node');
  await cp(NPM_DIR, join(rootfs, 'usr/local/lib/node_modules/npm'), { recursive: true, dereference: false });
  await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
  await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
  // npm's launcher starts with `#!/usr/bin/env node`; busybox's applets are under /bin only.
  await mkdir(join(rootfs, 'usr/bin'), { recursive: true });
  await symlink('/bin/busybox', join(rootfs, 'usr/bin/env'));
  await copyInto(rootfs, CA_BUNDLE);
  await mkdir(join(rootfs, 'etc'), { recursive: true });
  await writeFile(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n');
  await writeFile(join(rootfs, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
  await mkdir(join(rootfs, 'root'), { mode: 0o700 });
  await mkdir(join(rootfs, 'home/node'), { recursive: true });
}
