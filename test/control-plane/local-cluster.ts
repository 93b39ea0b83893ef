import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { MODULE_DIR } from './binaries.js';
import { startControlPlane, type ControlPlane, type StartControlPlaneOptions } from './control-plane.js';
import { applyManifestFiles } from './manifests.js';

export const REPO_ROOT = resolve(MODULE_DIR, '..', '..');
export const CRD_DIR = join(REPO_ROOT, 'webhook-config', 'crd');
export const POLICIES_DIR = join(REPO_ROOT, 'policies');
/** Git-ignored (.local/). */
export const LOCAL_KUBECONFIG = join(REPO_ROOT, '.local', 'kubeconfig');

export interface LocalClusterOptions {
  log?: (line: string) => void;
  /** Applied before kube-controller-manager starts (CRDs); default: webhook-config/crd/. */
  crds?: string[];
  /** Applied once everything runs; default: policies/. */
  manifests?: string[];
  /** Where the kubeconfig is copied for kubectl and the server; default .local/kubeconfig. */
  kubeconfigPath?: string;
  binaries?: StartControlPlaneOptions['binaries'];
  /** kube-controller-manager controllers besides the defaults (see StartControlPlaneOptions). */
  extraControllers?: StartControlPlaneOptions['extraControllers'];
}

/**
 * The control plane for local development: the CRDs installed, the example policies applied and
 * the admin kubeconfig at a fixed path (removed again by `stop()` unless another run replaced it).
 */
export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<ControlPlane> {
  const crds = options.crds ?? [CRD_DIR];
  const plane = await startControlPlane({
    log: options.log,
    binaries: options.binaries,
    extraControllers: options.extraControllers,
    beforeControllerManager: (kc) => applyManifestFiles(kc, crds),
  });
  const kubeconfigPath = options.kubeconfigPath ?? LOCAL_KUBECONFIG;
  let kubeconfig: string;
  try {
    kubeconfig = await readFile(plane.kubeconfigPath, 'utf8');
    await applyManifestFiles(plane.kubeConfig, options.manifests ?? [POLICIES_DIR]);
    await mkdir(dirname(kubeconfigPath), { recursive: true });
    await writeFile(kubeconfigPath, kubeconfig, { mode: 0o600 });
  } catch (error) {
    await plane.stop();
    throw error;
  }
  return {
    ...plane,
    kubeconfigPath,
    stop: async () => {
      await plane.stop();
      // Another local cluster started since may have written its own kubeconfig there.
      const current = await readFile(kubeconfigPath, 'utf8').catch(() => undefined);
      if (current === kubeconfig) await rm(kubeconfigPath, { force: true });
    },
  };
}
