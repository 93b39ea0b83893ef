import type { TestProject } from 'vitest/node';
import { createNodeCredentials, startControlPlane, startNode, type ControlPlane, type LocalNode, type NodeNetwork } from '../control-plane/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The node tier's control plane: admin kubeconfig, and what a further node needs of it. */
    nodePlane: { kubeconfigPath: string; serverUrl: string; clientCa: { certFile: string; keyFile: string }; kubeletClientCaFile: string };
    /** The node every test of the tier shares. */
    node: { name: string; network: NodeNetwork; images: LocalNode['images'] };
  }
}

const log = (line: string): void => console.error(`[node tier] ${line}`);

/** One control plane and one node for the node tier; the returned function tears both down (and fails if the node left anything behind). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const credentials = await createNodeCredentials();
  let plane: ControlPlane | undefined;
  let node: LocalNode | undefined;
  const stop = async (): Promise<void> => {
    try {
      await node?.stop();
    } finally {
      await plane?.stop();
      await credentials.remove();
    }
  };
  try {
    plane = await startControlPlane({ apiserverFlags: credentials.apiserverFlags, extraControllers: credentials.extraControllers });
    node = await startNode(plane, credentials, { images: ['nodejs'] });
  } catch (error) {
    await stop().catch((stopError: unknown) => log(`teardown after a failed start: ${String(stopError)}`));
    throw error;
  }
  log(`control plane and node ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  project.provide('nodePlane', {
    kubeconfigPath: plane.kubeconfigPath,
    serverUrl: plane.serverUrl,
    clientCa: plane.clientCa,
    kubeletClientCaFile: credentials.kubeletClientCaFile,
  });
  project.provide('node', { name: node.name, network: node.network, images: node.images });
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
