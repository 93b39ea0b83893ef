// The author's rights are asked again when what a distribution copies changes without a new
// admission. A tenant (a ServiceAccount token) makes a distribution of a Secret that does not
// exist yet in her own namespace, copied to a namespace where she may read and write; the admin
// then takes away her right to read her namespace's Secrets and creates a Secret of that name
// there. Its value must not reach the copy she can read: the distribution reports that its author
// may not read the source, with a Warning Event, and copies nothing until she may again. The same
// holds for where it copies: a namespace that starts to match her selector after admission gets
// a copy only if she may still create the kind there.
import { AuthorizationV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type KubeConfig, type V1PolicyRule } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_AUTHOR, parseAuthor } from '../../src/domain/author.js';
import { OBJECT_SYNC_GROUP, OBJECT_SYNC_PLURAL, OBJECT_SYNC_VERSION, type ObjectSync } from '../../src/domain/object-sync.js';
import { GROUP, PLURAL, VERSION, type Resource, type ResourceDistribution } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { connectionOf } from '../kube-client.js';
import { condition, configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { serviceAccountKubeConfig } from './support/service-account.js';

const kc = loadKubeConfig();
const admin = new Kube(kc);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const RD = { group: GROUP, version: VERSION, plural: PLURAL };
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const aliceRole = uniqueName('alice-author-rights');
/** Writing ConfigMaps in every namespace: what admission asks of a selector distribution of them. */
const aliceConfigMapsRole = uniqueName('alice-configmaps-everywhere');
const b64 = (text: string): string => Buffer.from(text).toString('base64');
const SECRETS_ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const SECRETS_WRITE_ONLY = ['create', 'update', 'patch', 'delete'];
const OS = { group: OBJECT_SYNC_GROUP, version: OBJECT_SYNC_VERSION, plural: OBJECT_SYNC_PLURAL };
const objectSyncs: string[] = [];
/** Alice's distributions: made with her credentials, so not removed by the admin's cleanup. */
const distributions: string[] = [];
let server: RunningServer;
let home: string, shared: string;
let alice: { custom: CustomObjectsApi; core: CoreV1Api };

async function role(namespace: string, rules: V1PolicyRule[]): Promise<void> {
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'alice' }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: { name: 'alice' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'alice' }, subjects: [{ kind: 'ServiceAccount', namespace: home, name: 'alice' }] },
  });
}

/** ObjectSyncs, which she may always make at home. */
const OBJECT_SYNCS: V1PolicyRule = { apiGroups: [OBJECT_SYNC_GROUP], resources: [OBJECT_SYNC_PLURAL], verbs: SECRETS_ALL };

/** What alice may do with Secrets in her own namespace (the admin changes it). */
async function aliceSecretsAtHome(verbs: string[]): Promise<void> {
  await rbac.replaceNamespacedRole({ namespace: home, name: 'alice', body: { metadata: { name: 'alice' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs }, OBJECT_SYNCS] } });
}

/** Whether the API server says alice may read Secret `name` at home. */
async function aliceMayRead(name: string): Promise<boolean> {
  const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
    body: { spec: { user: `system:serviceaccount:${home}:alice`, groups: ['system:serviceaccounts', `system:serviceaccounts:${home}`, 'system:authenticated'], resourceAttributes: { namespace: home, verb: 'get', resource: 'secrets', name } } },
  });
  return review.status?.allowed === true;
}

/** alice: distributions (create, update, get); at home, everything on Secrets; in `shared`, read and write Secrets. */
async function createAlice(): Promise<KubeConfig> {
  await admin.core.createNamespacedServiceAccount({ namespace: home, body: { metadata: { name: 'alice' } } });
  await rbac.createClusterRole({ body: { metadata: { name: aliceRole }, rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }] } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name: aliceRole }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: aliceRole }, subjects: [{ kind: 'ServiceAccount', namespace: home, name: 'alice' }] },
  });
  await role(home, [{ apiGroups: [''], resources: ['secrets'], verbs: SECRETS_ALL }, OBJECT_SYNCS]);
  await role(shared, [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }]);
  return serviceAccountKubeConfig(kc, home, 'alice');
}

function sourceDistribution(name: string, source: string): ResourceDistribution {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'ResourceDistribution',
    metadata: { name },
    spec: { source: { apiVersion: 'v1', kind: 'Secret', namespace: home, name: source }, targets: { includedNamespaces: { list: [{ name: shared }] } } },
  };
}

function secret(name: string, password: string): Resource {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: home }, type: 'Opaque', data: { password: b64(password) } };
}

async function warningReasons(name: string): Promise<string[]> {
  const list = await admin.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` });
  return list.items.filter((event) => event.type === 'Warning').map((event) => event.reason ?? '');
}

/** The copy in `shared`, as alice reads it (undefined: none). */
async function aliceReadsCopy(name: string): Promise<Resource | undefined> {
  try {
    return (await alice.core.readNamespacedSecret({ namespace: shared, name })) as unknown as Resource;
  } catch {
    return undefined;
  }
}

beforeAll(async () => {
  [home, shared] = (await Promise.all(['alice-home', 'shared'].map(async (prefix) => (await admin.createNamespace(prefix)).metadata!.name!))) as [string, string];
  const aliceKc = await createAlice();
  alice = { custom: aliceKc.makeApiClient(CustomObjectsApi), core: aliceKc.makeApiClient(CoreV1Api) };
  server = await startLocalServer({
    connection: connectionOf(kc),
    overrides: {
      webhookNames: { distributions: uniqueName('e2e-authors-distributions'), namespaces: uniqueName('e2e-authors-namespaces'), pods: uniqueName('e2e-authors-mutating') },
      shutdownDelayMs: 0,
      // A denial is asked again a second after it, not a minute: a right given back shows at once.
      authorDenialTtlMs: 1000,
    },
  });
  // Registered and answering once an invalid distribution is denied by our webhook, and a valid one gets its author.
  await waitFor(
    async () => {
      const probe = distributionOf(uniqueName('probe'), { ...configMapOf('c', {}), kind: 'Pod' }, { includedNamespaces: { list: [{ name: shared }] } });
      const answer = await rejection(admin.custom.createClusterCustomObject({ ...RD, body: probe, dryRun: 'All' })).catch(() => undefined);
      return answer?.message.includes('spec.resource.kind') ? true : undefined;
    },
    { what: 'the distribution webhook of this server to be called', timeoutMs: 60_000 },
  );
}, 180_000);

afterAll(async () => {
  for (const name of objectSyncs) {
    await admin.custom.patchNamespacedCustomObject({ ...OS, namespace: home, name, body: { metadata: { finalizers: null } } }, merge).catch(() => undefined);
    await admin.custom.deleteNamespacedCustomObject({ ...OS, namespace: home, name }).catch(() => undefined);
  }
  for (const name of distributions) await admin.custom.deleteClusterCustomObject({ ...RD, name }).catch(() => undefined);
  await server?.stop();
  await admin.cleanup();
  await rbac.deleteClusterRoleBinding({ name: aliceRole }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: aliceRole }).catch(() => undefined);
  await rbac.deleteClusterRoleBinding({ name: aliceConfigMapsRole }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: aliceConfigMapsRole }).catch(() => undefined);
});

describe("a distribution acts with its author's rights, not only at admission", () => {
  it('copies nothing from a source its author lost the right to read before it appeared, and says so', async () => {
    const name = uniqueName('db-copy');
    await alice.custom.createClusterCustomObject({ ...RD, body: sourceDistribution(name, 'db-password') });
    distributions.push(name);
    await admin.waitForStatus(name, (status) => condition({ status } as ResourceDistribution, 'SourceNotFound')?.status === 'True');

    // The admin takes away her right to read Secrets at home, then puts one there under that name.
    await aliceSecretsAtHome(SECRETS_WRITE_ONLY);
    await waitFor(async () => ((await aliceMayRead('db-password')) ? undefined : true), { what: 'the revocation to be in force' });
    // The controller learns of it through its watch of RBAC objects: a moment, as for any admin.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await admin.put(secret('db-password', 's3cr3t'));

    // Time enough for a copy to be written (well under a second when it is), and none for her to read.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await aliceReadsCopy('db-password'))?.data).toBeUndefined();
    const rd = await admin.waitForStatus(name, (status) => condition({ status } as ResourceDistribution, 'AuthorAccessDenied')?.status === 'True');
    expect(condition(rd, 'AuthorAccessDenied')).toMatchObject({ reason: 'AuthorLacksAccess' });
    expect(condition(rd, 'AuthorAccessDenied')?.message).toContain(`may not get secrets "db-password" in namespace "${home}"`);
    expect(condition(rd, 'SourceNotFound')?.status).toBe('False');
    expect(rd.status).toMatchObject({ desired: 1, succeeded: 0, failed: 1 });
    await waitFor(async () => ((await warningReasons(name)).includes('AuthorLacksAccess') ? true : undefined), { what: 'a Warning Event AuthorLacksAccess' });
    expect(await admin.get('Secret', shared, 'db-password')).toBeUndefined();

    // Her right given back, the next version of the source is copied.
    await aliceSecretsAtHome(SECRETS_ALL);
    await waitFor(async () => ((await aliceMayRead('db-password')) ? true : undefined), { what: 'the right to be back' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await admin.put(secret('db-password', 'rotated'));
    const copy = await admin.waitForObject('Secret', shared, 'db-password', (object) => object?.data?.password === b64('rotated'));
    expect(copy?.data).toEqual({ password: b64('rotated') });
    const after = await admin.waitForStatus(name, (status) => status.succeeded === 1);
    expect(condition(after, 'AuthorAccessDenied')).toBeUndefined();
  });

  it('records the author of the spec, which the tenant cannot set or change herself', async () => {
    const name = uniqueName('forged');
    const body = sourceDistribution(name, 'db-password');
    body.metadata.annotations = { [ANNOTATION_AUTHOR]: JSON.stringify({ username: 'kubernetes-admin', groups: ['system:masters'] }) };
    const created = (await alice.custom.createClusterCustomObject({ ...RD, body })) as ResourceDistribution;
    distributions.push(name);
    expect(parseAuthor(created.metadata.annotations?.[ANNOTATION_AUTHOR] ?? '')).toMatchObject({ username: `system:serviceaccount:${home}:alice` });

    // A change of labels alone keeps the author: renaming it there is refused.
    const renamed = { metadata: { labels: { team: 'a' }, annotations: { [ANNOTATION_AUTHOR]: JSON.stringify({ username: 'kubernetes-admin', groups: ['system:masters'] }) } } };
    const patched = (await alice.custom.patchClusterCustomObject({ ...RD, name, body: renamed }, merge)) as ResourceDistribution;
    expect(parseAuthor(patched.metadata.annotations?.[ANNOTATION_AUTHOR] ?? '')).toMatchObject({ username: `system:serviceaccount:${home}:alice` });
    expect(patched.metadata.labels).toEqual({ team: 'a' });
  });

  it('holds an ObjectSync in her namespace the same way, and says so on it', async () => {
    const name = uniqueName('api-key-sync');
    objectSyncs.push(name);
    const body: ObjectSync = {
      apiVersion: `${OBJECT_SYNC_GROUP}/${OBJECT_SYNC_VERSION}`,
      kind: 'ObjectSync',
      metadata: { name, namespace: home },
      spec: { source: { group: '', kind: 'Secret', name: 'api-key' }, destinations: [{ namespace: shared }] },
    };
    const created = (await alice.custom.createNamespacedCustomObject({ ...OS, namespace: home, body })) as ObjectSync;
    expect(parseAuthor(created.metadata.annotations?.[ANNOTATION_AUTHOR] ?? '')).toMatchObject({ username: `system:serviceaccount:${home}:alice` });

    await aliceSecretsAtHome(SECRETS_WRITE_ONLY);
    await waitFor(async () => ((await aliceMayRead('api-key')) ? undefined : true), { what: 'the revocation to be in force' });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await admin.put({ ...secret('api-key', 'k3y') });

    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await aliceReadsCopy('api-key'))?.data).toBeUndefined();
    const held = await waitFor(
      async () => {
        const os = (await admin.custom.getNamespacedCustomObject({ ...OS, namespace: home, name })) as ObjectSync;
        const ready = os.status?.conditions.find((c) => c.type === 'Ready');
        return ready?.status === 'False' && ready.reason === 'AuthorLacksAccess' ? os : undefined;
      },
      { what: 'the ObjectSync to say its author may not read the source' },
    );
    expect(held.status?.conditions.find((c) => c.type === 'AuthorAccessDenied')?.status).toBe('True');
    await aliceSecretsAtHome(SECRETS_ALL);
  });
});

describe("a namespace that starts to match after admission is written to only with its author's rights", () => {
  const CONFIGMAPS_WRITE = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update', 'patch'] }];
  const subjects = () => [{ kind: 'ServiceAccount', namespace: home, name: 'alice' }];

  /** Whether the API server says alice may create ConfigMaps in `namespace`. */
  async function aliceMayCreate(namespace: string): Promise<boolean> {
    const review = await kc.makeApiClient(AuthorizationV1Api).createSubjectAccessReview({
      body: { spec: { user: `system:serviceaccount:${home}:alice`, groups: ['system:serviceaccounts', `system:serviceaccounts:${home}`, 'system:authenticated'], resourceAttributes: { namespace, verb: 'create', resource: 'configmaps' } } },
    });
    return review.status?.allowed === true;
  }

  it('writes no copy where she may no longer create it, says so, and writes it once she may', async () => {
    const key = 'author-targets.e2e/team';
    const team = uniqueName('team');
    // Her own team namespace, where she keeps the right; another one the admin labels later.
    const mine = (await admin.createNamespace('alice-team', { [key]: team })).metadata!.name!;
    const other = (await admin.createNamespace('not-alice')).metadata!.name!;
    await role(mine, CONFIGMAPS_WRITE);
    await rbac.createClusterRole({ body: { metadata: { name: aliceConfigMapsRole }, rules: CONFIGMAPS_WRITE } });
    await rbac.createClusterRoleBinding({ body: { metadata: { name: aliceConfigMapsRole }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: aliceConfigMapsRole }, subjects: subjects() } });
    await waitFor(async () => ((await aliceMayCreate(other)) ? true : undefined), { what: 'her cluster-wide right to be in force' });
    await new Promise((resolve) => setTimeout(resolve, 1000));

    // Admitted: she may write ConfigMaps in every namespace, as a selector requires.
    const name = uniqueName('team-settings');
    await alice.custom.createClusterCustomObject({ ...RD, body: distributionOf(name, configMapOf('team-settings', { mode: 'team' }), { namespaceLabelSelector: { matchLabels: { [key]: team } } }) });
    distributions.push(name);
    await admin.waitForObject('ConfigMap', mine, 'team-settings', (object) => object?.data?.mode === 'team');

    // The admin takes the cluster-wide right away; in her team namespace she keeps it.
    await rbac.deleteClusterRoleBinding({ name: aliceConfigMapsRole });
    await waitFor(async () => ((await aliceMayCreate(other)) ? undefined : true), { what: 'the revocation to be in force' });
    // The controller learns of it through its watch of RBAC objects: a moment, as for any admin.
    await new Promise((resolve) => setTimeout(resolve, 2000));

    // Then labels another namespace to match, and creates a new one that matches: no admission for either.
    await admin.labelNamespace(other, { [key]: team });
    const fresh = (await admin.createNamespace('new-team', { [key]: team })).metadata!.name!;
    const rd = await admin.waitForStatus(name, (status) => (condition({ status } as ResourceDistribution, 'AuthorAccessDenied')?.failedNamespace ?? []).length === 2);
    const denied = condition(rd, 'AuthorAccessDenied');
    expect(denied).toMatchObject({ status: 'True', reason: 'AuthorLacksAccess', failedNamespace: [fresh, other].sort() });
    expect(denied?.message).toContain(`author "system:serviceaccount:${home}:alice" may not create configmaps in namespaces`);
    for (const namespace of [other, fresh]) expect(denied?.message).toContain(namespace);
    expect(rd.status).toMatchObject({ desired: 3, succeeded: 1, failed: 2 });
    expect(condition(rd, 'CreateResourceFailed')?.status).toBe('False');
    expect(await admin.get('ConfigMap', other, 'team-settings')).toBeUndefined();
    expect(await admin.get('ConfigMap', fresh, 'team-settings')).toBeUndefined();
    expect((await admin.get('ConfigMap', mine, 'team-settings'))?.data).toEqual({ mode: 'team' });
    await waitFor(async () => ((await warningReasons(name)).includes('AuthorLacksAccess') ? true : undefined), { what: 'a Warning Event AuthorLacksAccess' });

    // Her right in the other namespace given back: the next pass over it writes the copy.
    await role(other, CONFIGMAPS_WRITE);
    await waitFor(async () => ((await aliceMayCreate(other)) ? true : undefined), { what: 'the right to be back' });
    // Its watch of RBAC objects, and the denial's time (RD_AUTHOR_DENIAL_TTL, a second here).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await admin.labelNamespace(other, { 'author-targets.e2e/touched': 'yes' });
    await admin.waitForObject('ConfigMap', other, 'team-settings', (object) => object?.data?.mode === 'team');
    const after = await admin.waitForStatus(name, (status) => status.succeeded === 2);
    expect(condition(after, 'AuthorAccessDenied')?.failedNamespace).toEqual([fresh]);
    await admin.deleteDistribution(name);
  });
});
