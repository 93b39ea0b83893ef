import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect, inject, it } from 'vitest';
import { NODE_IMAGES, REPO_ROOT, createImageBuilder, nodeLeftovers, startNode, startRegistry, type LocalNode, type NodeTrace } from '../control-plane/index.js';
import { adminKubeConfig, boundPod, uniqueName, waitFor, waitForDefaultServiceAccount, waitForPhase } from './support.js';

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

it('a node whose starter exits on SIGTERM before the graceful stop ends (as a test runner does) leaves nothing behind', async () => {
  const name = uniqueName('rd-node-sigterm');
  const starter = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'test/node/fixtures/node-starter.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, RD_NODE_STARTER: JSON.stringify({ ...plane, name }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(starter, 'exit');
  const [line = ''] = (await Promise.race([once(createInterface({ input: starter.stdout }), 'line'), exited.then(([code]) => [`exited with ${String(code)}`])])) as string[];
  if (!line.startsWith('{')) throw new Error(`the node starter ${line}`);
  const trace = JSON.parse(line) as NodeTrace;
  expect(trace.cgroupRoot).toMatch(/^rd-node-/);
  starter.kill('SIGTERM');
  expect((await exited)[0]).toBe(143);
  // Its registration would read Ready for a while: no pod of a later test may be scheduled there.
  await core.deleteNode({ name });
  // The node's pid 1 outlives its starter long enough to kill the node's processes and remove its cgroups.
  const left = await waitFor('nothing of the node left', async () => ((await nodeLeftovers(trace)).length === 0 ? [] : undefined), 30_000).catch(async () => nodeLeftovers(trace));
  expect(left).toEqual([]);
}, 180_000);

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
