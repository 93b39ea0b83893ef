import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { registerTeardown } from './exit-hooks.js';
import { REPO_ROOT } from './local-cluster.js';
import { NODE_IMAGES, writeNodeImages } from './node-images.js';
import { NODE_COMMANDS, ensureDebianPackages } from './node-packages.js';

const run = promisify(execFile);

/** Debian's buildah (1.28): builds the Dockerfile without a Docker daemon. */
// The base image is made from the machine's static busybox (node-images.ts): on a fresh machine
// the build starts before the node, whose packages would otherwise be the first to bring it.
const BUILD_PACKAGES = { owner: "the image build's", packages: ['buildah', 'busybox-static'], files: ['/usr/bin/buildah', NODE_COMMANDS.busybox] } as const;

/** The product's image as built from the Dockerfile. */
export interface BuiltImage {
  /** Its name in the build's storage, `localhost/resource-distributor:<version>`. */
  name: string;
  /** Seconds of `buildah build` alone (the base image made and loaded before it). */
  buildSeconds: number;
  /** The base image it was built from (the Dockerfile's BASE_IMAGE). */
  baseImage: string;
}

export interface ImageBuilder {
  dir: string;
  /**
   * Builds the Dockerfile at the repository's root (or at `source.context`, a checkout of another
   * commit, named `source.name`), FROM a Node.js base made on the machine.
   */
  buildProductImage(source?: { context: string; name: string }): Promise<BuiltImage>;
  /** Copies an image of the storage to `destination` (`docker://host/name:tag`, `oci-archive:path:name`). */
  push(image: string, destination: string, options?: { certDir?: string; credentials?: string }): Promise<void>;
  /** Removes the storage; rejects if anything of it is left (a mount, the folder). */
  remove(): Promise<void>;
  /** What is left of the storage on the machine (empty once removed). */
  leftovers(): Promise<string[]>;
}

const BUILD_TIMEOUT_MS = 20 * 60_000;

/** The product's version (the image tag, as the chart's appVersion). */
async function productVersion(): Promise<string> {
  return (JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Folders of `dir` (or below) mounted anywhere in the machine's mount namespace. */
async function mountsUnder(dir: string): Promise<string[]> {
  const mountinfo = await readFile('/proc/self/mountinfo', 'utf8');
  return mountinfo
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((mountPoint) => mountPoint === dir || mountPoint.startsWith(`${dir}/`));
}

/**
 * buildah with a storage of its own (overlay driver, under a temp folder) for one test run.
 * Every buildah command runs in a private mount namespace (`unshare --mount`): the overlay
 * mounts it makes end with it, so none can outlive the run in the machine's namespace. RUN steps
 * use chroot isolation (no runc, no cgroups) with the machine's network, which `npm ci` needs.
 */
export async function createImageBuilder(log: (line: string) => void): Promise<ImageBuilder> {
  await ensureDebianPackages(BUILD_PACKAGES, log);
  const dir = await mkdtemp(join(tmpdir(), 'rd-image-'));
  // The storage goes also when the test process exits or is interrupted before remove().
  const unregister = registerTeardown({ stop: () => rm(dir, { recursive: true, force: true }), killNow: () => rmSync(dir, { recursive: true, force: true }) });
  const storage = ['--root', join(dir, 'storage'), '--runroot', join(dir, 'run'), '--storage-driver', 'overlay'];
  const buildah = async (args: readonly string[], timeout = 5 * 60_000, cwd = REPO_ROOT): Promise<string> => {
    try {
      const { stdout } = await run('unshare', ['--mount', '--propagation', 'private', 'buildah', ...storage, ...args], {
        cwd,
        timeout,
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout;
    } catch (error) {
      const failed = error as { stdout?: string; stderr?: string };
      throw new Error(`buildah ${args.join(' ')} failed:\n${(failed.stdout ?? '').slice(-3_000)}${(failed.stderr ?? String(error)).slice(-3_000)}`, {
        cause: error,
      });
    }
  };
  const leftovers = async (): Promise<string[]> => {
    const left = (await mountsUnder(dir)).map((mountPoint) => `mount ${mountPoint}`);
    const exists = await stat(dir).then(() => true, () => false);
    return exists ? [...left, `folder ${dir}`] : left;
  };

  return {
    dir,
    async buildProductImage(source) {
      const baseArchive = (await writeNodeImages(join(dir, 'base'), ['nodeBase'])).nodeBase ?? '';
      await buildah(['pull', '--quiet', `oci-archive:${baseArchive}`]);
      await rm(join(dir, 'base'), { recursive: true });
      const name = source?.name ?? `localhost/resource-distributor:${await productVersion()}`;
      const started = Date.now();
      await buildah(
        [
          'build',
          '--isolation',
          'chroot',
          '--network',
          'host',
          '--pull-never',
          '--layers=false',
          '--build-arg',
          `BASE_IMAGE=${NODE_IMAGES.nodeBase}`,
          '--tag',
          name,
          '--file',
          'Dockerfile',
          '.',
        ],
        BUILD_TIMEOUT_MS,
        source?.context,
      );
      return { name, buildSeconds: (Date.now() - started) / 1000, baseImage: NODE_IMAGES.nodeBase };
    },
    async push(image, destination, options = {}) {
      const flags = [
        ...(options.certDir ? ['--cert-dir', options.certDir] : []),
        ...(options.credentials ? ['--creds', options.credentials] : []),
      ];
      await buildah(['push', '--quiet', ...flags, image, destination]);
    },
    async remove() {
      await rm(dir, { recursive: true, force: true });
      unregister();
      const left = await leftovers();
      if (left.length > 0) throw new Error(`the image build left ${left.join(', ')}`);
    },
    leftovers,
  };
}
