import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuiltImage, ImageBuilder } from './image-build.js';
import type { LocalRegistry } from './image-registry.js';

/** The product's image, built from the Dockerfile, in the registry and as an archive a node imports. */
export interface ProductImage extends BuiltImage {
  /** `<registry host>/resource-distributor`: the chart's image.repository. */
  repository: string;
  tag: string;
  /** A docker-archive of it tagged `<repository>:<tag>`, as `ctr images import` names it (LocalNode.importImage). */
  archive: string;
  pushSeconds: number;
  /** Its layers uncompressed (the archive's size): what a node unpacks. */
  sizeBytes: number;
}

/**
 * Pushes the image built by `builder` (buildah, see image-build.ts) with the registry's credentials
 * over TLS, as a user pushes to a private registry; the archive lets a node have it without a pull.
 */
export async function publishProductImage(builder: ImageBuilder, built: BuiltImage, registry: LocalRegistry): Promise<ProductImage> {
  const tag = built.name.split(':').at(-1) ?? '';
  const repository = `${registry.host}/resource-distributor`;
  const started = Date.now();
  await builder.push(built.name, `docker://${repository}:${tag}`, { certDir: registry.certDir, credentials: `${registry.username}:${registry.password}` });
  const pushSeconds = (Date.now() - started) / 1000;
  const archive = join(builder.dir, 'product.docker.tar');
  await builder.push(built.name, `docker-archive:${archive}:${repository}:${tag}`);
  return { ...built, repository, tag, archive, pushSeconds, sizeBytes: (await stat(archive)).size };
}
