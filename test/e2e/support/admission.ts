// Helpers of the admission end-to-end tests: objects to submit, the API error a client sees,
// acting as another user, and raw TLS probes of our listener.
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:tls';
import { KubeConfig, RbacAuthorizationV1Api, type CustomObjectsApi, type V1PolicyRule } from '@kubernetes/client-node';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION } from '../../../src/domain/types.js';
import { describeApiError } from '../../../src/k8s/errors.js';
import { uniqueName, waitFor } from './cluster.js';

export function distribution(name: string, resource: object, targets: object): object {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { resource, targets } };
}

export const configMap = (name: string): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { color: 'blue' } });

export const secret = (name: string): object => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  type: 'Opaque',
  data: { token: Buffer.from('t0k3n').toString('base64') },
});

export const included = (...names: string[]): object => ({ includedNamespaces: { list: names.map((name) => ({ name })) } });

/** The API error of a call expected to fail: HTTP code and the message the client sees. */
export async function rejection(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (error) {
    const { code, message } = describeApiError(error);
    return { code, message };
  }
  throw new Error('the request was admitted');
}

/** Resolves once our distribution webhook answers: a dry-run create of `probe` (which only the webhook refuses) is denied. */
export async function distributionWebhookCalled(custom: CustomObjectsApi, probe: object): Promise<void> {
  await waitFor(
    async () => {
      const denied = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: probe, dryRun: 'All' })).catch(() => undefined);
      return denied?.message.includes('denied the request') ? true : undefined;
    },
    { what: 'the distribution webhook to be called', timeoutMs: 60_000 },
  );
}

/** The admin kubeconfig, impersonating `user`. */
export function impersonating(kc: KubeConfig, user: string): KubeConfig {
  const impersonated = new KubeConfig();
  const admin = kc.getCurrentUser();
  if (!admin) throw new Error('the admin kubeconfig has no user');
  impersonated.loadFromOptions({
    clusters: kc.clusters,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
    users: kc.users.map((u) => (u.name === admin.name ? { ...u, impersonateUser: user } : u)),
  });
  return impersonated;
}

/**
 * GET over HTTPS trusting only `ca` (status code only). `servername`: the name the certificate is
 * verified for, when the URL's host is not it.
 */
export function fetchWithCa(url: string, ca: string, servername?: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false, ...(servername === undefined ? {} : { servername }) }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The SHA-256 fingerprint of the certificate the listener presents, verified against `ca`. */
export function presentedCertificate(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

/**
 * Runs `use` as a fresh user (`<prefix>-<suffix>`) bound cluster-wide to exactly `rules`, through
 * the admin kubeconfig impersonating them; the role and its binding are removed afterwards.
 */
export async function asUserWith<T>(kc: KubeConfig, prefix: string, rules: V1PolicyRule[], use: (user: string, as: KubeConfig) => Promise<T>): Promise<T> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const user = uniqueName(prefix);
  await rbac.createClusterRole({ body: { metadata: { name: user }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: user },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    },
  });
  try {
    return await use(user, impersonating(kc, user));
  } finally {
    await rbac.deleteClusterRoleBinding({ name: user }).catch(() => undefined);
    await rbac.deleteClusterRole({ name: user }).catch(() => undefined);
  }
}
