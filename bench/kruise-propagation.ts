// The propagation's peer: OpenKruise v1.9.0's kruise-manager given the same distributions, then the
// same namespaces created at the same pace, on a control plane of its own (as the fan-out's peer,
// kruise-peer.ts, with the same flags). Its copies carry the same `resource.from` annotation as
// ours: the watch times them the same way.
import { startKruise, startKruisePlane, type KruiseManager } from '../test/control-plane/kruise-manager.js';
import { BenchKube } from './bench-kube.js';
import { KRUISE_FLAGS, peerResult, waitForKruiseQuiet, waitForKruiseWebhook, type KruisePeerResult } from './kruise-peer.js';
import { copiedFrom, createPropagationDistributions, propagationDistributionNames, timeNewNamespaces, type NewNamespaces } from './new-namespaces.js';
import type { BenchSize } from './sizes.js';

async function measure(size: BenchSize): Promise<NewNamespaces> {
  const plane = await startKruisePlane({ log: (line) => console.error(`[bench] propagation, Kruise: ${line}`) });
  const kube = new BenchKube(plane.kubeConfig);
  let kruise: KruiseManager | undefined;
  try {
    const started = await startKruise(plane.kubeconfigPath, plane.dir, { flags: KRUISE_FLAGS });
    kruise = started;
    await waitForKruiseWebhook(kube, started);
    await createPropagationDistributions(kube, propagationDistributionNames(size.propagation.distributions));
    // Every object of its plane is a copy or not ours to time: no selector, the annotation decides.
    return await timeNewNamespaces(kube, size, '', copiedFrom, () => waitForKruiseQuiet(started));
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nkruise-manager log:\n${(await kruise?.tail(4_000)) ?? ''}`, { cause: error });
  } finally {
    kube.close();
    await kruise?.stop(10_000);
    await plane.stop();
  }
}

export function runKruisePropagation(size: BenchSize): Promise<KruisePeerResult<NewNamespaces>> {
  return peerResult('propagation', () => measure(size));
}
