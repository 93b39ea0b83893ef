import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  NetworkingV1Api,
  RbacAuthorizationV1Api,
  VersionApi,
  type KubeConfig,
  type V1NetworkPolicy,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { describeApiError, isNotFound } from '../../src/k8s/errors.js';
import { POLICIES_DIR, readManifests, REPO_ROOT } from '../control-plane/index.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { startRecordingWebhook, type RecordingWebhook } from './support/recording-webhook.js';

// Proves the control plane is a real one: CRD schema validation, garbage collection, namespace
// deletion and webhook calls all come from the actual Kubernetes servers.

const RD = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'resourcedistributions' };

let kc: KubeConfig;
let core: CoreV1Api;
let custom: CustomObjectsApi;
const namespaces: string[] = [];

async function createNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await core.createNamespace({ body: { metadata: { name } } });
  namespaces.push(name);
  return name;
}

async function gone(read: () => Promise<unknown>): Promise<true | undefined> {
  try {
    await read();
    return undefined;
  } catch (error) {
    if (isNotFound(error)) return true;
    throw error;
  }
}

function configMap(namespace: string, name: string, extra: Partial<V1ConfigMap['metadata']> = {}): V1ConfigMap {
  return { metadata: { name, namespace, ...extra }, data: { key: 'value' } };
}

beforeAll(() => {
  kc = loadKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
});

afterAll(async () => {
  await Promise.allSettled(namespaces.map((name) => core.deleteNamespace({ name })));
});

describe('the ResourceDistribution CRD', () => {
  it('stores a policy from policies/ and reads it back unchanged', async () => {
    const [policy] = await readManifests(join(POLICIES_DIR, 'game-demo.yaml'));
    expect(policy?.metadata?.name).toBe('sample');
    const name = uniqueName('smoke-sample');
    const body = { ...policy, metadata: { name } } as { spec?: unknown };

    await custom.createClusterCustomObject({ ...RD, body });
    try {
      const stored = (await custom.getClusterCustomObject({ ...RD, name })) as { spec?: unknown; metadata?: { uid?: string } };
      expect(stored.metadata?.uid).toBeTruthy();
      // Nothing pruned: every field of the example is in the schema.
      expect(stored.spec).toEqual(body.spec);
    } finally {
      await custom.deleteClusterCustomObject({ ...RD, name });
    }
  });

  it('rejects an unknown writePolicy with the API server message', async () => {
    const body = {
      apiVersion: `${RD.group}/${RD.version}`,
      kind: 'ResourceDistribution',
      metadata: { name: uniqueName('smoke-bad') },
      spec: {
        resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { a: 'b' } },
        targets: {},
        writePolicy: 'sometimes',
      },
    };
    const error = await custom.createClusterCustomObject({ ...RD, body }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const info = describeApiError(error);
    expect(info.code).toBe(422);
    expect(info.reason).toBe('Invalid');
    expect(info.message).toContain('spec.writePolicy: Unsupported value: "sometimes"');
  });
});

describe('webhook-config network policy', () => {
  it('is a NetworkPolicy the API server accepts, as in the base and as the network-policy component narrows it', async () => {
    const ns = await createNamespace('e2e-netpol');
    const [base] = (await readManifests(join(REPO_ROOT, 'webhook-config', 'network-policy.yaml'))) as V1NetworkPolicy[];
    type Ingress = NonNullable<V1NetworkPolicy['spec']>['ingress'];
    const [replace] = parse(await readFile(join(REPO_ROOT, 'webhook-config', 'network-policy', 'restrict-sources.yaml'), 'utf8')) as { value: Ingress }[];
    const narrowed = { ...base!, spec: { ...base!.spec!, ingress: replace!.value } };
    for (const [policy, rules] of [[base!, 1], [narrowed, 2]] as const) {
      const body = { ...policy, metadata: { ...policy.metadata, namespace: ns } };
      const created = await kc.makeApiClient(NetworkingV1Api).createNamespacedNetworkPolicy({ namespace: ns, body, dryRun: 'All' });
      expect(created.spec?.ingress).toHaveLength(rules);
    }
  });
});

describe('the servers as kubectl sees them', () => {
  it('report a Kubernetes version clients can parse, and the built-in roles hold their rules (aggregated)', async () => {
    const version = await kc.makeApiClient(VersionApi).getCode();
    // The version the run asked for (npm run test:k8s-versions selects another wrapper module).
    expect(version.gitVersion).toBe(inject('kubernetesVersion'));
    expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(version.major).toBe('1');
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const edit = await waitFor(async () => {
      const role = await rbac.readClusterRole({ name: 'edit' });
      return (role.rules ?? []).length > 0 ? role : undefined;
    }, { what: 'the edit ClusterRole to be aggregated', timeoutMs: 30_000 });
    expect(edit.rules?.some((rule) => rule.resources?.includes('configmaps') && rule.verbs.includes('create'))).toBe(true);
  });
});

describe('kube-controller-manager', () => {
  it('garbage-collects a dependent once its owner is deleted', async () => {
    const ns = await createNamespace('smoke-gc');
    const owner = await core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'owner') });
    const ownerReferences = [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid!, blockOwnerDeletion: true }];
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'dependent', { ownerReferences }) });

    await core.deleteNamespacedConfigMap({ namespace: ns, name: 'owner' });

    await waitFor(() => gone(() => core.readNamespacedConfigMap({ namespace: ns, name: 'dependent' })), {
      timeoutMs: 60_000,
      what: 'the garbage collector to delete the dependent',
    });
  });

  it('finishes deleting a namespace that has content', async () => {
    const ns = await createNamespace('smoke-ns');
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'content') });

    await core.deleteNamespace({ name: ns });

    // Behind the namespaces earlier files removed (500 at once in one of them).
    await waitFor(() => gone(() => core.readNamespace({ name: ns })), {
      timeoutMs: 180_000,
      what: `namespace ${ns} to be deleted`,
    });
  }, 200_000);
});

describe('admission webhooks', () => {
  let webhook: RecordingWebhook;
  let configName: string;
  let admission: AdmissionregistrationV1Api;

  beforeAll(async () => {
    admission = kc.makeApiClient(AdmissionregistrationV1Api);
    webhook = await startRecordingWebhook();
  });

  afterAll(async () => {
    // A leftover configuration would call a closed port during the next test files.
    if (configName) await admission.deleteValidatingWebhookConfiguration({ name: configName }).catch(() => undefined);
    await webhook.close();
  });

  it('calls a webhook registered by URL on 127.0.0.1 with a caBundle', async () => {
    const ns = await createNamespace('smoke-webhook');
    configName = uniqueName('smoke-webhook');
    await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: configName },
        webhooks: [
          {
            name: 'smoke.resource-distributor.io',
            clientConfig: { url: `${webhook.url}/validate`, caBundle: Buffer.from(webhook.caCert).toString('base64') },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'], scope: 'Namespaced' }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            failurePolicy: 'Ignore',
            timeoutSeconds: 5,
          },
        ],
      },
    });

    // A new configuration takes a moment to be used: send markers until one is seen.
    await waitFor(
      async () => {
        const marker = uniqueName('marker');
        await core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, marker) });
        return webhook.calls.some((call) => call.name === marker) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: 'the API server to call the webhook' },
    );

    await core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'observed') });
    expect(webhook.calls).toContainEqual({ operation: 'CREATE', namespace: ns, name: 'observed', user: 'admin' });
  });
});
