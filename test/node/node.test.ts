import { CoreV1Api, VersionApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NODE_IMAGES } from '../control-plane/index.js';
import { adminKubeConfig, boundPod, createNamespace, uniqueName, waitFor, waitForPhase } from './support.js';

const node = inject('node');
const core = adminKubeConfig().makeApiClient(CoreV1Api);
const namespace = uniqueName('node-pods');

beforeAll(async () => {
  await createNamespace(core, namespace);
});

afterAll(async () => {
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe('a node of the local control plane', () => {
  it("registers Ready, at the API server's version, on its own address, with containerd", async () => {
    const [registered, version] = await Promise.all([core.readNode({ name: node.name }), adminKubeConfig().makeApiClient(VersionApi).getCode()]);
    const conditions = Object.fromEntries((registered.status?.conditions ?? []).map((condition) => [condition.type, condition.status]));
    expect(conditions.Ready).toBe('True');
    expect(registered.status?.addresses).toContainEqual({ type: 'InternalIP', address: node.network.nodeIp });
    expect(registered.status?.nodeInfo?.containerRuntimeVersion).toMatch(/^containerd:\/\//);
    expect(registered.status?.nodeInfo?.kubeletVersion).toBe(version.gitVersion);
  });

  it('runs a pod to completion; its log comes from the kubelet through the API server', async () => {
    const name = uniqueName('hello');
    await core.createNamespacedPod({ namespace, body: boundPod(name, node.name, NODE_IMAGES.busybox, 'echo hello') });
    const pod = await waitForPhase(core, namespace, name, 'Succeeded');
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    expect(pod.status?.podIP).toMatch(/^10\.88\.\d+\.\d+$/);
    expect(await core.readNamespacedPodLog({ namespace, name })).toBe('hello\n');
  });

  it('the API server reaches a pod on its address through the node link (the path a webhook call takes)', async () => {
    const name = uniqueName('httpd');
    const script = 'mkdir -p /www && echo served-by-the-pod > /www/index.html && exec httpd -f -p 8080 -h /www';
    await core.createNamespacedPod({ namespace, body: boundPod(name, node.name, NODE_IMAGES.busybox, script) });
    await waitForPhase(core, namespace, name, 'Running');
    // pods/proxy: the API server (on the machine) connects to the pod IP (inside the node's namespace).
    const body = await waitFor('the pod answers through the API server', () =>
      core.connectGetNamespacedPodProxyWithPath({ namespace, name: `${name}:8080`, path: 'index.html' }).then(String, () => undefined),
    );
    expect(body).toBe('served-by-the-pod\n');
    await core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
  });

  it("a failing command's exit code reaches the pod status", async () => {
    const name = uniqueName('fails');
    await core.createNamespacedPod({ namespace, body: boundPod(name, node.name, NODE_IMAGES.busybox, 'exit 3') });
    const pod = await waitForPhase(core, namespace, name, 'Failed');
    expect(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(3);
  });
});
