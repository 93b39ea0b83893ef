import { CoreV1Api } from '@kubernetes/client-node';
import { expect, inject, it } from 'vitest';
import { NODE_IMAGES, createImageBuilder, startNode, startRegistry, type LocalNode } from '../control-plane/index.js';
import { adminKubeConfig, boundPod, uniqueName, waitForDefaultServiceAccount, waitForPhase } from './support.js';

const plane = inject('nodePlane');
const shared = inject('node');
const kubeConfig = adminKubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);

it('a node stopped while its pod runs leaves no process, mount, namespace, link, cgroup or file behind', async () => {
  const node: LocalNode = await startNode(
    { serverUrl: plane.serverUrl, kubeConfig, clientCa: plane.clientCa },
    { kubeletClientCaFile: plane.kubeletClientCaFile },
    { name: uniqueName('rd-node-teardown') },
  );
  const name = uniqueName('sleeper');
  await waitForDefaultServiceAccount(core, 'default');
  try {
    expect(node.network.link).not.toBe(shared.network.link);
    await core.createNamespacedPod({ namespace: 'default', body: boundPod(name, node.name, NODE_IMAGES.busybox, 'sleep 3600') });
    await waitForPhase(core, 'default', name, 'Running');
    // The container really runs inside the node: its sleep is a process of the node's pid namespace.
    expect(await node.exec('ps', ['-o', 'args'])).toContain('sleep 3600');
  } finally {
    await node.stop();
  }
  expect(await node.leftovers()).toEqual([]);
  await core.deleteNamespacedPod({ namespace: 'default', name, gracePeriodSeconds: 0 }).catch(() => undefined);

  // The shared node is untouched.
  const conditions = (await core.readNode({ name: shared.name })).status?.conditions ?? [];
  expect(conditions.find((condition) => condition.type === 'Ready')?.status).toBe('True');
});

it('a registry and an image build storage, stopped, leave no process, mount or folder behind', async () => {
  const log = (): void => undefined;
  const registry = await startRegistry(log);
  const builder = await createImageBuilder(log);
  expect(await registry.leftovers()).toEqual([expect.stringMatching(/^process \d+ \(registry\)$/), `folder ${registry.dir}`]);
  await registry.stop();
  await builder.remove();
  expect(await registry.leftovers()).toEqual([]);
  expect(await builder.leftovers()).toEqual([]);
});
