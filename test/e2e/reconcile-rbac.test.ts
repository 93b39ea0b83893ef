// The controller under the least privilege it documents (test/rbac-rules.ts, which
// webhook-config/rbac.yaml is held to): a ServiceAccount bound to exactly these rules runs every
// kind of write the reconciler and the generator make, and not one request is refused.
import { KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OBJECT_SYNC_FINALIZER, OBJECT_SYNC_GROUP, OBJECT_SYNC_PLURAL, OBJECT_SYNC_VERSION, type ObjectSync } from '../../src/domain/object-sync.js';
import { ANNOTATION_FROM, type Resource } from '../../src/domain/types.js';
import type { RunningController } from '../../src/reconcile/controller.js';
import { CONTROLLER_RULES, ownNamespaceRules } from '../rbac-rules.js';
import { startInProcessController } from './fixtures/in-process.js';
import { condition, distributionOf, Kube } from './fixtures/kube.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const leaseName = uniqueName('rd-e2e-rbac-lease');
/** The lease rules only: the TLS Secret is the admission side's (test/e2e/admission-tls.test.ts). */
const LEASE_RULES = ownNamespaceRules(leaseName, 'unused').filter((rule) => rule.apiGroups?.includes('coordination.k8s.io'));

let admin: Kube;
let rbac: RbacAuthorizationV1Api;
let controller: RunningController;
const name = uniqueName('rd-rbac');
const account = uniqueName('rd-controller');
const accountNs = uniqueName('rd-rbac-sa');

async function restrictedKubeConfig(): Promise<KubeConfig> {
  await admin.createNamed(accountNs);
  await admin.core.createNamespacedServiceAccount({ namespace: accountNs, body: { metadata: { name: account } } });
  const subjects = [{ kind: 'ServiceAccount', name: account, namespace: accountNs }];
  await rbac.createClusterRole({ body: { metadata: { name: account }, rules: CONTROLLER_RULES } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name: account }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: account }, subjects },
  });
  await rbac.createNamespacedRole({ namespace: 'default', body: { metadata: { name: account }, rules: LEASE_RULES } });
  await rbac.createNamespacedRoleBinding({
    namespace: 'default',
    body: { metadata: { name: account }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account }, subjects },
  });
  const token = await admin.core.createNamespacedServiceAccountToken({
    namespace: accountNs,
    name: account,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.kc.getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: cluster.server, caData: cluster.caData, skipTLSVerify: false }],
    users: [{ name: account, token: token.status?.token }],
    contexts: [{ name: 'local', cluster: 'local', user: account }],
    currentContext: 'local',
  });
  return kc;
}

beforeAll(async () => {
  const kc = loadKubeConfig();
  admin = new Kube(kc);
  rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  controller = await startInProcessController(await restrictedKubeConfig(), { leaseName, objectSyncs: true });
});

afterAll(async () => {
  await controller?.stop();
  await admin?.cleanup();
  await Promise.allSettled([
    rbac.deleteClusterRoleBinding({ name: account }),
    rbac.deleteClusterRole({ name: account }),
    rbac.deleteNamespacedRoleBinding({ namespace: 'default', name: account }),
    rbac.deleteNamespacedRole({ namespace: 'default', name: account }),
  ]);
});

function secret(type: string, data: Record<string, string>): Resource {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, type, data };
}

describe('reconcile: least privilege', () => {
  it('creates, updates, recreates, deletes, reports and generates with only the documented verbs', async () => {
    const a = (await admin.createNamespace('rbac')).metadata!.name!;
    const b = (await admin.createNamespace('rbac')).metadata!.name!;
    const missing = admin.reserveNamespace('rbac-missing');
    await admin.put({ ...secret('Opaque', { theirs: 'eA==' }), metadata: { name: 'creds', namespace: b } });
    const list = (names: string[]) => ({ includedNamespaces: { list: names.map((n) => ({ name: n })) } });
    await admin.createDistribution(distributionOf(name, secret('Opaque', { t: 'dA==' }), list([a, b, missing])));

    // create + status patch + Event (conflict in b, namespace missing)
    const rd = await admin.waitForStatus(name, (s) => s.succeeded === 1 && s.failed === 2);
    expect(condition(rd, 'ConflictOccurred')?.failedNamespace).toEqual([b]);
    const copy = (await admin.get('Secret', a, 'creds'))!;

    // update (drift repaired)
    await admin.put({ ...copy, data: { t: 'ZWRpdGVk' } });
    await admin.waitForObject('Secret', a, 'creds', (o) => o?.data?.t === 'dA==');

    // recreate (type change: delete with uid precondition + create)
    await admin.updateDistribution(name, (d) => {
      d.spec.resource = secret('kubernetes.io/basic-auth', { username: 'dQ==', password: 'cA==' });
    });
    await admin.waitForObject('Secret', a, 'creds', (o) => o?.type === 'kubernetes.io/basic-auth');

    // generation on a new namespace (namespace get/watch, copy get + create)
    await admin.updateDistribution(name, (d) => {
      d.spec.targets = list([a, b, missing]);
    });
    const created = await admin.createNamed(missing);
    controller.namespaceAdmitted({ name: missing, uid: created.metadata!.uid! });
    await admin.waitForObject('Secret', missing, 'creds', (o) => o?.metadata.annotations?.[ANNOTATION_FROM] === name);

    // delete (no longer targeted)
    await admin.updateDistribution(name, (d) => {
      d.spec.targets = list([missing]);
    });
    await admin.waitForObject('Secret', a, 'creds', (o) => o === undefined);
    await admin.waitForStatus(name, (s) => s.desired === 1 && s.succeeded === 1);

    await controller.idle();
    const tally = controller.requests.tally();
    // 409s are lost races (the generator and the reconciler both creating the new namespace's copy);
    // a delete answered 404 found the object gone already (the garbage collector removing the
    // copies of an earlier file's distribution was first): both are outcomes, not refusals.
    const benign = (failure: string): boolean => failure.endsWith(' 409') || (failure.startsWith('delete ') && failure.endsWith(' 404'));
    expect(Object.keys(tally.failures).filter((failure) => !benign(failure))).toEqual([]);
    for (const verb of ['create', 'update', 'delete', 'patch', 'get', 'list', 'watch'] as const) expect(tally.byVerb[verb]).toBeGreaterThan(0);
    await waitFor(async () => ((await admin.get('Secret', b, 'creds'))?.data?.theirs === 'eA==' ? true : undefined), { what: 'foreign object untouched' });
  });

  it('serves an ObjectSync (finalizer, copies, status, deletion) with only the documented verbs', async () => {
    const source = (await admin.createNamespace('rbac-os')).metadata!.name!;
    const target = (await admin.createNamespace('rbac-os')).metadata!.name!;
    await admin.core.createNamespacedConfigMap({ namespace: source, body: { metadata: { name: 'shared' }, data: { k: 'v' } } });
    const objectSyncs = { group: OBJECT_SYNC_GROUP, version: OBJECT_SYNC_VERSION, plural: OBJECT_SYNC_PLURAL, namespace: source };
    const body = { apiVersion: 'sync.rustrial.org/v1alpha1', kind: 'ObjectSync', metadata: { name: 'shared' }, spec: { source: { group: '', kind: 'ConfigMap', name: 'shared' }, destinations: [{ namespace: target }] } };
    controller.requests.reset();
    await admin.custom.createNamespacedCustomObject({ ...objectSyncs, body });
    await admin.waitForObject('ConfigMap', target, 'shared', (o) => o?.data?.k === 'v');
    await waitFor(
      async () => {
        const os = (await admin.custom.getNamespacedCustomObject({ ...objectSyncs, name: 'shared' })) as ObjectSync;
        return os.status?.succeeded === 1 && os.metadata.finalizers?.includes(OBJECT_SYNC_FINALIZER) ? true : undefined;
      },
      { what: 'status and finalizer written' },
    );
    await admin.custom.deleteNamespacedCustomObject({ ...objectSyncs, name: 'shared' });
    await admin.waitForObject('ConfigMap', target, 'shared', (o) => o === undefined);
    await waitFor(
      async () => ((await admin.custom.listNamespacedCustomObject(objectSyncs)) as { items: unknown[] }).items.length === 0 ? true : undefined,
      { what: 'the ObjectSync gone' },
    );
    await controller.idle();
    const tally = controller.requests.tally();
    expect(Object.keys(tally.failures).filter((failure) => !failure.endsWith(' 409'))).toEqual([]);
    expect(tally.byRequest['patch objectsyncs']).toBeGreaterThanOrEqual(3);
  });
});
