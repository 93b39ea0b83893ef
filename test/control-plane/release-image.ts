// An earlier release of the product, built from the repository's history: its sources (and so its
// chart) are `git archive` of the commit, its image is built from that commit's Dockerfile the way
// the current one is (image-build.ts) and kept by commit beside the current image's archive, so
// that only the first run on a machine builds it.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ImageBuilder } from './image-build.js';
import { REPO_ROOT } from './local-cluster.js';
import { imageCacheDir } from './product-image-cache.js';

const run = promisify(execFile);

/** The release's image: a docker-archive of `<repository>:<tag>` a node imports. */
export interface ReleaseImage {
  commit: string;
  archive: string;
  repository: string;
  tag: string;
  /** Seconds the build took in this run (0: kept from an earlier run). */
  buildSeconds: number;
}

/** The files of `commit` (or of its folder `path`) extracted into a new temporary folder. */
export async function checkoutOf(commit: string, path?: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `rd-release-${commit.slice(0, 7)}-`));
  const archive = join(dir, 'sources.tar');
  try {
    await run('git', ['archive', '--format=tar', '--output', archive, commit, ...(path ? [path] : [])], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 });
    await run('tar', ['-xf', archive, '-C', dir]);
    await rm(archive);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`the sources of ${commit} (git archive): ${String(error)}; the repository's history must hold that commit (not a shallow clone)`, { cause: error });
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * The image of `commit`, named `localhost/resource-distributor:<commit>`: the archive kept from an
 * earlier run, or built now with `builder` and kept (`release-<commit>.docker.tar`, which the
 * current image's cache never removes).
 */
export async function ensureReleaseImage(builder: ImageBuilder, commit: string, log: (line: string) => void): Promise<ReleaseImage> {
  const repository = 'localhost/resource-distributor';
  const tag = commit.slice(0, 12);
  const archive = join(imageCacheDir(), `release-${commit}.docker.tar`);
  if (await stat(archive).then(() => true, () => false)) return { commit, archive, repository, tag, buildSeconds: 0 };
  log(`building the image of release ${tag} from its Dockerfile (none kept for it)`);
  const sources = await checkoutOf(commit);
  try {
    const built = await builder.buildProductImage({ context: sources.dir, name: `${repository}:${tag}` });
    await mkdir(imageCacheDir(), { recursive: true });
    const partial = `${archive}.partial-${process.pid}`;
    await builder.push(built.name, `docker-archive:${partial}:${built.name}`);
    await rename(partial, archive);
    return { commit, archive, repository, tag, buildSeconds: built.buildSeconds };
  } finally {
    await sources.remove();
  }
}
