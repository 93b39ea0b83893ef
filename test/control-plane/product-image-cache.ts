// The product's image built from the Dockerfile, kept between runs as a docker-archive under a key
// of everything its build reads (the files the build context holds by .dockerignore, the
// Dockerfile, and the Node.js the base image is made of): the node tier keeps the image it built,
// and the chaos soak imports that one into its node instead of building it again, or builds and
// keeps it when there is none for the current sources.
import { createHash } from 'node:crypto';
import { copyFile, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { createImageBuilder } from './image-build.js';
import { REPO_ROOT } from './local-cluster.js';
import { NODE_IMAGES } from './node-images.js';

/** An image archive in the cache: import it, then run `<repository>:<tag>`. */
export interface CachedProductImage {
  archive: string;
  repository: string;
  tag: string;
  key: string;
}

/** `${XDG_CACHE_HOME:-~/.cache}/resource-distributor/images` */
export function imageCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'resource-distributor', 'images');
}

/** A .dockerignore pattern (`*`, `**`) as a regular expression over a path relative to the context. */
function globPattern(glob: string): RegExp {
  const body = glob
    .replace(/\/$/, '')
    .split(/(\*\*\/|\*\*|\*)/)
    .map((part) => (part === '**/' ? '(?:.*/)?' : part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${body}(?:/.*)?$`);
}

/**
 * Whether `path` is in the build context by `dockerignore`'s rules (the last matching line wins;
 * `!` lets a path back in), as the Docker builder reads them.
 */
export function inBuildContext(dockerignore: string, path: string): boolean {
  let included = true;
  for (const raw of dockerignore.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (globPattern(negated ? line.slice(1) : line).test(path)) included = negated;
  }
  return included;
}

/** The key of a build's inputs: each file's path and content, in path order, and the other inputs named. */
export function imageKey(files: readonly { path: string; content: string | Buffer }[], others: readonly string[]): string {
  const hash = createHash('sha256');
  for (const file of [...files].sort((a, b) => a.path.localeCompare(b.path))) hash.update(`${file.path}\0`).update(file.content).update('\0');
  for (const other of others) hash.update(`${other}\0`);
  return hash.digest('hex').slice(0, 16);
}

async function filesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) files.push(...(await filesUnder(join(dir, entry.name))));
    else files.push(join(dir, entry.name));
  }
  return files;
}

/** The key of the image the repository's Dockerfile builds now. */
export async function productImageKey(): Promise<string> {
  const dockerignore = await readFile(join(REPO_ROOT, '.dockerignore'), 'utf8');
  const roots = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'webhook-config'];
  const paths: string[] = [];
  for (const root of roots) {
    const full = join(REPO_ROOT, root);
    paths.push(...((await stat(full)).isDirectory() ? await filesUnder(full) : [full]));
  }
  const context = paths.map((path) => relative(REPO_ROOT, path)).filter((path) => inBuildContext(dockerignore, path));
  const files = await Promise.all(context.map(async (path) => ({ path, content: await readFile(join(REPO_ROOT, path)) })));
  const dockerfile = await readFile(join(REPO_ROOT, 'Dockerfile'), 'utf8');
  return imageKey(files, [dockerfile, dockerignore, NODE_IMAGES.nodeBase, process.version]);
}

const metadataFile = (key: string): string => join(imageCacheDir(), `product-${key}.json`);

/** The archive of the image the sources build now, when one is kept. */
export async function cachedProductImage(): Promise<CachedProductImage | undefined> {
  const key = await productImageKey();
  try {
    const kept = JSON.parse(await readFile(metadataFile(key), 'utf8')) as CachedProductImage;
    await stat(kept.archive);
    return kept;
  } catch {
    return undefined;
  }
}

/**
 * Keeps `archive` (a docker-archive of `<repository>:<tag>`) as the image of `key`, linked when
 * on the same file system (else copied); older images go: each is about 200 MiB.
 */
export async function keepProductImage(archive: string, repository: string, tag: string, key: string): Promise<CachedProductImage> {
  const dir = imageCacheDir();
  await mkdir(dir, { recursive: true });
  const kept = join(dir, `product-${key}.docker.tar`);
  if (archive !== kept) {
    const partial = `${kept}.partial-${process.pid}`;
    await link(archive, partial).catch(() => copyFile(archive, partial));
    await rename(partial, kept);
  }
  const image: CachedProductImage = { archive: kept, repository, tag, key };
  await writeFile(metadataFile(key), JSON.stringify(image));
  for (const name of await readdir(dir)) if (name.startsWith('product-') && !name.includes(key)) await rm(join(dir, name), { force: true });
  return image;
}

/** The image the sources build now: the one kept, or built now with buildah (1.5-5 min) and kept. */
export async function ensureProductImage(log: (line: string) => void): Promise<CachedProductImage> {
  const cached = await cachedProductImage();
  if (cached) {
    log(`the product's image for these sources is kept (${cached.archive})`);
    return cached;
  }
  const key = await productImageKey();
  log('building the product image from the Dockerfile (buildah; none kept for these sources)');
  const builder = await createImageBuilder(log);
  try {
    const built = await builder.buildProductImage();
    const [repository = '', tag = ''] = built.name.split(/:(?=[^:]*$)/);
    const archive = join(imageCacheDir(), `product-${key}.docker.tar`);
    await mkdir(imageCacheDir(), { recursive: true });
    await builder.push(built.name, `docker-archive:${archive}:${built.name}`);
    log(`image ${built.name} built in ${built.buildSeconds.toFixed(0)} s`);
    return await keepProductImage(archive, repository, tag, key);
  } finally {
    await builder.remove();
  }
}
