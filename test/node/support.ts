// Helpers of the node tier's tests: the admin client, polling, and pods bound to a node.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { inject } from 'vitest';

export function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('nodePlane').kubeconfigPath);
  return kc;
}

export const uniqueName = (prefix: string): string => `${prefix}-${randomBytes(3).toString('hex')}`;

/** Polls `probe` until it returns a value; fails after `timeoutMs` with `what` and the last value seen. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000, describe?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s${describe ? `; ${describe()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * A pod of the node's busybox image bound to `nodeName` by the test (spec.nodeName: the tier runs
 * no scheduler), never pulled (no registry is reachable).
 */
export function boundPod(name: string, nodeName: string, image: string, script: string): V1Pod {
  return {
    metadata: { name },
    spec: {
      nodeName,
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image, imagePullPolicy: 'Never', command: ['sh', '-c', script] }],
    },
  };
}

/** The pod's phase once it is `phase`; its status for the error message otherwise. */
export async function waitForPhase(core: CoreV1Api, namespace: string, name: string, phase: string, timeoutMs = 60_000): Promise<V1Pod> {
  let last: V1Pod | undefined;
  return waitFor(
    `pod ${namespace}/${name} ${phase}`,
    async () => {
      last = await core.readNamespacedPod({ namespace, name });
      return last.status?.phase === phase ? last : undefined;
    },
    timeoutMs,
    () => `last status: ${JSON.stringify(last?.status ?? {})}`,
  );
}

/**
 * Creates namespace `name` and waits for its `default` ServiceAccount: the node tier runs
 * ServiceAccount admission, which refuses a namespace's pods until the controller has made it.
 */
export async function createNamespace(core: CoreV1Api, name: string, labels: Record<string, string> = {}): Promise<void> {
  await core.createNamespace({ body: { metadata: { name, labels } } });
  await waitForDefaultServiceAccount(core, name);
}

export function waitForDefaultServiceAccount(core: CoreV1Api, namespace: string): Promise<true> {
  return waitFor(`ServiceAccount ${namespace}/default`, () => core.readNamespacedServiceAccount({ namespace, name: 'default' }).then(() => true as const, () => undefined));
}
