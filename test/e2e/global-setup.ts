import type { TestProject } from 'vitest/node';
import { applyManifestFiles, CRD_DIR, startControlPlane, waitForCrdEstablished } from '../control-plane/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfigPath: string;
  }
}

const CRD_NAME = 'resourcedistributions.apps.kruise.io';

/** One control plane for the whole e2e run; the returned function tears it down. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const plane = await startControlPlane({
    // Before kube-controller-manager, so that its garbage collector knows the type from the start.
    beforeControllerManager: async (kc) => {
      await applyManifestFiles(kc, [CRD_DIR]);
      await waitForCrdEstablished(kc, CRD_NAME);
    },
  });
  project.provide('kubeconfigPath', plane.kubeconfigPath);
  return () => plane.stop();
}
