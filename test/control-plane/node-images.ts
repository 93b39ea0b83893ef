import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { addMachineNode, addNodeBase } from './machine-node.js';
import { NODE_COMMANDS } from './node-packages.js';

const run = promisify(execFile);

/**
 * The images a node can have, made on the machine (no registry is reachable): one layer holding
 * Debian's static busybox with a link per applet under /bin; the Node.js one adds the machine's
 * `node` and the shared libraries it loads.
 */
export const NODE_IMAGES = {
  /** The pod sandbox ("pause") image containerd's CRI plugin is configured with: sleeps until killed. */
  pause: 'localhost/rd-node/pause:1',
  /** A shell and the usual tools, for test pods (`imagePullPolicy: Never`). */
  busybox: 'localhost/rd-node/busybox:1',
  /** busybox plus /usr/bin/node (the machine's Node.js), for test servers written in JavaScript. */
  nodejs: 'localhost/rd-node/nodejs:1',
  /**
   * What the Dockerfile's BASE_IMAGE (node:20-alpine) gives a build, made from the machine's
   * Node.js: node and npm under /usr/local, the users root and node (1000), the CA bundle.
   */
  nodeBase: 'localhost/rd-node/node-base:20',
} as const;

export type NodeImage = keyof typeof NODE_IMAGES;

/** What every node imports; the others on request (StartNodeOptions.images). */
export const DEFAULT_NODE_IMAGES: readonly NodeImage[] = ['pause', 'busybox'];

const IMAGE_CMD: Record<NodeImage, string[]> = {
  pause: ['/bin/sleep', '2147483647'],
  busybox: ['/bin/sh'],
  nodejs: ['/usr/bin/node'],
  nodeBase: ['node'],
};

const IMAGE_ENV: Record<NodeImage, string[]> = {
  pause: ['PATH=/usr/bin:/bin'],
  busybox: ['PATH=/usr/bin:/bin'],
  nodejs: ['PATH=/usr/bin:/bin'],
  // Node.js trusts the bundle besides its own roots (npm ci in the build stages needs it).
  nodeBase: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'],
};

// Same bytes for the same input: no timestamps or owners from the machine.
const DETERMINISTIC_TAR = ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0'];

interface Blob {
  digest: string;
  size: number;
}

function sha256(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

async function writeBlob(layout: string, data: Buffer | string): Promise<Blob> {
  const digest = sha256(data);
  await writeFile(join(layout, 'blobs', 'sha256', digest.slice('sha256:'.length)), data);
  return { digest, size: Buffer.byteLength(data) };
}

/** What each image holds besides busybox. */
const EXTRAS: Record<NodeImage, ((rootfs: string) => Promise<void>) | undefined> = {
  pause: undefined,
  busybox: undefined,
  nodejs: (rootfs) => addMachineNode(rootfs),
  nodeBase: addNodeBase,
};

/** A root file system as an uncompressed tar layer: busybox, and the image's extras. */
async function rootfsLayer(workDir: string, name: string, extras: ((rootfs: string) => Promise<void>) | undefined): Promise<Buffer> {
  const rootfs = join(workDir, `${name}-rootfs`);
  await mkdir(join(rootfs, 'bin'), { recursive: true });
  await mkdir(join(rootfs, 'tmp'));
  await copyFile(NODE_COMMANDS.busybox, join(rootfs, 'bin', 'busybox'));
  const { stdout } = await run(NODE_COMMANDS.busybox, ['--list']);
  const applets = stdout.split('\n').filter((applet) => applet && applet !== 'busybox');
  await Promise.all(applets.map((applet) => symlink('busybox', join(rootfs, 'bin', applet))));
  await extras?.(rootfs);
  const layerPath = join(workDir, `${name}-layer.tar`);
  await run('tar', [...DETERMINISTIC_TAR, '-cf', layerPath, '-C', rootfs, '.']);
  await rm(rootfs, { recursive: true });
  try {
    return await readFile(layerPath);
  } finally {
    await rm(layerPath);
  }
}

/** One image as an OCI image layout packed into a tar archive, as `ctr images import` reads it. */
async function writeOciArchive(workDir: string, image: NodeImage, layer: Buffer, layerBlobDiffId: string): Promise<string> {
  const layout = join(workDir, image);
  await mkdir(join(layout, 'blobs', 'sha256'), { recursive: true });
  const layerBlob = await writeBlob(layout, layer);
  const config = await writeBlob(
    layout,
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Cmd: IMAGE_CMD[image], Env: IMAGE_ENV[image], WorkingDir: '/' },
      rootfs: { type: 'layers', diff_ids: [layerBlobDiffId] },
    }),
  );
  const manifest = await writeBlob(
    layout,
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...config },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', ...layerBlob }],
    }),
  );
  const name = NODE_IMAGES[image];
  await writeFile(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          ...manifest,
          platform: { architecture: 'amd64', os: 'linux' },
          // containerd names the imported image after this annotation.
          annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name.split(':').at(-1) },
        },
      ],
    }),
  );
  const archive = join(workDir, `${image}.oci.tar`);
  await run('tar', [...DETERMINISTIC_TAR, '-cf', archive, '-C', layout, '.']);
  await rm(layout, { recursive: true });
  return archive;
}

/** Writes `images` as OCI archives into `dir`; returns their paths. */
export async function writeNodeImages(dir: string, images: readonly NodeImage[] = DEFAULT_NODE_IMAGES): Promise<Partial<Record<NodeImage, string>>> {
  await mkdir(dir, { recursive: true });
  const archives: Partial<Record<NodeImage, string>> = {};
  // pause and busybox share one layer.
  const busybox = images.some((image) => !EXTRAS[image]) ? await rootfsLayer(dir, 'busybox', undefined) : undefined;
  for (const image of images) {
    const extras = EXTRAS[image];
    const layer = extras ? await rootfsLayer(dir, image, extras) : busybox;
    if (!layer) continue;
    archives[image] = await writeOciArchive(dir, image, layer, sha256(layer));
  }
  return archives;
}
