import type { V1Secret } from '@kubernetes/client-node';
import { isAlreadyExists, isConflict, isNotFound } from '../k8s/errors.js';
import type { KubeClient } from '../k8s/kube-client.js';
import type { CertificateBundle } from './certificates.js';
import { bundleEntries, bundleFromEntries, type CertificateStore, type StoredBundle } from './store.js';

function decode(secret: V1Secret): CertificateBundle | undefined {
  const data = secret.data ?? {};
  return bundleFromEntries((key) => {
    const value = data[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  });
}

function encode(bundle: CertificateBundle): Record<string, string> {
  return Object.fromEntries(Object.entries(bundleEntries(bundle)).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
}

/**
 * In a cluster: one `kubernetes.io/tls` Secret in our namespace, shared by every replica. The
 * first replica creates it (a lost race reads the winner's); updates carry the resourceVersion
 * that was read, so two replicas never rotate over each other.
 */
export function secretStore(client: KubeClient, namespace: string, name: string): CertificateStore {
  const secrets = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets`;
  const path = `${secrets}/${encodeURIComponent(name)}`;
  return {
    async load() {
      let secret: V1Secret;
      try {
        secret = await client.request<V1Secret>('GET', path);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
      const bundle = decode(secret);
      // An incomplete Secret is replaced, but only by a writer holding its resourceVersion.
      return bundle ? { bundle, version: secret.metadata?.resourceVersion } : { bundle: INCOMPLETE, version: secret.metadata?.resourceVersion };
    },
    async save(bundle, version): Promise<StoredBundle | 'conflict'> {
      const body: V1Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/tls',
        metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'resource-distributor' }, ...(version ? { resourceVersion: version } : {}) },
        data: encode(bundle),
      };
      try {
        const saved = version
          ? await client.request<V1Secret>('PUT', path, { body })
          : await client.request<V1Secret>('POST', secrets, { body });
        return { bundle, version: saved.metadata?.resourceVersion };
      } catch (error) {
        if (isAlreadyExists(error) || isConflict(error)) return 'conflict';
        throw error;
      }
    },
  };
}

/** Stands for a Secret whose data is missing or partial: the rotation plan treats it as absent. */
const INCOMPLETE: CertificateBundle = { ca: { cert: '', key: '' }, serving: { cert: '', key: '' }, trust: '' };
