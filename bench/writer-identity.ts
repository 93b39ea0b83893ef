// Whom the product and the baselines' Go write loops authenticate as: a ServiceAccount's token,
// the way the product runs in a cluster (the chart's pod mounts one), bound to cluster-admin
// because the bench runs it in local mode (it registers its own webhooks). Both sides of every
// comparison use this one kubeconfig, so the API server authenticates and authorizes their
// requests alike. With the plane's client certificate instead, Node.js's TLS sends the issuing CA
// after the certificate and the API server verifies both signatures on every request, where
// client-go sends the certificate alone: a cost of client certificates, which the product in a
// cluster does not use.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { isAlreadyExists } from '../src/k8s/errors.js';

const NAMESPACE = 'kube-system';
const ACCOUNT = 'rd-bench-writer';
/** Longer than the longest section (the scale section's 40 minutes or so). */
const TOKEN_SECONDS = 24 * 3600;

async function ignoringExisting(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/** Writes `dir`/writer.kubeconfig for the ServiceAccount (made if missing) and returns its path. */
export async function writeWriterKubeconfig(admin: KubeConfig, dir: string): Promise<string> {
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await ignoringExisting(() => core.createNamespacedServiceAccount({ namespace: NAMESPACE, body: { metadata: { name: ACCOUNT } } }));
  await ignoringExisting(() =>
    rbac.createClusterRoleBinding({
      body: {
        metadata: { name: ACCOUNT },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: ACCOUNT, namespace: NAMESPACE }],
      },
    }),
  );
  const answer = await core.createNamespacedServiceAccountToken({ namespace: NAMESPACE, name: ACCOUNT, body: { spec: { audiences: [], expirationSeconds: TOKEN_SECONDS } } });
  const token = answer.status?.token;
  if (!token) throw new Error(`the API server issued no token for ServiceAccount ${NAMESPACE}/${ACCOUNT}`);
  const cluster = admin.getCurrentCluster();
  if (!cluster?.caData) throw new Error('the admin kubeconfig names no cluster with embedded CA data');
  const path = join(dir, 'writer.kubeconfig');
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
    users: [{ name: ACCOUNT, user: { token } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: ACCOUNT } }],
    'current-context': 'local',
  };
  // JSON is YAML: both kubeconfig readers (the product's and client-go's) take it.
  await writeFile(path, JSON.stringify(kubeconfig), { mode: 0o600 });
  return path;
}
