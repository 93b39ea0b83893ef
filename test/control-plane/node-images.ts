import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { NODE_COMMANDS } from './node-packages.js';

const run = promisify(execFile);

/**
 * The images every node has, made on the machine (no registry is reachable): both are one layer
 * holding Debian's static busybox and a link per applet under /bin.
 */
export const NODE_IMAGES = {
  /** The pod sandbox ("pause") image containerd's CRI plugin is configured with: sleeps until killed. */
  pause: 'localhost/rd-node/pause:1',
  /** A shell and the usual tools, for test pods (`imagePullPolicy: Never`). */
  busybox: 'localhost/rd-node/busybox:1',
} as const;

export type NodeImage = keyof typeof NODE_IMAGES;

const IMAGE_CMD: Record<NodeImage, string[]> = {
  pause: ['/bin/sleep', '2147483647'],
  busybox: ['/bin/sh'],
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

/** The busybox root file system as an uncompressed tar layer. */
async function busyboxLayer(workDir: string): Promise<Buffer> {
  const rootfs = join(workDir, 'rootfs');
  await mkdir(join(rootfs, 'bin'), { recursive: true });
  await mkdir(join(rootfs, 'tmp'));
  await copyFile(NODE_COMMANDS.busybox, join(rootfs, 'bin', 'busybox'));
  const { stdout } = await run(NODE_COMMANDS.busybox, ['--list']);
  const applets = stdout.split('\n').filter((name) => name && name !== 'busybox');
  await Promise.all(applets.map((name) => symlink('busybox', join(rootfs, 'bin', name))));
  const layerPath = join(workDir, 'layer.tar');
  await run('tar', [...DETERMINISTIC_TAR, '-cf', layerPath, '-C', rootfs, '.']);
  return readFile(layerPath);
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
      config: { Cmd: IMAGE_CMD[image], Env: ['PATH=/bin'], WorkingDir: '/' },
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

/** Writes the node images as OCI archives into `dir`; returns their paths. */
export async function writeNodeImages(dir: string): Promise<Record<NodeImage, string>> {
  await mkdir(dir, { recursive: true });
  const layer = await busyboxLayer(dir);
  await rm(join(dir, 'rootfs'), { recursive: true });
  await rm(join(dir, 'layer.tar'));
  const diffId = sha256(layer);
  const [pause, busybox] = await Promise.all([
    writeOciArchive(dir, 'pause', layer, diffId),
    writeOciArchive(dir, 'busybox', layer, diffId),
  ]);
  return { pause, busybox };
}
