// k8s-object-syncer's ObjectSync API, served by the same engine, with the whole product registered
// in the API server. The three examples of its README are applied as written there: a ConfigMap
// to every namespace, a Secret to every namespace under another name, a CronJob to two namespaces.
// Copies follow the source; deleting the source or the ObjectSync deletes them; the author must be
// allowed to read the source and write the copies.
import { AdmissionregistrationV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OBJECT_SYNC_FINALIZER, OBJECT_SYNC_GROUP, OBJECT_SYNC_PLURAL, OBJECT_SYNC_VERSION, type ObjectSync } from '../../src/domain/object-sync.js';
import { ANNOTATION_OBJECT_SYNC } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { Kube } from './fixtures/kube.js';
import { asUserWith, rejection } from './support/admission.js';
import { startRecordingWebhook, type RecordingWebhook } from './support/recording-webhook.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const core = kc.makeApiClient(CoreV1Api);
const batch = kc.makeApiClient(BatchV1Api);
const admission = kc.makeApiClient(AdmissionregistrationV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const metrics = createMetrics();
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const OS = { group: OBJECT_SYNC_GROUP, version: OBJECT_SYNC_VERSION, plural: OBJECT_SYNC_PLURAL };
let server: RunningServer;
let ownNamespace: string;

// The README's examples, unchanged.
const CONFIG_MAP_EXAMPLE = `
kind: ObjectSync
apiVersion: sync.rustrial.org/v1alpha1
metadata:
  name: my-test-config-map-distributor
  namespace: default
spec:
  source:
    group: ""
    kind: ConfigMap 
    name: my-test-config-map
  destinations:
  - namespace: "*"
`;
const SECRET_EXAMPLE = `
kind: ObjectSync
apiVersion: sync.rustrial.org/v1alpha1
metadata:
  name: my-test-secret-map-distributor
  namespace: default
spec:
  source:
    group: ""
    kind: Secret 
    name: image-pull-secrets
  destinations:
  - namespace: "*"
    name: global-image-pull-secrets
`;
const CRONJOB_EXAMPLE = `
kind: ObjectSync
apiVersion: sync.rustrial.org/v1alpha1
metadata:
  name: my-test-cronjob-map-distributor
  namespace: default
spec:
  source:
    group: "batch"
    kind: CronJob 
    name: my-audit-scanner
  destinations:
  - namespace: "kube-system"
  - namespace: "linkerd"
`;

async function apply(manifest: string): Promise<ObjectSync> {
  const body = parse(manifest) as ObjectSync;
  return (await custom.createNamespacedCustomObject({ ...OS, namespace: body.metadata.namespace, body })) as ObjectSync;
}

async function objectSync(name: string, namespace = 'default'): Promise<ObjectSync | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ ...OS, namespace, name })) as ObjectSync;
  } catch {
    return undefined;
  }
}

async function ready(name: string): Promise<ObjectSync> {
  return waitFor(
    async () => {
      const os = await objectSync(name);
      return os?.status?.conditions.find((c) => c.type === 'Ready')?.status === 'True' && os.status.observedGeneration === os.metadata.generation ? os : undefined;
    },
    { what: `ObjectSync ${name} Ready`, timeoutMs: 30_000 },
  );
}

/** Active namespaces the copies go to for "*": all but the system ones, the controller's (and the source's, for an unrenamed copy). */
async function everyNamespace(except: string[]): Promise<string[]> {
  const list = await core.listNamespace();
  return list.items
    .filter((ns) => ns.status?.phase === 'Active')
    .map((ns) => ns.metadata!.name!)
    .filter((name) => !['kube-system', 'kube-public', 'kube-node-lease', ownNamespace, ...except].includes(name))
    .sort();
}

async function copiesOf(kind: 'ConfigMap' | 'Secret', name: string): Promise<string[]> {
  const items = kind === 'ConfigMap' ? (await core.listConfigMapForAllNamespaces({ fieldSelector: `metadata.name=${name}` })).items : (await core.listSecretForAllNamespaces({ fieldSelector: `metadata.name=${name}` })).items;
  return items.filter((item) => item.metadata?.annotations?.[ANNOTATION_OBJECT_SYNC] !== undefined).map((item) => item.metadata!.namespace!).sort();
}

async function writes(): Promise<number> {
  const metric = await metrics.apiRequests.get();
  return metric.values.filter((v) => ['create', 'update', 'delete'].includes(String(v.labels.verb))).reduce((sum, v) => sum + v.value, 0);
}

/**
 * Writes stop: a 2-second window without any. The namespaces earlier files deleted may still be
 * terminating (this cluster is shared), and a copy created in one just before its termination
 * was seen is written again at the retry; a controller that kept writing never gets there.
 */
async function settles(): Promise<void> {
  await waitFor(
    async () => {
      const before = await writes();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      return (await writes()) === before ? true : undefined;
    },
    { what: 'a 2-second window without writes', timeoutMs: 30_000, intervalMs: 0 },
  );
}

beforeAll(async () => {
  for (let i = 0; i < 3; i++) await kube.createNamespace('os-target');
  // The controller's own namespace exists here, so that "*" is seen to leave it out.
  ownNamespace = (await kube.createNamespace('os-controller')).metadata!.name!;
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env: { RD_ALLOWED_KINDS: 'Secret,ConfigMap,CronJob.batch', RD_NAMESPACE: ownNamespace },
    overrides: { webhookNames: { distributions: uniqueName('e2e-os-distributions'), namespaces: uniqueName('e2e-os-namespaces') }, shutdownDelayMs: 0 },
  });
  // Registered and answering once an ObjectSync of a kind not allowed is denied.
  await waitFor(
    async () => {
      const probe = { apiVersion: 'sync.rustrial.org/v1alpha1', kind: 'ObjectSync', metadata: { name: uniqueName('probe') }, spec: { source: { group: 'apps', kind: 'Deployment', name: 'x' }, destinations: [{ namespace: '*' }] } };
      const answer = await rejection(custom.createNamespacedCustomObject({ ...OS, namespace: 'default', body: probe, dryRun: 'All' })).catch(() => undefined);
      return answer?.message.includes('spec.source.kind') ? true : undefined;
    },
    { what: 'the ObjectSync webhook of this server to be called' },
  );
}, 120_000);

afterAll(async () => {
  for (const name of ['my-test-config-map-distributor', 'my-test-secret-map-distributor', 'my-test-cronjob-map-distributor']) {
    await custom.deleteNamespacedCustomObject({ ...OS, namespace: 'default', name }).catch(() => undefined);
  }
  await waitFor(async () => ((await custom.listNamespacedCustomObject({ ...OS, namespace: 'default' })) as { items: unknown[] }).items.length === 0 ? true : undefined, {
    what: 'ObjectSyncs gone',
  }).catch(() => undefined);
  await server?.stop();
  await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'my-test-config-map' }).catch(() => undefined);
  await core.deleteNamespacedSecret({ namespace: 'default', name: 'image-pull-secrets' }).catch(() => undefined);
  await batch.deleteNamespacedCronJob({ namespace: 'default', name: 'my-audit-scanner' }).catch(() => undefined);
  await kube.cleanup();
});

describe("the README's examples", () => {
  it('syncs a ConfigMap to all namespaces, follows its changes, and settles at zero writes', async () => {
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'my-test-config-map' }, data: { someKey: 'someValue' } } });
    await apply(CONFIG_MAP_EXAMPLE);
    const os = await ready('my-test-config-map-distributor');
    const expected = await everyNamespace(['default']);
    expect(await copiesOf('ConfigMap', 'my-test-config-map')).toEqual(expected);
    expect(os.metadata.finalizers).toContain(OBJECT_SYNC_FINALIZER);
    expect(os.status).toMatchObject({ desired: expected.length, succeeded: expected.length, failed: 0 });

    await settles();

    const changedAt = Date.now();
    await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'my-test-config-map', body: { metadata: { name: 'my-test-config-map' }, data: { someKey: 'otherValue' } } });
    await waitFor(
      async () => {
        const copy = await core.readNamespacedConfigMap({ namespace: expected[0]!, name: 'my-test-config-map' });
        return copy.data?.someKey === 'otherValue' ? true : undefined;
      },
      { what: 'the copy to follow the source', intervalMs: 20 },
    );
    console.log(`ObjectSync: a copy followed its source ${Date.now() - changedAt} ms after the change`);
  });

  it('gives a namespace created later its copy', async () => {
    const ns = (await kube.createNamespace('os-late')).metadata!.name!;
    await waitFor(async () => ((await copiesOf('ConfigMap', 'my-test-config-map')).includes(ns) ? true : undefined), { what: 'a copy in the new namespace' });
  });

  it('syncs a Secret to all namespaces under another name (the source namespace too)', async () => {
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 'image-pull-secrets' }, type: 'Opaque', data: { token: Buffer.from('t').toString('base64') } } });
    await apply(SECRET_EXAMPLE);
    await ready('my-test-secret-map-distributor');
    expect(await copiesOf('Secret', 'global-image-pull-secrets')).toEqual(await everyNamespace([]));
  });

  it('syncs a CronJob to the two namespaces it names, kube-system included', async () => {
    await kube.createNamed('linkerd').catch(() => undefined);
    await batch.createNamespacedCronJob({
      namespace: 'default',
      body: {
        metadata: { name: 'my-audit-scanner' },
        spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'scan', image: 'busybox', command: ['true'] }] } } } } },
      },
    });
    await apply(CRONJOB_EXAMPLE);
    await ready('my-test-cronjob-map-distributor');
    for (const namespace of ['kube-system', 'linkerd']) {
      const copy = await batch.readNamespacedCronJob({ namespace, name: 'my-audit-scanner' });
      expect(copy.spec?.schedule).toBe('0 3 * * *');
      expect(copy.metadata?.annotations?.[ANNOTATION_OBJECT_SYNC]).toBe('default/my-test-cronjob-map-distributor');
    }
    // The API server defaults many CronJob fields; the copies still settle at zero writes.
    await settles();
  });
});

describe('deleting', () => {
  it('the source deletes its copies, and the ObjectSync says so', async () => {
    await core.deleteNamespacedSecret({ namespace: 'default', name: 'image-pull-secrets' });
    await waitFor(async () => ((await copiesOf('Secret', 'global-image-pull-secrets')).length === 0 ? true : undefined), { what: 'the copies to go' });
    const os = await waitFor(
      async () => {
        const found = await objectSync('my-test-secret-map-distributor');
        return found?.status?.conditions.find((c) => c.type === 'SourceNotFound')?.status === 'True' ? found : undefined;
      },
      { what: 'SourceNotFound' },
    );
    expect(os.status?.conditions.find((c) => c.type === 'Ready')?.status).toBe('False');
    // Said once as a Warning Event about the ObjectSync, in its namespace.
    const events = await waitFor(async () => {
      const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=my-test-secret-map-distributor' });
      const found = list.items.filter((e) => e.reason === 'SourceNotFound');
      return found.length > 0 ? found : undefined;
    }, { what: 'a SourceNotFound Event' });
    expect(events.map((e) => [e.type, e.involvedObject.kind, e.message])).toEqual([
      ['Warning', 'ObjectSync', 'source Secret default/image-pull-secrets not found: its copies are deleted'],
    ]);
  });

  it('the ObjectSync deletes its copies, then it is gone', async () => {
    await custom.deleteNamespacedCustomObject({ ...OS, namespace: 'default', name: 'my-test-config-map-distributor' });
    await waitFor(async () => ((await objectSync('my-test-config-map-distributor')) === undefined ? true : undefined), { what: 'the ObjectSync to go' });
    expect(await copiesOf('ConfigMap', 'my-test-config-map')).toEqual([]);
  });
});

describe('changing destinations', () => {
  let webhook: RecordingWebhook | undefined;
  let webhookConfig: string | undefined;
  afterAll(async () => {
    if (webhookConfig !== undefined) await admission.deleteValidatingWebhookConfiguration({ name: webhookConfig }).catch(() => undefined);
    await webhook?.close();
  });

  it('folds the status of every destination name as their passes found it, though a slow webhook lets a later write land first', async () => {
    const [a, b] = [(await kube.createNamespace('os-dest')).metadata!.name!, (await kube.createNamespace('os-dest')).metadata!.name!];
    const source = uniqueName('dest-settings');
    const renamed = `${source}-x`;
    const name = uniqueName('dest');
    // A webhook on this ObjectSync's status holds a write that comes alone for 500 ms and answers
    // those that come meanwhile at once: of two writes sent together, the second lands first.
    webhook = await startRecordingWebhook({ holdMs: (othersHeld) => (othersHeld === 0 ? 500 : 0) });
    webhookConfig = uniqueName('e2e-os-slow-status');
    await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: webhookConfig },
        webhooks: [
          {
            name: 'slow-status.e2e.resource-distributor.io',
            clientConfig: { url: `${webhook.url}/validate`, caBundle: Buffer.from(webhook.caCert).toString('base64') },
            rules: [{ apiGroups: [OBJECT_SYNC_GROUP], apiVersions: ['*'], operations: ['UPDATE'], resources: [`${OBJECT_SYNC_PLURAL}/status`], scope: 'Namespaced' }],
            objectSelector: { matchLabels: { 'e2e.resource-distributor.io/slow-status': name } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            failurePolicy: 'Fail',
            timeoutSeconds: 5,
          },
        ],
      },
    });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: source }, data: { k: 'v' } } });
    const body = {
      apiVersion: 'sync.rustrial.org/v1alpha1',
      kind: 'ObjectSync',
      metadata: { name, namespace: 'default', labels: { 'e2e.resource-distributor.io/slow-status': name } },
      spec: { source: { group: '', kind: 'ConfigMap', name: source }, destinations: [{ namespace: a }] },
    };
    await custom.createNamespacedCustomObject({ ...OS, namespace: 'default', body });
    // A new configuration takes a moment to be used: the ObjectSync's own status writes show it.
    await waitFor(
      async () => {
        if (webhook!.calls.some((call) => call.name === name)) return true;
        await custom.patchNamespacedCustomObjectStatus({ ...OS, namespace: 'default', name, body: { metadata: { annotations: { marker: uniqueName('m') } } } }, mergePatch);
        return undefined;
      },
      { what: 'the API server to call the slow webhook', timeoutMs: 30_000, intervalMs: 500 },
    );

    // After each change both names' passes end together, each writing the fold of both: 1 + 1 copies, then 2 + 2, and back.
    const narrow = [{ namespace: a }, { namespace: b, name: renamed }];
    const wide = [{ namespace: a }, { namespace: b }, { namespace: a, name: renamed }, { namespace: b, name: renamed }];
    const callsBefore = webhook.calls.length;
    for (const destinations of [narrow, wide, narrow, wide]) {
      const patched = (await custom.patchNamespacedCustomObject({ ...OS, namespace: 'default', name, body: { spec: { destinations } } }, mergePatch)) as ObjectSync;
      await waitFor(
        async () => {
          const found = await objectSync(name);
          return found?.status?.observedGeneration === patched.metadata.generation && found?.status?.succeeded === destinations.length ? true : undefined;
        },
        { what: `ObjectSync ${name} to report ${destinations.length} copies in sync`, timeoutMs: 10_000, intervalMs: 50 },
      );
      // A staler write landing last would undo it: read again once every held write is in.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const os = (await objectSync(name))!;
      expect(os.status).toMatchObject({ observedGeneration: patched.metadata.generation, desired: destinations.length, succeeded: destinations.length, failed: 0 });
      expect(os.status?.conditions.find((c) => c.type === 'InSync')?.status).toBe('True');
      expect([...(await copiesOf('ConfigMap', source)), ...(await copiesOf('ConfigMap', renamed))].length).toBe(destinations.length);
    }
    // Every change was written through the slow webhook.
    expect(webhook.calls.slice(callsBefore).filter((call) => call.name === name).length).toBeGreaterThanOrEqual(4);

    await custom.deleteNamespacedCustomObject({ ...OS, namespace: 'default', name });
    await waitFor(async () => ((await objectSync(name)) === undefined ? true : undefined), { what: 'the ObjectSync to go' });
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: source });
  });
});

describe('switching from k8s-object-syncer', () => {
  it('takes over the copies it made (same uid) and its finalizer, with nothing changed but the controller', async () => {
    const team = (await kube.createNamespace('os-switch')).metadata!.name!;
    const source = uniqueName('switch-settings');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: source }, data: { k: 'v2' } } });
    // What k8s-object-syncer left: its copy (older content) and an ObjectSync holding its finalizer.
    const old = await core.createNamespacedConfigMap({
      namespace: team,
      body: {
        metadata: { name: source, labels: { 'app.kubernetes.io/managed-by': 'rustrial-object-syncer' }, annotations: { 'sync.rustrial.org/source-object': `default/${source}` } },
        data: { k: 'v1' },
      },
    });
    const name = uniqueName('switch');
    const body = {
      apiVersion: 'sync.rustrial.org/v1alpha1',
      kind: 'ObjectSync',
      metadata: { name, namespace: 'default', finalizers: ['sync.rustrial.org/rustrial-object-syncer'] },
      spec: { source: { group: '', kind: 'ConfigMap', name: source }, destinations: [{ namespace: team, strategy: 'replace' }] },
    };
    await custom.createNamespacedCustomObject({ ...OS, namespace: 'default', body });
    const os = await ready(name);
    expect(os.metadata.finalizers).toEqual([OBJECT_SYNC_FINALIZER]);
    const copy = await core.readNamespacedConfigMap({ namespace: team, name: source });
    expect(copy.metadata?.uid).toBe(old.metadata?.uid);
    expect(copy.data).toEqual({ k: 'v2' });
    expect(copy.metadata?.annotations?.[ANNOTATION_OBJECT_SYNC]).toBe(`default/${name}`);

    await custom.deleteNamespacedCustomObject({ ...OS, namespace: 'default', name });
    await waitFor(async () => ((await objectSync(name)) === undefined ? true : undefined), { what: 'the ObjectSync to go' });
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: source });
  });
});

describe('admission of an ObjectSync', () => {
  it('denies an author who may not read the source, naming it', async () => {
    const rules = [
      { apiGroups: [OBJECT_SYNC_GROUP], resources: [OBJECT_SYNC_PLURAL], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update'] },
    ];
    await asUserWith(kc, 'olga', rules, async (user, as) => {
      const body = parse(CONFIG_MAP_EXAMPLE) as ObjectSync;
      body.metadata.name = uniqueName('olga-sync');
      const { code, message } = await rejection(as.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({ ...OS, namespace: 'default', body, dryRun: 'All' }));
      expect(code).toBe(403);
      expect(message).toContain(`spec.source: user "${user}" may not get configmaps "my-test-config-map" in namespace "default"`);
    });
  });

  it('denies what is malformed, one line per field', async () => {
    const body = { apiVersion: 'sync.rustrial.org/v1alpha1', kind: 'ObjectSync', metadata: { name: uniqueName('bad') }, spec: { source: { group: '', kind: 'ConfigMap', name: 'Not_A_Name' }, destinations: [] } };
    const { code, message } = await rejection(custom.createNamespacedCustomObject({ ...OS, namespace: 'default', body, dryRun: 'All' }));
    expect(code).toBe(422);
    expect(message).toContain('spec.source.name: "Not_A_Name" is not a valid name');
    expect(message).toContain('spec.destinations: must list at least one destination');
  });
});
