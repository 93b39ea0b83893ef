// Kinds beyond Secret and ConfigMap (RD_ALLOWED_KINDS), with the whole product registered in the
// API server: a NetworkPolicy (whose fields the API server defaults) settles at zero writes and is
// repaired when edited; a kind followed from a source; a RoleBinding needs `bind` on its role; a
// kind the configuration does not allow is denied, and a template field the kind does not have; a
// kind's copies are watched only while a distribution copies it.
import { CustomObjectsApi, NetworkingV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type V1NetworkPolicy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, GROUP, KIND, LABEL_DISTRIBUTION, PLURAL, VERSION, type ResourceDistribution } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { Kube } from './fixtures/kube.js';
import { asUserWith, rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const N = 5;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const NETWORK_POLICY = 'NetworkPolicy.networking.k8s.io';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const custom = kc.makeApiClient(CustomObjectsApi);
const networking = kc.makeApiClient(NetworkingV1Api);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const metrics = createMetrics();
const team = uniqueName('kinds');
const targets: string[] = [];
let server: RunningServer;

function distribution(name: string, spec: object): ResourceDistribution {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { targets: { namespaceLabelSelector: { matchLabels: { team } } }, ...spec } };
}

/** Only what we set: the API server adds policyTypes and each port's protocol. */
const denyButHttp = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name: 'deny-but-http', labels: { app: 'guard' } },
  spec: { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] },
};

async function policies(name: string): Promise<V1NetworkPolicy[]> {
  return (await networking.listNetworkPolicyForAllNamespaces({ labelSelector: `${LABEL_DISTRIBUTION}=${name}` })).items;
}

async function writesOf(resource: string): Promise<number> {
  const metric = await metrics.apiRequests.get();
  return metric.values.filter((v) => ['create', 'update', 'delete'].includes(String(v.labels.verb)) && v.labels.resource === resource).reduce((sum, v) => sum + v.value, 0);
}

async function kindWatched(kind: string): Promise<number | undefined> {
  return (await metrics.kindsWatched.get()).values.find((v) => v.labels.kind === kind)?.value;
}

beforeAll(async () => {
  for (let i = 0; i < N; i++) targets.push((await kube.createNamespace('kinds-target', { team })).metadata!.name!);
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env: { RD_ALLOWED_KINDS: `Secret,ConfigMap,${NETWORK_POLICY},RoleBinding.rbac.authorization.k8s.io,Certificate.cert-manager.io` },
    overrides: { webhookNames: { distributions: uniqueName('e2e-kinds-distributions'), namespaces: uniqueName('e2e-kinds-namespaces') }, shutdownDelayMs: 0 },
  });
  // Registered and answering once a kind it does not allow is denied with the allowed ones named.
  await waitFor(
    async () => {
      const probe = distribution(uniqueName('probe'), { resource: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x' } } });
      const answer = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: probe, dryRun: 'All' })).catch(() => undefined);
      return answer?.message.includes(NETWORK_POLICY) ? true : undefined;
    },
    { what: 'the distribution webhook of this server to be called' },
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('a kind the API server defaults: NetworkPolicy', () => {
  const name = uniqueName('rd-netpol');

  it('is copied to every target, and its copies are watched from then on', async () => {
    expect(await kindWatched(NETWORK_POLICY)).toBeUndefined();
    await kube.createDistribution(distribution(name, { resource: denyButHttp }));
    await kube.waitForStatus(name, (s) => s.desired === N && s.succeeded === N);
    const copies = await policies(name);
    expect(copies.map((p) => p.metadata?.namespace).sort()).toEqual([...targets].sort());
    // What the API server added to every copy, which the template never says.
    expect(copies[0]?.spec?.policyTypes).toEqual(['Ingress']);
    expect(copies[0]?.spec?.ingress?.[0]?.ports?.[0]?.protocol).toBe('TCP');
    expect(await kindWatched(NETWORK_POLICY)).toBe(1);
  });

  it('settles at zero writes although the server filled in fields the template does not set', async () => {
    const before = await writesOf('networkpolicies');
    // A change of the distribution that is not the template: a full pass over every copy.
    const rd = (await kube.getDistribution(name))!;
    await custom.patchClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name, body: { metadata: { labels: { touched: 'yes' } } } }, merge);
    await waitFor(async () => ((await kube.getDistribution(name))?.metadata.resourceVersion !== rd.metadata.resourceVersion ? true : undefined), { what: 'the label' });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await writesOf('networkpolicies')).toBe(before);
  });

  it('repairs a copy whose rules someone changed', async () => {
    const namespace = targets[0]!;
    const copy = await networking.readNamespacedNetworkPolicy({ namespace, name: 'deny-but-http' });
    copy.spec!.ingress = [{ ports: [{ port: 8080 }] }];
    await networking.replaceNamespacedNetworkPolicy({ namespace, name: 'deny-but-http', body: copy });
    await waitFor(
      async () => {
        const now = await networking.readNamespacedNetworkPolicy({ namespace, name: 'deny-but-http' });
        return now.spec?.ingress?.[0]?.ports?.[0]?.port === 80 ? true : undefined;
      },
      { what: 'the repaired NetworkPolicy' },
    );
  });

  it('reverts a field someone added that the template does not set, and counts the copy out of sync until then', async () => {
    const namespace = targets[1]!;
    const copy = await networking.readNamespacedNetworkPolicy({ namespace, name: 'deny-but-http' });
    // Opens the guard to every pod of the namespace: a field the template never set.
    copy.spec!.ingress![0]!._from = [{ podSelector: {} }];
    await networking.replaceNamespacedNetworkPolicy({ namespace, name: 'deny-but-http', body: copy });
    await waitFor(
      async () => {
        const now = await networking.readNamespacedNetworkPolicy({ namespace, name: 'deny-but-http' });
        return now.spec?.ingress?.[0]?._from === undefined ? true : undefined;
      },
      { what: 'the added field to be reverted', timeoutMs: 15_000 },
    );
    await kube.waitForStatus(name, (s) => s.succeeded === N);
  });

  it('stops watching the kind once no distribution copies it', async () => {
    await kube.deleteDistribution(name);
    await waitFor(async () => ((await policies(name)).length === 0 ? true : undefined), { what: 'the garbage collector to remove the copies', timeoutMs: 60_000 });
    await waitFor(async () => ((await kindWatched(NETWORK_POLICY)) === 0 ? true : undefined), { what: 'the NetworkPolicy watch to stop' });
  });
});

describe('a kind followed from a source', () => {
  it('copies a NetworkPolicy of another namespace and follows its changes', async () => {
    const sourceNs = (await kube.createNamespace('kinds-source')).metadata!.name!;
    await networking.createNamespacedNetworkPolicy({ namespace: sourceNs, body: { ...denyButHttp, metadata: { name: 'from-source' } } });
    const name = uniqueName('rd-netpol-source');
    await kube.createDistribution(distribution(name, { source: { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', namespace: sourceNs, name: 'from-source' } }));
    await kube.waitForStatus(name, (s) => s.succeeded === N && s.conditions.length === 9);

    const source = await networking.readNamespacedNetworkPolicy({ namespace: sourceNs, name: 'from-source' });
    source.spec!.ingress = [{ ports: [{ port: 443 }] }];
    await networking.replaceNamespacedNetworkPolicy({ namespace: sourceNs, name: 'from-source', body: source });
    await waitFor(
      async () => {
        const copies = await policies(name);
        return copies.length === N && copies.every((p) => p.spec?.ingress?.[0]?.ports?.[0]?.port === 443) ? true : undefined;
      },
      { what: 'every copy to follow the source' },
    );
    await kube.deleteDistribution(name);
  });
});

describe('admission of other kinds', () => {
  const roleBinding = (role: string): object => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'ci-edit' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'ci' }],
  });

  it('denies a RoleBinding whose role the author may not bind, and copies one the author may', async () => {
    const bindable = uniqueName('rd-bindable');
    await rbac.createClusterRole({ body: { metadata: { name: bindable }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] } });
    const rules = [
      { apiGroups: [GROUP], resources: [PLURAL], verbs: ['create'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'], verbs: ['create', 'update'] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: [bindable], verbs: ['bind'] },
    ];
    try {
      await asUserWith(kc, 'frank', rules, async (user, as) => {
        const asFrank = as.makeApiClient(CustomObjectsApi);
        const admin = distribution(uniqueName('rd-admin'), { resource: roleBinding('admin') });
        const { code, message } = await rejection(asFrank.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: admin, dryRun: 'All' }));
        expect(code).toBe(403);
        expect(message).toContain(`spec.resource.roleRef: user "${user}" may not bind clusterroles "admin" in every namespace`);

        const name = uniqueName('rd-bindable');
        await asFrank.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(name, { resource: roleBinding(bindable) }) });
        await kube.waitForStatus(name, (s) => s.succeeded === N);
        const copy = await rbac.readNamespacedRoleBinding({ namespace: targets[1]!, name: 'ci-edit' });
        expect(copy.roleRef.name).toBe(bindable);
        await kube.deleteDistribution(name);
      });
    } finally {
      await rbac.deleteClusterRole({ name: bindable }).catch(() => undefined);
    }
  });

  it('reverts a field someone added to a copied RoleBinding', async () => {
    const name = uniqueName('rd-binding');
    await kube.createDistribution(distribution(name, { resource: roleBinding('view') }));
    await kube.waitForStatus(name, (s) => s.succeeded === N);
    const namespace = targets[2]!;
    const copy = await rbac.readNamespacedRoleBinding({ namespace, name: 'ci-edit' });
    copy.subjects![0]!.namespace = 'sneaky';
    await rbac.replaceNamespacedRoleBinding({ namespace, name: 'ci-edit', body: copy });
    await waitFor(
      async () => ((await rbac.readNamespacedRoleBinding({ namespace, name: 'ci-edit' })).subjects?.[0]?.namespace === undefined ? true : undefined),
      { what: 'the added field to be reverted', timeoutMs: 15_000 },
    );
    await kube.deleteDistribution(name);
  });

  it('denies a kind not allowed, and one allowed but not served, naming what is', async () => {
    const service = distribution(uniqueName('rd-service'), { resource: { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' } } });
    const { code, message } = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: service, dryRun: 'All' }));
    expect(code).toBe(422);
    expect(message).toContain(`spec.resource.kind: "Service" is not supported: use Secret, ConfigMap, ${NETWORK_POLICY} or RoleBinding.rbac.authorization.k8s.io`);
    // Certificate.cert-manager.io is configured but not served here: left out, not offered.
    expect(message).not.toContain('Certificate');
  });

  it("denies a template field the kind does not have, by the fields the API server's OpenAPI publishes for it", async () => {
    // The API server would drop `spex` at the first write: every copy would then allow all traffic.
    const { spec, ...rest } = denyButHttp;
    const misspelled = distribution(uniqueName('rd-spex'), { resource: { ...rest, spex: spec } });
    const { code, message } = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: misspelled, dryRun: 'All' }));
    expect(code).toBe(422);
    expect(message).toContain('spec.resource.spex: is not a field of a NetworkPolicy: a NetworkPolicy has apiVersion, kind, metadata, spec');
    const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'b' }, roleref: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } };
    const wrongCase = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(uniqueName('rd-roleref'), { resource: binding }), dryRun: 'All' }));
    expect(wrongCase.message).toContain('spec.resource.roleref: is not a field of a RoleBinding: did you mean "roleRef"?');
  });
});
