// A tenant who may only edit distributions and write in her own namespace, with a real identity
// (a ServiceAccount token) against the whole product registered in the API server: every path by
// which she could make the controller act outside her rights is closed. Reusing a name (an
// ObjectSync's distribution, an orphaned distribution), narrowing someone else's distribution,
// a pod in her namespace under writePolicy strict, editing an ObjectSync that is being deleted,
// and a denial that would tell which namespaces exist.
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type V1PolicyRule } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OBJECT_SYNC_GROUP, OBJECT_SYNC_PLURAL, OBJECT_SYNC_VERSION, type ObjectSync } from '../../src/domain/object-sync.js';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, API_VERSION, GROUP, KIND, PLURAL, VERSION, type ResourceDistribution } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { condition, configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { serviceAccountKubeConfig } from './support/service-account.js';

const kc = loadKubeConfig();
const admin = new Kube(kc);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const RD = { group: GROUP, version: VERSION, plural: PLURAL };
const OS = { group: OBJECT_SYNC_GROUP, version: OBJECT_SYNC_VERSION, plural: OBJECT_SYNC_PLURAL };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const metrics = createMetrics();
const label = uniqueName('tenant');
const aliceRole = uniqueName('alice-distributions');
const scraperRole = uniqueName('metrics-reader');
const objectSyncs: { namespace: string; name: string }[] = [];
let server: RunningServer;
let teamA: string, teamB: string, teamC: string, teamD: string, platform: string;
let aliceKc: KubeConfig;
let alice: { custom: CustomObjectsApi; core: CoreV1Api };

const ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];

async function role(namespace: string, name: string, rules: V1PolicyRule[], subject: { namespace: string; name: string }): Promise<void> {
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name }, subjects: [{ kind: 'ServiceAccount', ...subject }] },
  });
}

/** alice: ResourceDistributions create/update/patch (not delete); all she wants in team-a; Secrets create/update (not delete) in team-c. */
async function createAlice(): Promise<void> {
  await admin.core.createNamespacedServiceAccount({ namespace: teamA, body: { metadata: { name: 'alice' } } });
  const subject = { namespace: teamA, name: 'alice' };
  await rbac.createClusterRole({ body: { metadata: { name: aliceRole }, rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }] } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name: aliceRole }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: aliceRole }, subjects: [{ kind: 'ServiceAccount', ...subject }] },
  });
  await role(teamA, 'alice', [{ apiGroups: ['', OBJECT_SYNC_GROUP], resources: ['configmaps', 'secrets', 'pods', OBJECT_SYNC_PLURAL], verbs: ALL }], subject);
  await role(teamC, 'alice', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }], subject);
  aliceKc = await serviceAccountKubeConfig(kc, teamA, 'alice');
  alice = { custom: aliceKc.makeApiClient(CustomObjectsApi), core: aliceKc.makeApiClient(CoreV1Api) };
}

function createObjectSync(client: CustomObjectsApi, os: ObjectSync): Promise<unknown> {
  objectSyncs.push({ namespace: os.metadata.namespace, name: os.metadata.name });
  return client.createNamespacedCustomObject({ ...OS, namespace: os.metadata.namespace, body: os });
}

async function readObjectSync(namespace: string, name: string): Promise<ObjectSync | undefined> {
  try {
    return (await admin.custom.getNamespacedCustomObject({ ...OS, namespace, name })) as ObjectSync;
  } catch {
    return undefined;
  }
}

/** Copies of `name` that still exist, by namespace, after the controller had time to act. */
async function surviving(kind: 'Secret' | 'ConfigMap', name: string, namespaces: string[]): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const found = await Promise.all(namespaces.map(async (ns) => ((await admin.get(kind, ns, name)) ? ns : undefined)));
  return found.filter((ns): ns is string => ns !== undefined);
}

/** GET /metrics of our server, with a bearer token or none. */
function scrape(token: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const req = httpsRequest(`https://127.0.0.1:${server.port}/metrics`, { ca: server.certificates.current()?.trust, agent: false, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The raw answer to a request as alice, Warning headers included (the client library drops them on errors). */
async function raw(config: KubeConfig, method: string, path: string, body: unknown): Promise<{ status: number; warnings: string[]; message: string }> {
  const server = new URL(config.getCurrentCluster()!.server);
  const options: RequestOptions = { method, hostname: server.hostname, port: server.port, path, headers: { 'Content-Type': 'application/json' } };
  await config.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(options, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => {
        const header = res.headers.warning;
        const warnings = header === undefined ? [] : Array.isArray(header) ? header : [header];
        resolve({ status: res.statusCode ?? 0, warnings, message: (JSON.parse(text) as { message?: string }).message ?? '' });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

beforeAll(async () => {
  [teamA, teamB, teamC, teamD, platform] = await Promise.all(
    ['team-a', 'team-b', 'team-c', 'team-d', 'platform'].map(async (prefix) => (await admin.createNamespace(prefix, prefix === 'platform' ? {} : { [label]: 'yes' })).metadata!.name!),
  ) as [string, string, string, string, string];
  await createAlice();
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env: { RD_METRICS_AUTH: 'true' },
    overrides: { webhookNames: { distributions: uniqueName('e2e-tenant-distributions'), namespaces: uniqueName('e2e-tenant-namespaces') }, shutdownDelayMs: 0 },
  });
  // Registered and answering once an invalid distribution is denied by our webhook.
  await waitFor(
    async () => {
      const probe = distributionOf(uniqueName('probe'), { ...configMapOf('c', {}), kind: 'Pod' }, { includedNamespaces: { list: [{ name: teamA }] } });
      const answer = await rejection(admin.custom.createClusterCustomObject({ ...RD, body: probe, dryRun: 'All' })).catch(() => undefined);
      return answer?.message.includes('spec.resource.kind') ? true : undefined;
    },
    { what: 'the distribution webhook of this server to be called', timeoutMs: 60_000 },
  );
}, 180_000);

afterAll(async () => {
  for (const { namespace, name } of objectSyncs) {
    await admin.custom.patchNamespacedCustomObject({ ...OS, namespace, name, body: { metadata: { finalizers: null } } }, merge).catch(() => undefined);
    await admin.custom.deleteNamespacedCustomObject({ ...OS, namespace, name }).catch(() => undefined);
  }
  await server?.stop();
  await admin.cleanup();
  for (const name of [aliceRole, scraperRole]) {
    await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    await rbac.deleteClusterRole({ name }).catch(() => undefined);
  }
});

describe('a tenant who may edit distributions', () => {
  it('cannot take over an ObjectSync by naming a distribution after its copies', async () => {
    await admin.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'registry', namespace: platform }, type: 'Opaque', data: { token: Buffer.from('v1').toString('base64') } });
    const name = uniqueName('platform-sync');
    await createObjectSync(admin.custom, {
      apiVersion: `${OBJECT_SYNC_GROUP}/${OBJECT_SYNC_VERSION}`,
      kind: 'ObjectSync',
      metadata: { name, namespace: platform },
      spec: { source: { group: '', kind: 'Secret', name: 'registry' }, destinations: [teamA, teamB, teamC, teamD].map((namespace) => ({ namespace })) },
    });
    const copy = await admin.waitForObject('Secret', teamA, 'registry', (object) => object !== undefined);
    await Promise.all([teamB, teamC, teamD].map((ns) => admin.waitForObject('Secret', ns, 'registry', (object) => object !== undefined)));
    // What alice can read in her own namespace: the copy's annotation names its distribution.
    const seen = await alice.core.readNamespacedSecret({ namespace: teamA, name: 'registry' });
    const taken = seen.metadata?.annotations?.[ANNOTATION_FROM] ?? '';
    expect(taken).toBe(copy?.metadata.annotations?.[ANNOTATION_FROM]);

    for (const resource of [configMapOf('unrelated', { mine: 'x' }), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'registry' }, type: 'Opaque', data: { token: Buffer.from('hers').toString('base64') } }]) {
      const denied = await rejection(alice.custom.createClusterCustomObject({ ...RD, body: distributionOf(taken, resource, { includedNamespaces: { list: [{ name: teamA }] } }) }));
      expect(denied.code).toBe(422);
      expect(denied.message).toContain('metadata.name: "objectsync-" names are reserved for the distributions of ObjectSyncs');
    }
    expect(await surviving('Secret', 'registry', [teamA, teamB, teamC, teamD])).toEqual([teamA, teamB, teamC, teamD]);

    // The source still reaches every copy, and the ObjectSync goes when deleted.
    await admin.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'registry', namespace: platform }, type: 'Opaque', data: { token: Buffer.from('v2').toString('base64') } });
    for (const ns of [teamB, teamD]) await admin.waitForObject('Secret', ns, 'registry', (object) => object?.data?.token === Buffer.from('v2').toString('base64'));
    await admin.custom.deleteNamespacedCustomObject({ ...OS, namespace: platform, name });
    await waitFor(async () => ((await readObjectSync(platform, name)) === undefined ? true : undefined), { what: 'the ObjectSync to be gone' });
  });

  it('cannot delete the orphaned copies of a deleted distribution by creating one of the same name', async () => {
    const name = uniqueName('legacy');
    await admin.createDistribution(distributionOf(name, configMapOf('legacy-settings', { a: '1' }), { includedNamespaces: { list: [{ name: teamB }, { name: teamC }] } }));
    await admin.waitForStatus(name, (status) => status.succeeded === 2);
    await admin.custom.deleteClusterCustomObject({ ...RD, name, propagationPolicy: 'Orphan' });
    for (const ns of [teamB, teamC]) await admin.waitForObject('ConfigMap', ns, 'legacy-settings', (object) => object !== undefined && (object.metadata.ownerReferences ?? []).length === 0);
    await waitFor(async () => ((await admin.getDistribution(name)) === undefined ? true : undefined), { what: `${name} gone` });

    await alice.custom.createClusterCustomObject({ ...RD, body: distributionOf(name, configMapOf('hers', { mine: 'x' }), { includedNamespaces: { list: [{ name: teamA }] } }) });
    await admin.waitForStatus(name, (status) => status.succeeded === 1);
    expect((await admin.get('ConfigMap', teamA, 'hers'))?.data).toEqual({ mine: 'x' });
    expect(await surviving('ConfigMap', 'legacy-settings', [teamB, teamC])).toEqual([teamB, teamC]);
    await admin.deleteDistribution(name);
  });

  it('cannot narrow an admin\'s distribution to her namespace: that would delete the copies everywhere else', async () => {
    const name = uniqueName('shared-settings');
    await admin.createDistribution(distributionOf(name, configMapOf('shared-settings', { level: 'info' }), { namespaceLabelSelector: { matchLabels: { [label]: 'yes' } } }));
    await admin.waitForStatus(name, (status) => status.succeeded === 4);

    const narrowed = { spec: { resource: configMapOf('shared-settings', { level: 'hers' }), targets: { includedNamespaces: { list: [{ name: teamA }] }, namespaceLabelSelector: null } } };
    const denied = await rejection(alice.custom.patchClusterCustomObject({ ...RD, name, body: narrowed }, merge));
    expect(denied.code).toBe(403);
    expect(denied.message).toContain(`user "system:serviceaccount:${teamA}:alice" may not delete configmaps in every namespace`);
    expect(await surviving('ConfigMap', 'shared-settings', [teamA, teamB, teamC, teamD])).toEqual([teamA, teamB, teamC, teamD]);
    expect((await admin.get('ConfigMap', teamB, 'shared-settings'))?.data).toEqual({ level: 'info' });
  });

  it('cannot move an admin\'s source distribution to her source and namespace', async () => {
    await admin.put({ ...configMapOf('platform-settings', { owner: 'admin' }), metadata: { name: 'platform-settings', namespace: platform } });
    await alice.core.createNamespacedConfigMap({ namespace: teamA, body: { metadata: { name: 'platform-settings' }, data: { owner: 'alice' } } });
    const name = uniqueName('from-source');
    const source = (namespace: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'platform-settings' });
    const rd: ResourceDistribution = { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { source: source(platform), targets: { includedNamespaces: { list: [{ name: teamD }] } } } };
    await admin.createDistribution(rd);
    await admin.waitForStatus(name, (status) => status.succeeded === 1);

    const moved = { spec: { source: source(teamA), targets: { includedNamespaces: { list: [{ name: teamA }] } } } };
    const denied = await rejection(alice.custom.patchClusterCustomObject({ ...RD, name, body: moved }, merge));
    expect(denied.code).toBe(403);
    expect(denied.message).toContain(`may not delete configmaps in namespace "${teamD}", where this change stops distributing`);
    expect((await admin.get('ConfigMap', teamD, 'platform-settings'))?.data).toEqual({ owner: 'admin' });
  });

  it('cannot delete a copy by moving the source into its namespace; an admin can, and the status says what happened', async () => {
    await alice.core.createNamespacedSecret({ namespace: teamA, body: { metadata: { name: 'moving' }, data: { k: Buffer.from('alice').toString('base64') } } });
    const name = uniqueName('alice-moving');
    const source = (namespace: string) => ({ apiVersion: 'v1', kind: 'Secret', namespace, name: 'moving' });
    const rd: ResourceDistribution = { apiVersion: API_VERSION, kind: KIND, metadata: { name }, spec: { source: source(teamA), targets: { includedNamespaces: { list: [{ name: teamC }] } } } };
    await alice.custom.createClusterCustomObject({ ...RD, body: rd });
    await admin.waitForStatus(name, (status) => status.succeeded === 1);

    // The source's namespace is never a target: the copy in team-c would go, a delete she may not make there.
    const moved = { spec: { source: source(teamC) } };
    const denied = await rejection(alice.custom.patchClusterCustomObject({ ...RD, name, body: moved }, merge));
    expect(denied.code).toBe(403);
    expect(denied.message).toContain(`spec.source.namespace: user "system:serviceaccount:${teamA}:alice" may not delete secrets in namespace "${teamC}", where the source moves`);
    expect(await surviving('Secret', 'moving', [teamC])).toEqual([teamC]);

    await admin.custom.patchClusterCustomObject({ ...RD, name, body: moved }, merge);
    const reported = await admin.waitForStatus(name, (status, current) => status.observedGeneration === current.metadata.generation && condition(current, 'SourceNotFound')?.status === 'True');
    expect(condition(reported, 'SourceNotFound')?.message).toBe(
      `source Secret ${teamC}/moving not found: what stood there was this distribution's copy (spec.source moved into a target namespace), which was deleted as the source's namespace is never a target; the copies in the target namespaces are kept as they are`,
    );
    expect(await admin.get('Secret', teamC, 'moving')).toBeUndefined();
    await admin.deleteDistribution(name);
  });

  it('cannot adopt an object where she may write but not delete, and then delete it by narrowing', async () => {
    await admin.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'team-c-secret', namespace: teamC }, type: 'Opaque', data: { k: Buffer.from('team-c').toString('base64') } });
    const name = uniqueName('alice-adopt');
    await alice.core.patchNamespacedSecret({ namespace: teamC, name: 'team-c-secret', body: { metadata: { annotations: { [ANNOTATION_ADOPT]: name } } } }, merge);
    const template = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'team-c-secret' }, type: 'Opaque', data: { k: Buffer.from('alice').toString('base64') } };
    await alice.custom.createClusterCustomObject({ ...RD, body: distributionOf(name, template, { includedNamespaces: { list: [{ name: teamC }] } }) });
    await admin.waitForObject('Secret', teamC, 'team-c-secret', (object) => object?.metadata.annotations?.[ANNOTATION_FROM] === name);

    const denied = await rejection(alice.custom.patchClusterCustomObject({ ...RD, name, body: { spec: { targets: { includedNamespaces: { list: [{ name: teamA }] } } } } }, merge));
    expect(denied.code).toBe(403);
    expect(denied.message).toContain(`may not delete secrets in namespace "${teamC}"`);
    expect(await surviving('Secret', 'team-c-secret', [teamC])).toEqual([teamC]);
    await admin.deleteDistribution(name);
  });

  it('gets no copy written before her pod under writePolicy strict while another target conflicts', async () => {
    const name = uniqueName('strict');
    await admin.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'strict-s', namespace: teamD }, type: 'Opaque', data: { k: Buffer.from('team-d').toString('base64') } });
    const template = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'strict-s' }, type: 'Opaque', data: { k: Buffer.from('shared').toString('base64') } };
    await admin.createDistribution(distributionOf(name, template, { includedNamespaces: { list: [{ name: teamA }, { name: teamD }] } }, { writePolicy: 'strict' }));
    const rd = await admin.waitForStatus(name, (status, current) => status.observedGeneration === current.metadata.generation && condition(current, 'ConflictOccurred')?.status === 'True');
    expect(condition(rd, 'ConflictOccurred')?.failedNamespace).toEqual([teamA, teamD].sort());

    await alice.core.createNamespacedPod({
      namespace: teamA,
      body: { metadata: { name: 'mounts-strict' }, spec: { containers: [{ name: 'app', image: 'registry.example.com/app:1' }], volumes: [{ name: 's', secret: { secretName: 'strict-s' } }] } },
    });
    expect(await surviving('Secret', 'strict-s', [teamA])).toEqual([]);
    await admin.deleteDistribution(name);
  });

  it('cannot point an ObjectSync that is being deleted at another team\'s Secret', async () => {
    await admin.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bobs', namespace: teamB }, type: 'Opaque', data: { k: Buffer.from('bob').toString('base64') } });
    await alice.core.createNamespacedSecret({ namespace: teamA, body: { metadata: { name: 'alices' }, data: { k: Buffer.from('alice').toString('base64') } } });
    const name = uniqueName('held');
    await createObjectSync(alice.custom, {
      apiVersion: `${OBJECT_SYNC_GROUP}/${OBJECT_SYNC_VERSION}`,
      kind: 'ObjectSync',
      metadata: { name, namespace: teamA, finalizers: ['example.com/hold'] },
      spec: { source: { group: '', kind: 'Secret', name: 'alices' }, destinations: [{ namespace: teamA, name: 'alices-copy' }] },
    });
    await admin.waitForObject('Secret', teamA, 'alices-copy', (object) => object !== undefined);
    await alice.custom.deleteNamespacedCustomObject({ ...OS, namespace: teamA, name });
    await waitFor(async () => ((await readObjectSync(teamA, name))?.metadata.deletionTimestamp ? true : undefined), { what: 'the ObjectSync to be terminating' });

    const retarget = { spec: { source: { group: '', kind: 'Secret', namespace: teamB, name: 'bobs' }, destinations: [{ namespace: teamB, name: 'alices-copy' }, { namespace: 'kube-system', name: 'alices-copy' }] } };
    const denied = await rejection(alice.custom.patchNamespacedCustomObject({ ...OS, namespace: teamA, name, body: retarget }, merge));
    expect(denied.code).toBe(403);
    expect(denied.message).toContain(`may not get secrets "bobs" in namespace "${teamB}"`);
    // Her own finalizer can still go: the update that leaves the spec as it is passes.
    await alice.custom.patchNamespacedCustomObject({ ...OS, namespace: teamA, name, body: { metadata: { finalizers: null } } }, merge);
    await waitFor(async () => ((await readObjectSync(teamA, name)) === undefined ? true : undefined), { what: 'the ObjectSync to be gone' });
  });

  it('cannot make one ObjectSync stand for more than 1000 destinations', async () => {
    const destinations = Array.from({ length: 1001 }, (_, i) => ({ namespace: teamA, name: `copy-${i}` }));
    const body = { apiVersion: `${OBJECT_SYNC_GROUP}/${OBJECT_SYNC_VERSION}`, kind: 'ObjectSync', metadata: { name: uniqueName('wide') }, spec: { source: { group: '', kind: 'Secret', name: 'alices' }, destinations } };
    const denied = await rejection(alice.custom.createNamespacedCustomObject({ ...OS, namespace: teamA, body }));
    expect(denied.code).toBe(422);
    expect(denied.message).toContain('spec.destinations: Too many: 1001: must have at most 1000 items');
  });

  it('cannot read /metrics: only a token whose user may get it can', async () => {
    await admin.core.createNamespacedServiceAccount({ namespace: teamB, body: { metadata: { name: 'scraper' } } });
    await rbac.createClusterRole({ body: { metadata: { name: scraperRole }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] } });
    await rbac.createClusterRoleBinding({
      body: { metadata: { name: scraperRole }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: scraperRole }, subjects: [{ kind: 'ServiceAccount', namespace: teamB, name: 'scraper' }] },
    });
    const scraper = (await serviceAccountKubeConfig(kc, teamB, 'scraper')).getCurrentUser()?.token;
    expect(await scrape(undefined)).toBe(401);
    expect(await scrape('not-a-token')).toBe(401);
    expect(await scrape(aliceKc.getCurrentUser()?.token)).toBe(403);
    expect(await scrape(scraper)).toBe(200);
  });

  it('learns nothing about which namespaces exist from a denial', async () => {
    const future = uniqueName('future-ns');
    const body = distributionOf(uniqueName('probe'), configMapOf('c', { a: 'b' }), { includedNamespaces: { list: [{ name: teamB }, { name: future }] } });
    const path = `/apis/${GROUP}/${VERSION}/${PLURAL}?dryRun=All`;
    const asAlice = await raw(aliceKc, 'POST', path, body);
    expect(asAlice.status).toBe(403);
    expect(asAlice.message).toContain(`may not create, update configmaps in namespace "${teamB}"`);
    expect(asAlice.warnings).toEqual([]);
    // The same request by someone allowed is warned (so the warnings above would have been seen).
    const asAdmin = await raw(kc, 'POST', path, body);
    expect(asAdmin.status).toBe(201);
    expect(asAdmin.warnings.join('\n')).toMatch(new RegExp(`namespace \\W*${future}\\W* does not exist yet`));
  });

  it('costs a bounded number of access reviews with a forged 10,000-namespace review (no webhook client CA configured)', async () => {
    const namespaces = Array.from({ length: 10_000 }, (_, i) => ({ name: `forged-${i}` }));
    const rd = distributionOf('forged', configMapOf('c', { a: 'b' }), { includedNamespaces: { list: namespaces } });
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'forged',
        kind: { group: GROUP, version: VERSION, kind: KIND },
        resource: { group: GROUP, version: VERSION, resource: PLURAL },
        name: 'forged',
        operation: 'CREATE',
        userInfo: { username: uniqueName('nobody'), groups: ['system:authenticated'] },
        object: rd,
      },
    };
    const reviews = async (): Promise<number> => (await metrics.apiRequests.get()).values.find((v) => v.labels.resource === 'subjectaccessreviews')?.value ?? 0;
    const before = await reviews();
    const body = JSON.stringify(review);
    const answer = await new Promise<{ allowed?: boolean; status?: { message?: string } }>((resolve, reject) => {
      const req = httpsRequest(
        `https://127.0.0.1:${server.port}/validate/resourcedistributions`,
        { method: 'POST', ca: server.certificates.current()?.trust, agent: false, headers: { 'content-type': 'application/json' } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
          res.on('end', () => resolve((JSON.parse(text) as { response: { allowed?: boolean; status?: { message?: string } } }).response));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    const spent = (await reviews()) - before;
    console.log(`forged review of ${Math.round(body.length / 1024)} KB for 10,000 namespaces: ${spent} access reviews`);
    expect(answer.allowed).toBe(false);
    expect(answer.status?.message).toMatch(/more checks were not made/);
    // Two cluster-wide questions, then per-namespace ones until eleven are denied (16 in flight at most).
    expect(spent).toBeLessThanOrEqual(2 + 2 * 16 + 11);
  });
});
