// Cluster-mode certificate handling against a real API server: the shared Secret, optimistic
// concurrency between replicas, caBundle patching, CA rollover, and all of it (with the access
// review) under the least privilege webhook-config/rbac.yaml grants. The webhook configurations
// here match no real resource, so nothing ever calls them.
import { AdmissionregistrationV1Api, CoreV1Api, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccessReviewer } from '../../src/k8s/access-review.js';
import { applyWebhookConfigurations, deleteWebhookConfigurations, patchCaBundle, webhookConfigurations } from '../../src/k8s/webhook-config.js';
import { createLogger } from '../../src/log.js';
import { serviceIdentity, splitPem, type KeyPair } from '../../src/tls/certificates.js';
import { createCertificateManager } from '../../src/tls/manager.js';
import type { TlsPolicy } from '../../src/tls/rotation.js';
import { secretStore } from '../../src/tls/secret-store.js';
import { admissionRules, ownNamespaceRules } from '../rbac-rules.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { serviceAccountKubeConfig } from './support/service-account.js';
import { kubeClientOf } from '../kube-client.js';

const DAY = 86_400_000;
const policy: TlsPolicy = { caValidityMs: 1825 * DAY, caRenewBeforeMs: 600 * DAY, certValidityMs: 90 * DAY, certRenewBeforeMs: 30 * DAY };
const kc = loadKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const admission = kc.makeApiClient(AdmissionregistrationV1Api);
const namespace = uniqueName('e2e-tls');
const names = { distributions: uniqueName('e2e-tls-distributions'), namespaces: uniqueName('e2e-tls-namespaces') };
const SECRET = 'resource-distributor-tls';

let offsetMs = 0;
const clock = (): Date => new Date(Date.now() + offsetMs);

function replica(kubeConfig: KubeConfig = kc, secret = SECRET) {
  const client = kubeClientOf(kubeConfig);
  const served: KeyPair[] = [];
  const manager = createCertificateManager({
    store: secretStore(client, namespace, secret),
    identity: serviceIdentity('resource-distributor', namespace, false),
    policy,
    clock,
    log: createLogger({ level: 'silent' }),
    checkIntervalMs: 60_000,
    serve: (certificate) => served.push(certificate),
    publishTrust: async (trust) => (await patchCaBundle(client, [names.distributions, names.namespaces], trust)).length > 0,
  });
  return { manager, served };
}

/** The caBundle of every webhook: the distributions configuration (ResourceDistributions, ObjectSyncs), then the namespaces one (Namespaces, Pods). */
async function caBundles(): Promise<string[]> {
  const bundles: string[] = [];
  for (const name of [names.distributions, names.namespaces]) {
    const config = await admission.readValidatingWebhookConfiguration({ name });
    for (const webhook of config.webhooks ?? []) bundles.push(Buffer.from(webhook.clientConfig.caBundle ?? '', 'base64').toString('utf8'));
  }
  return bundles;
}

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  const configurations = webhookConfigurations({
    names,
    ownNamespace: namespace,
    clientConfig: (path) => ({ service: { name: 'resource-distributor', namespace, path, port: 443 } }),
  });
  for (const configuration of configurations) {
    for (const webhook of configuration.webhooks ?? []) {
      webhook.rules = [{ apiGroups: ['e2e.invalid'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['nothings'], scope: '*' }];
    }
  }
  await applyWebhookConfigurations(kubeClientOf(kc), configurations);
});

afterAll(async () => {
  await deleteWebhookConfigurations(kubeClientOf(kc), [names.distributions, names.namespaces]);
  await kc.makeApiClient(RbacAuthorizationV1Api).deleteClusterRoleBinding({ name: namespace }).catch(() => undefined);
  await kc.makeApiClient(RbacAuthorizationV1Api).deleteClusterRole({ name: namespace }).catch(() => undefined);
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

/** A ServiceAccount of `namespace` bound to the admission and TLS rules, named for this file. */
async function restrictedKubeConfig(secret: string): Promise<KubeConfig> {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const account = 'restricted';
  const subjects = [{ kind: 'ServiceAccount', name: account, namespace }];
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
  await rbac.createClusterRole({ body: { metadata: { name: namespace }, rules: admissionRules([names.distributions, names.namespaces]) } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name: namespace }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: namespace }, subjects },
  });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: account }, rules: ownNamespaceRules('unused-lease', secret) } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: { name: account }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account }, subjects },
  });
  return serviceAccountKubeConfig(kc, namespace, account);
}

describe('certificates in a cluster', () => {
  const a = replica();
  const b = replica();

  it('lets two starting replicas agree on one Secret and publishes its CA', async () => {
    const [fromA, fromB] = await Promise.all([a.manager.refresh(), b.manager.refresh()]);
    expect(fromA).toEqual(fromB);

    const secret = await core.readNamespacedSecret({ name: SECRET, namespace });
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(['ca-signer.crt', 'ca-signer.key', 'ca.crt', 'tls.crt', 'tls.key']);
    expect(await caBundles()).toEqual([fromA.trust, fromA.trust, fromA.trust, fromA.trust]);
  });

  it('rotates the serving certificate once, and the other replica serves the result', async () => {
    const before = a.manager.current()!;
    offsetMs = 61 * DAY;
    const rotated = await a.manager.refresh();
    await b.manager.refresh();
    expect(rotated.serving.cert).not.toBe(before.serving.cert);
    expect(b.served.at(-1)).toEqual(rotated.serving);
    expect(rotated.trust).toBe(before.trust);
  });

  it('adds the new CA to every caBundle during a CA rollover', async () => {
    const before = a.manager.current()!;
    offsetMs = 1300 * DAY;
    const rolled = await b.manager.refresh();
    await a.manager.refresh();
    expect(splitPem(rolled.trust)).toEqual([before.ca.cert, rolled.ca.cert]);
    expect(await caBundles()).toEqual([rolled.trust, rolled.trust, rolled.trust, rolled.trust]);
    expect(a.manager.current()).toEqual(rolled);
  });

  it('repairs a caBundle that a re-applied manifest emptied', async () => {
    const config = await admission.readValidatingWebhookConfiguration({ name: names.distributions });
    for (const webhook of config.webhooks ?? []) webhook.clientConfig.caBundle = undefined;
    await admission.replaceValidatingWebhookConfiguration({ name: names.distributions, body: config });
    const bundle = await a.manager.refresh();
    expect(await caBundles()).toEqual([bundle.trust, bundle.trust, bundle.trust, bundle.trust]);
  });
});

describe('with only the admission and TLS rules of webhook-config/rbac.yaml', () => {
  it('creates, rotates and publishes the certificates, and reviews access, without a single 403', async () => {
    const secret = 'restricted-tls';
    const restricted = await restrictedKubeConfig(secret);
    const c = replica(restricted, secret);
    // RBAC changes reach the authorizer within a moment.
    const first = await waitFor(() => c.manager.refresh(), { what: 'the first refresh under the shipped RBAC', timeoutMs: 20_000 });
    expect(await caBundles()).toEqual([first.trust, first.trust, first.trust, first.trust]);

    offsetMs += 61 * DAY;
    const rotated = await c.manager.refresh();
    expect(rotated.serving.cert).not.toBe(first.serving.cert);

    const answer = await createAccessReviewer(kubeClientOf(restricted)).review({
      subject: { username: 'someone', groups: ['system:authenticated'] },
      verb: 'create',
      group: '',
      resource: 'secrets',
      namespace,
    });
    expect(answer.allowed).toBe(false);
  });
});
