// A member cluster of the fleet tier: a control plane of its own with our CRDs and the whole
// product (reconciler and webhooks) running against it, as each member of a real fleet runs it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerTeardown } from '../control-plane/exit-hooks.js';
import { applyManifestFiles, CRD_DIR, startControlPlane, type ControlPlane } from '../control-plane/index.js';
import { startProduct, type ProductProcess } from '../e2e/fixtures/product-process.js';
import { waitFor } from '../e2e/support/cluster.js';

export interface RunningMember {
  name: string;
  plane: ControlPlane;
  product: ProductProcess;
  stop(): Promise<void>;
}

/** The product in local mode against `kubeconfigPath`; `env` adds settings (RD_RECONCILE=false on the fleet). */
export async function startProductOn(identity: string, kubeconfigPath: string, env: Record<string, string> = {}): Promise<{ product: ProductProcess; stop(): Promise<void> }> {
  const certDir = await mkdtemp(join(tmpdir(), `rd-fleet-certs-${identity}-`));
  const product = await startProduct(identity, { KUBECONFIG: kubeconfigPath, RD_MODE: 'local', RD_PORT: '0', RD_CERT_DIR: certDir, RD_NAMESPACE: 'default', RD_SHUTDOWN_DELAY: '0s', RD_REGISTER_CONVERSION: 'true', ...env });
  // Stopped with the test process (exit, SIGINT/SIGTERM/SIGHUP) like the servers it talks to.
  const unregister = registerTeardown({ stop: () => stop(), killNow: () => product.child.kill('SIGKILL') });
  const stop = async (): Promise<void> => {
    await product.stop();
    await rm(certDir, { recursive: true, force: true });
    unregister();
  };
  try {
    await waitFor(async () => ((await product.ready()) ? true : undefined), { what: `${identity} ready`, timeoutMs: 60_000 });
  } catch (error) {
    await stop();
    throw error;
  }
  return { product, stop };
}

export async function startMember(name: string, log: (line: string) => void): Promise<RunningMember> {
  const plane = await startControlPlane({ log: (line) => log(`${name}: ${line}`), beforeControllerManager: (kc) => applyManifestFiles(kc, [CRD_DIR]) });
  try {
    const running = await startProductOn(name, plane.kubeconfigPath);
    return {
      name,
      plane,
      product: running.product,
      stop: async () => {
        await running.stop();
        await plane.stop();
      },
    };
  } catch (error) {
    await plane.stop();
    throw error;
  }
}
