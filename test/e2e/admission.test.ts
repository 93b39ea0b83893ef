// The admission webhooks as the API server calls them: the whole product in local mode (webhooks
// registered by URL) against the shared control plane.
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { performance } from 'node:perf_hooks';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION } from '../../src/domain/types.js';
import { describeApiError } from '../../src/k8s/errors.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { createController, type Controller, type ControllerDeps, type RunningController } from '../../src/reconcile/controller.js';
import { certificateInfo } from '../../src/tls/certificates.js';
import { configMap, distribution, fetchWithCa, impersonating, included, presentedCertificate, rejection, secret } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { run } from './support/tools.js';
import { connectionOf } from '../kube-client.js';

const SECOND = 1000;
const DAY = 86_400_000;

const kc = loadKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const webhooks = kc.makeApiClient(AdmissionregistrationV1Api);
const metrics = createMetrics();
const webhookNames = { distributions: uniqueName('e2e-admission-distributions'), namespaces: uniqueName('e2e-admission-namespaces') };
const admitted: string[] = [];
const created = { distributions: [] as string[], namespaces: [] as string[], clusterRoleBindings: [] as string[] };
let server: RunningServer;
let controller: RunningController;

/** The real controller, recording which namespaces the webhook handed to it. */
function recordingController(deps: ControllerDeps): Controller {
  controller = createController(deps);
  return {
    start: () => controller.start(),
    stop: () => controller.stop(),
    synced: () => controller.synced(),
    isLeader: () => controller.isLeader(),
    namespaceExists: (name) => controller.namespaceExists(name),
    previewPlan: (rd) => controller.previewPlan(rd),
    namespaceAdmitted: (ns) => {
      admitted.push(ns.name);
      controller.namespaceAdmitted(ns);
    },
    podAdmitted: (namespace, refs, options) => controller.podAdmitted(namespace, refs, options),
    podInjection: (namespace, pod) => controller.podInjection(namespace, pod),
  };
}

async function createDistribution(body: object, client: CustomObjectsApi = custom, dryRun?: 'All'): Promise<unknown> {
  const result: unknown = await client.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body, ...(dryRun ? { dryRun } : {}) });
  const name = (body as { metadata: { name: string } }).metadata.name;
  if (!dryRun) created.distributions.push(name);
  return result;
}

async function createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  await core.createNamespace({ body: { metadata: { name, labels } } });
  created.namespaces.push(name);
}

async function caBundle(): Promise<string> {
  const config = await webhooks.readValidatingWebhookConfiguration({ name: webhookNames.distributions });
  return Buffer.from(config.webhooks?.[0]?.clientConfig.caBundle ?? '', 'base64').toString('utf8');
}

async function namespaceReviews(): Promise<number> {
  const metric = await metrics.admissionRequests.get();
  return metric.values.filter((v) => v.labels.webhook === 'namespaces').reduce((sum, v) => sum + v.value, 0);
}

const invalid = (name: string): object =>
  distribution(name, { ...configMap('settings'), kind: 'Pod' }, { includedNamespaces: { list: [{ name: 'a' }] }, excludedNamespaces: { list: [{ name: 'a' }] } });

beforeAll(async () => {
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    createController: recordingController,
    overrides: {
      webhookNames,
      sarCacheTtlMs: 2 * SECOND,
      shutdownDelayMs: SECOND,
      // A serving certificate that lives 30 s and is renewed after 10 s: rotation happens
      // several times while this file runs, checked every second.
      tls: { caValidityMs: 365 * DAY, caRenewBeforeMs: 100 * DAY, certValidityMs: 30 * SECOND, certRenewBeforeMs: 20 * SECOND, checkIntervalMs: SECOND },
    },
  });
  // A new webhook configuration takes effect after a moment: wait until both are called.
  await waitFor(
    async () => {
      const denied = await rejection(createDistribution(invalid(uniqueName('marker')), custom, 'All')).catch(() => undefined);
      return denied?.message.includes('denied the request') ? true : undefined;
    },
    { what: 'the distribution webhook to be called', timeoutMs: 30 * SECOND },
  );
  await waitFor(
    async () => {
      const before = await namespaceReviews();
      await core.createNamespace({ body: { metadata: { name: uniqueName('marker') } }, dryRun: 'All' });
      return (await namespaceReviews()) > before ? true : undefined;
    },
    { what: 'the namespace webhook to be called', timeoutMs: 30 * SECOND },
  );
});

afterAll(async () => {
  await server?.stop();
  for (const name of created.distributions) {
    await custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }).catch(() => undefined);
  }
  for (const name of created.clusterRoleBindings) await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: 'e2e-admission-distribution-author' }).catch(() => undefined);
  for (const name of created.namespaces) await core.deleteNamespace({ name }).catch(() => undefined);
});

/**
 * Creates a distribution from JSON text, as kubectl sends a file: a template nested thousands deep
 * cannot be built as an object and serialised (that recursion overflows the stack).
 */
async function createFromText(text: string): Promise<{ status: number; message: string }> {
  const apiServer = new URL(kc.getCurrentCluster()!.server);
  const options: RequestOptions = { method: 'POST', hostname: apiServer.hostname, port: apiServer.port, path: `/apis/${GROUP}/${VERSION}/${PLURAL}`, headers: { 'Content-Type': 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(options, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, message: (JSON.parse(body) as { message?: string }).message ?? '' }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

describe('distribution admission', () => {
  it.each([5_000, 9_000])('denies a template nested %i levels deep, naming the field and the limit', async (levels) => {
    const name = uniqueName('deep');
    const template = { ...(configMap('deep-settings') as { metadata: object }), metadata: { name: 'deep-settings', managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: 'DEEP' }] } };
    const nested = `${'{"f:a":'.repeat(levels)}{}${'}'.repeat(levels)}`;
    const text = JSON.stringify(distribution(name, template, included('default'))).replace('"DEEP"', nested);
    const started = performance.now();
    const { status, message } = await createFromText(text);
    // Before, 5,000 levels were admitted (then failed every reconcile) and 9,000 answered a 500.
    expect({ status, message }).toEqual({
      status: 422,
      message: expect.stringContaining('spec.resource: nested deeper than 64 levels: a Kubernetes object needs far fewer') as string,
    });
    expect(performance.now() - started).toBeLessThan(5 * SECOND);
  });


  it('rejects an invalid distribution, and the client reads every problem', async () => {
    const { code, message } = await rejection(createDistribution(invalid(uniqueName('invalid'))));
    expect(code).toBe(422);
    expect(message).toContain('admission webhook "resourcedistributions.resource-distributor.io" denied the request');
    expect(message).toContain('spec.resource.kind: "Pod" is not supported: use Secret or ConfigMap');
    expect(message).toContain('"a" is both included and excluded');
  });

  it('denies copyMetadata rules that are not keys or key globs, naming the field', async () => {
    const body = { ...(distribution(uniqueName('rules'), configMap('rules-settings'), included('default')) as { spec: object }) };
    body.spec = { ...body.spec, copyMetadata: { labels: { include: ['team', 'not a key'] } } };
    const { code, message } = await rejection(createDistribution(body));
    expect(code).toBe(422);
    expect(message).toContain('spec.copyMetadata.labels.include[1]: "not a key" is not a label or annotation key, or a glob of one');
  });

  it('denies a namespace name pattern that is not one, naming the field', async () => {
    const body = distribution(uniqueName('pattern'), configMap('pattern-settings'), { includedNamespaces: { list: [{ pattern: 'Team_*' }] } });
    const { code, message } = await rejection(createDistribution(body));
    expect(code).toBe(422);
    expect(message).toContain('spec.targets.includedNamespaces.list[0].pattern: "Team_*" is not a namespace name pattern');
  });

  it('stores a valid distribution', async () => {
    const name = uniqueName('valid');
    await createDistribution(distribution(name, configMap('valid-settings'), included('default')));
    const stored = (await custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })) as { spec: { resource: { kind: string } } };
    expect(stored.spec.resource.kind).toBe('ConfigMap');
  });
});

describe('plan preview', () => {
  /** `kubectl apply` of a distribution of settings into `namespaces`; its warnings (what the plan said). */
  async function apply(name: string, namespaces: string[], data: Record<string, string>, dryRun: boolean): Promise<string[]> {
    const body = distribution(name, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plan-settings' }, data }, included(...namespaces));
    const { stderr } = await run('kubectl', ['apply', ...(dryRun ? ['--dry-run=server'] : []), '-f', '-'], { input: JSON.stringify(body) });
    return stderr.split('\n').filter((line) => line.startsWith('Warning: plan: ')).map((line) => line.slice('Warning: '.length));
  }
  const copiesIn = async (namespaces: string[]): Promise<(Record<string, string> | undefined)[]> =>
    Promise.all(namespaces.map(async (namespace) => (await core.readNamespacedConfigMap({ namespace, name: 'plan-settings' }).catch(() => undefined))?.data));

  it('kubectl apply --dry-run=server prints what the distribution will do, and the reconciler then does that', async () => {
    const namespaces: string[] = [];
    for (let i = 0; i < 3; i++) {
      const namespace = uniqueName('e2e-plan');
      await createNamespace(namespace);
      namespaces.push(namespace);
    }
    namespaces.sort();
    const name = uniqueName('plan');
    created.distributions.push(name);

    // The namespaces just created reach the controller's cache through its watch: ask until they have.
    const first = await waitFor(async () => {
      const lines = await apply(name, namespaces, { a: '1' }, true);
      return lines.some((line) => line.includes('do not exist yet')) ? undefined : lines;
    }, { what: 'a plan that knows the new namespaces' });
    // The default policy: nothing more is said than what holds for every distribution.
    expect(first).toEqual([`plan: 3 copies to create: ${namespaces.join(', ')}`]);
    expect(await copiesIn(namespaces)).toEqual([undefined, undefined, undefined]);
    await apply(name, namespaces, { a: '1' }, false);
    await waitFor(async () => ((await copiesIn(namespaces)).every((data) => data?.a === '1') ? true : undefined), { what: 'the three copies' });

    const [kept, ...dropped] = namespaces as [string, ...string[]];
    expect(await apply(name, [kept], { a: '2' }, true)).toEqual([`plan: 1 copy to update: ${kept}`, `plan: 2 copies to delete (no longer targeted): ${dropped.join(', ')}`]);
    await apply(name, [kept], { a: '2' }, false);
    await waitFor(async () => {
      const [first, ...rest] = await copiesIn(namespaces);
      return first?.a === '2' && rest.every((data) => data === undefined) ? true : undefined;
    }, { what: 'one copy updated, two deleted' });
  });
});

describe('namespace admission', () => {
  it('writes every copy into a new matching namespace at once', async () => {
    const label = uniqueName('team');
    const selector = { namespaceLabelSelector: { matchLabels: { 'e2e-admission/team': label } } };
    const names = { secret: uniqueName('gen-secret'), configMap: uniqueName('gen-config') };
    await createDistribution(distribution(names.secret, secret('registry-token'), selector));
    await createDistribution(distribution(names.configMap, configMap('team-settings'), selector));
    // Both distributions must be in the controller's cache before the namespace appears.
    await waitFor(() => Promise.resolve(Object.values(names).every((n) => controller.caches.distributions.keys().includes(n)) ? true : undefined), {
      what: 'the distributions in the cache',
    });

    const ns = uniqueName('generated');
    const started = performance.now();
    await createNamespace(ns, { 'e2e-admission/team': label });
    await waitFor(
      async () => {
        const [s, c] = await Promise.all([
          core.readNamespacedSecret({ name: 'registry-token', namespace: ns }).catch(() => undefined),
          core.readNamespacedConfigMap({ name: 'team-settings', namespace: ns }).catch(() => undefined),
        ]);
        return s && c ? true : undefined;
      },
      { what: 'both copies in the new namespace', intervalMs: 10, timeoutMs: 30 * SECOND },
    );
    const elapsedMs = performance.now() - started;
    console.log(`namespace create -> all copies present: ${elapsedMs.toFixed(0)} ms`);
    expect(admitted).toContain(ns);
  });

  it('does nothing for a dry-run namespace creation', async () => {
    const ns = uniqueName('dry-run');
    const before = await namespaceReviews();
    await core.createNamespace({ body: { metadata: { name: ns } }, dryRun: 'All' });
    expect(await namespaceReviews()).toBeGreaterThan(before);
    expect(admitted).not.toContain(ns);
    const exists = await core.readNamespace({ name: ns }).then(
      () => true,
      () => false,
    );
    expect(exists).toBe(false);
  });
});

describe('authorization of the author', () => {
  it('denies a user who may not write Secrets in a target namespace, allows one who may, and checks the new targets of an update', async () => {
    const user = uniqueName('alice');
    const [allowedNs, forbiddenNs] = [uniqueName('alice-ok'), uniqueName('alice-no')];
    await createNamespace(allowedNs);
    await createNamespace(forbiddenNs);

    // Alice may create distributions at all (RBAC, before admission) ...
    await rbac
      .createClusterRole({
        body: {
          metadata: { name: 'e2e-admission-distribution-author' },
          rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['create', 'get', 'update'] }],
        },
      })
      .catch((error: unknown) => {
        if (describeApiError(error).code !== 409) throw error;
      });
    const binding = uniqueName('e2e-admission-author');
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: binding },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-admission-distribution-author' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });
    created.clusterRoleBindings.push(binding);
    // ... and may write Secrets in one namespace only.
    await rbac.createNamespacedRole({
      namespace: allowedNs,
      body: { metadata: { name: 'secret-writer' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['create', 'update'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: allowedNs,
      body: {
        metadata: { name: 'alice-secret-writer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-writer' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    });

    const asAlice = impersonating(kc, user).makeApiClient(CustomObjectsApi);
    const both = distribution(uniqueName('alice-both'), secret('alice-token'), included(allowedNs, forbiddenNs));
    const { code, message } = await rejection(createDistribution(both, asAlice));
    expect(code).toBe(403);
    expect(message).toContain(`spec.targets: user "${user}" may not create, update secrets in namespace "${forbiddenNs}"`);
    expect(message).not.toContain(`namespace "${allowedNs}"`);

    const everywhere = distribution(uniqueName('alice-all'), secret('alice-token'), { allNamespaces: true });
    expect((await rejection(createDistribution(everywhere, asAlice))).message).toContain('in every namespace');

    // RBAC changes reach the authorizer's cache within a moment: retry until allowed.
    const mineName = uniqueName('alice-mine');
    const mine = distribution(mineName, secret('alice-token'), included(allowedNs));
    await waitFor(() => createDistribution(mine, asAlice).then(() => true), { what: 'the distribution of an authorized user', timeoutMs: 20 * SECOND });

    // An update is checked against its new targets. Read once the controller has written the
    // status, so that the replace carries the current resourceVersion.
    type Stored = { spec: { targets: object }; status?: { observedGeneration?: number; succeeded?: number } };
    const read = async (): Promise<Stored> => (await asAlice.getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: mineName })) as Stored;
    await waitFor(async () => ((await read()).status?.succeeded === 1 ? true : undefined), { what: 'the status of the new distribution', timeoutMs: 20 * SECOND });
    const stored = await read();
    stored.spec.targets = included(allowedNs, forbiddenNs);
    const widened = await rejection(asAlice.replaceClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: mineName, body: stored }));
    expect(widened.code).toBe(403);
    expect(widened.message).toContain(`may not create, update secrets in namespace "${forbiddenNs}"`);
  });
});

describe('certificate rotation', () => {
  it('serves a new certificate without a restart, and admission keeps working', async () => {
    const trust = await caBundle();
    const first = await presentedCertificate(server.port, trust);
    const firstInfo = certificateInfo(server.certificates.current()!.serving.cert);
    expect(firstInfo.fingerprint).toBe(first);

    const second = await waitFor(
      async () => {
        const now = await presentedCertificate(server.port, trust);
        return now !== first ? now : undefined;
      },
      { what: 'a rotated serving certificate', timeoutMs: 60 * SECOND, intervalMs: 500 },
    );
    expect(certificateInfo(server.certificates.current()!.serving.cert).fingerprint).toBe(second);

    // The API server still reaches us (over new connections too) and gets our answers.
    const { message } = await rejection(createDistribution(invalid(uniqueName('after-rotation'))));
    expect(message).toContain('denied the request');
    const valid = uniqueName('after-rotation-valid');
    await createDistribution(distribution(valid, configMap('rotated'), included('default')));
  });
});

describe('shutdown', () => {
  it('fails readiness first, then stops serving and removes its webhooks', async () => {
    const trust = await caBundle();
    const readyz = async (): Promise<number> => {
      const res = await fetchWithCa(`https://127.0.0.1:${server.port}/readyz`, trust);
      return res.status;
    };
    expect(await readyz()).toBe(200);
    const stopping = server.stop();
    expect(await readyz()).toBe(503);
    await stopping;
    await expect(readyz()).rejects.toThrow();
    const gone = await webhooks.readValidatingWebhookConfiguration({ name: webhookNames.distributions }).then(
      () => false,
      (error: unknown) => describeApiError(error).code === 404,
    );
    expect(gone).toBe(true);
  });
});
