// A distribution over many listed namespaces whose author holds RoleBindings in each (not a
// ClusterRoleBinding): admission recognises what RBAC grants from the watched RBAC objects, without
// a SubjectAccessReview per namespace and verb, and follows a RoleBinding that goes away.
import { CustomObjectsApi, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { impersonating, rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const NAMESPACES = 300;
const kc = loadKubeConfig();
const admin = new Kube(kc);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const metrics = createMetrics();
const author = uniqueName('nina');
const role = uniqueName('configmap-writer');
const RD = { group: GROUP, version: VERSION, plural: PLURAL };
let server: RunningServer;
const namespaces: string[] = [];
let asAuthor: CustomObjectsApi;
const distributionName = uniqueName('many');

async function accessReviews(): Promise<number> {
  return (await metrics.apiRequests.get()).values.find((v) => v.labels.resource === 'subjectaccessreviews')?.value ?? 0;
}

async function inBatches<T>(items: readonly T[], size: number, each: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}

beforeAll(async () => {
  await rbac.createClusterRole({ body: { metadata: { name: role }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update'] }] } });
  await rbac.createClusterRole({ body: { metadata: { name: author }, rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'create', 'update', 'patch'] }] } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name: author }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: author }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: author }] },
  });
  const names = Array.from({ length: NAMESPACES }, () => uniqueName('large'));
  await inBatches(names, 25, async (name) => {
    await admin.core.createNamespace({ body: { metadata: { name } } });
    namespaces.push(name);
    await rbac.createNamespacedRoleBinding({
      namespace: name,
      body: { metadata: { name: 'nina' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: author }] },
    });
  });
  asAuthor = impersonating(kc, author).makeApiClient(CustomObjectsApi);
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    overrides: { webhookNames: { distributions: uniqueName('e2e-large-distributions'), namespaces: uniqueName('e2e-large-namespaces') }, shutdownDelayMs: 0 },
  });
  await waitFor(
    async () => {
      const probe = distributionOf(uniqueName('probe'), { ...configMapOf('c', {}), kind: 'Pod' }, { includedNamespaces: { list: [{ name: namespaces[0]! }] } });
      const answer = await rejection(admin.custom.createClusterCustomObject({ ...RD, body: probe, dryRun: 'All' })).catch(() => undefined);
      return answer?.message.includes('spec.resource.kind') ? true : undefined;
    },
    { what: 'the distribution webhook of this server to be called', timeoutMs: 60_000 },
  );
}, 300_000);

afterAll(async () => {
  await server?.stop();
  await admin.custom.deleteClusterCustomObject({ ...RD, name: distributionName }).catch(() => undefined);
  await admin.cleanup();
  await inBatches(namespaces, 25, (name) => admin.core.deleteNamespace({ name }).catch(() => undefined));
  for (const name of [author, role]) {
    await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    await rbac.deleteClusterRole({ name }).catch(() => undefined);
  }
}, 120_000);

describe('an author allowed by a RoleBinding in each of many namespaces', () => {
  const name = distributionName;

  it('is admitted at once, with no review per namespace', async () => {
    const rd = distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: namespaces.map((ns) => ({ name: ns })) } });
    // A server-side dry run is admitted as a create is, and starts no pass: the reviews counted are admission's alone.
    const before = await accessReviews();
    const started = performance.now();
    await asAuthor.createClusterCustomObject({ ...RD, body: { ...rd, status: undefined }, dryRun: 'All' });
    const elapsed = performance.now() - started;
    const spent = (await accessReviews()) - before;
    console.log(`${NAMESPACES} listed namespaces, each granted by a RoleBinding: admitted in ${elapsed.toFixed(0)} ms with ${spent} access reviews`);
    // The cluster-wide questions (create, update) are asked, and answered no; nothing per namespace.
    expect(spent).toBeLessThanOrEqual(2);
    await asAuthor.createClusterCustomObject({ ...RD, body: { ...rd, status: undefined } });
  });

  it('is refused, naming the namespace, once a RoleBinding is gone', async () => {
    const revoked = namespaces[7]!;
    await rbac.deleteNamespacedRoleBinding({ namespace: revoked, name: 'nina' });
    const denied = await waitFor(
      async () => {
        const answer = await rejection(
          asAuthor.patchClusterCustomObject({ ...RD, name, body: { spec: { resource: configMapOf('settings', { a: '2' }) } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
        ).catch(() => undefined);
        return answer?.code === 403 ? answer : undefined;
      },
      { what: 'the update to be refused', timeoutMs: 30_000 },
    );
    expect(denied.message).toContain(`namespace "${revoked}"`);
  });
});
