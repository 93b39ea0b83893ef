import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/** A kubeconfig acting as the ServiceAccount `namespace/name` (which must exist), with a one-hour token. */
export async function serviceAccountKubeConfig(admin: KubeConfig, namespace: string, name: string): Promise<KubeConfig> {
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the admin kubeconfig has no cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name, token: token.status?.token }],
    contexts: [{ name: 'local', cluster: 'local', user: name }],
    currentContext: 'local',
  });
  return kc;
}
