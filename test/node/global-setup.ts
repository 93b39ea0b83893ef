import type { TestProject } from 'vitest/node';
import {
  createImageBuilder,
  createNodeCredentials,
  ensureReleaseImage,
  ensureTool,
  keepProductImage,
  productImageKey,
  publishProductImage,
  startControlPlane,
  startNode,
  startRegistry,
  type ControlPlane,
  type BuiltImage,
  type ImageBuilder,
  type LocalNode,
  type LocalRegistry,
  type NodeNetwork,
  type ProductImage,
  type ReleaseImage,
} from '../control-plane/index.js';
import { PREVIOUS_RELEASE } from './previous-release.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The node tier's control plane: admin kubeconfig, and what a further node needs of it. */
    nodePlane: { kubeconfigPath: string; serverUrl: string; etcdUrl: string; clientCa: { certFile: string; keyFile: string }; kubeletClientCaFile: string };
    /** The node every test of the tier shares. */
    node: { name: string; network: NodeNetwork; images: LocalNode['images'] };
    /** The product's image built from the Dockerfile: in the registry, and present on the node. */
    productImage: Omit<ProductImage, 'archive'>;
    /** The private registry on 127.0.0.1 holding it (TLS, htpasswd); the node pulls from `nodeHost`. */
    registry: Pick<LocalRegistry, 'host' | 'caCert' | 'username' | 'password'> & { nodeHost: string };
    /** The image of the release upgrade.test.ts upgrades from, present on the node (not in the registry). */
    previousImage: Pick<ReleaseImage, 'commit' | 'repository' | 'tag'>;
  }
}

const log = (line: string): void => console.error(`[node tier] ${line}`);

/**
 * One control plane, one node, a private registry and the product's image built from the
 * Dockerfile (while the control plane starts) for the node tier; the returned function tears all
 * down (and fails if any left something behind).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const credentials = await createNodeCredentials();
  let plane: ControlPlane | undefined;
  let node: LocalNode | undefined;
  let registry: LocalRegistry | undefined;
  let builder: ImageBuilder | undefined;
  let image: ProductImage | undefined;
  let building: Promise<BuiltImage> | undefined;
  let previous: Promise<ReleaseImage> | undefined;
  let release: ReleaseImage | undefined;
  let tools: Promise<{ helm: string; kubectl: string }> | undefined;
  const stop = async (): Promise<void> => {
    const results = await Promise.allSettled([
      (async () => {
        await node?.stop();
        await plane?.stop();
      })(),
      registry?.stop(),
      // A build still running (a start that failed early) writes into the storage: removed after it.
      Promise.allSettled([building, previous]).then(() => builder?.remove()),
      credentials.remove(),
    ]);
    const failures = results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
    if (failures.length > 0) throw new Error(failures.join('\n'));
  };
  try {
    // Read before the build starts: the sources it builds.
    const imageKey = productImageKey();
    imageKey.catch(() => undefined);
    // One after the other: each is a Go build on a fresh machine.
    tools = ensureTool('helm').then(async (helm) => ({ helm, kubectl: await ensureTool('kubectl') }));
    tools.catch(() => undefined);
    builder = await createImageBuilder(log);
    building = builder.buildProductImage();
    building.catch(() => undefined);
    // After the current one, in the same storage (kept by commit: built on a machine's first run only).
    const build = builder;
    previous = building.then(() => ensureReleaseImage(build, PREVIOUS_RELEASE, log));
    previous.catch(() => undefined);
    // workloads: the chart's Deployment gets scheduled and its pods their ServiceAccount tokens.
    plane = await startControlPlane({ apiserverFlags: credentials.apiserverFlags, extraControllers: credentials.extraControllers, workloads: true });
    node = await startNode(plane, credentials, { images: ['nodejs'] });
    // After the node: the registry's certificate names the node's way to it.
    registry = await startRegistry(log, { relayFrom: node.network.hostIp });
    await node.trustRegistry(registry.nodeHost ?? '', registry.caCert);
    image = await publishProductImage(builder, await building, registry);
    log(`image ${image.repository}:${image.tag}: built in ${image.buildSeconds.toFixed(0)} s, pushed in ${image.pushSeconds.toFixed(0)} s`);
    await node.importImage(image.archive);
    // The chaos soak runs the same image on a node of its own: kept for it (product-image-cache.ts).
    await keepProductImage(image.archive, image.repository, image.tag, await imageKey);
    release = await previous;
    await node.importImage(release.archive);
    if (release.buildSeconds > 0) log(`image of release ${release.tag}: built in ${release.buildSeconds.toFixed(0)} s`);
  } catch (error) {
    await stop().catch((stopError: unknown) => log(`teardown after a failed start: ${String(stopError)}`));
    throw error;
  }
  log(`control plane and node ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  project.provide('nodePlane', {
    kubeconfigPath: plane.kubeconfigPath,
    serverUrl: plane.serverUrl,
    // Read by upgrade.test.ts: the version a distribution is stored in.
    etcdUrl: plane.etcdUrl,
    clientCa: plane.clientCa,
    kubeletClientCaFile: credentials.kubeletClientCaFile,
  });
  project.provide('node', { name: node.name, network: node.network, images: node.images });
  // What test/e2e/support/tools.ts runs helm and kubectl with.
  project.provide('kubeconfigPath', plane.kubeconfigPath);
  project.provide('tools', await tools);
  project.provide('productImage', {
    name: image.name,
    repository: image.repository,
    tag: image.tag,
    baseImage: image.baseImage,
    sizeBytes: image.sizeBytes,
    buildSeconds: image.buildSeconds,
    pushSeconds: image.pushSeconds,
  });
  project.provide('previousImage', { commit: release.commit, repository: release.repository, tag: release.tag });
  project.provide('registry', {
    host: registry.host,
    nodeHost: registry.nodeHost ?? '',
    caCert: registry.caCert,
    username: registry.username,
    password: registry.password,
  });
  return async () => {
    try {
      await stop();
    } catch (error) {
      // vitest reports an error of a global teardown but still exits 0: a node that left
      // something behind must fail the run.
      process.exitCode = 1;
      throw error;
    }
  };
}
