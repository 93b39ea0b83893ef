// The product's own client, built from a client-node KubeConfig (what the control plane and the
// test fixtures hold).
import type { KubeConfig } from '@kubernetes/client-node';
import { createKubeClient, type KubeClient, type KubeClientOptions } from '../src/k8s/kube-client.js';
import { connectionFromKubeconfig, type Connection } from '../src/k8s/kube-config.js';

export function connectionOf(kc: KubeConfig): Connection {
  return connectionFromKubeconfig(kc.exportConfig(), process.cwd());
}

export function kubeClientOf(kc: KubeConfig, options: Partial<KubeClientOptions> = {}): KubeClient {
  return createKubeClient(connectionOf(kc), { maxConnections: 8, timeoutMs: 30_000, ...options });
}
