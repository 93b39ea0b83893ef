// No Secret value anywhere: the whole product (admission and controller, logging at trace level)
// distributes Secrets whose data carries a marker, through every path that reports something —
// copies written, drift repaired, a conflict (Event), a type change (recreate), a missing namespace,
// an invalid distribution and an unauthorized author (denials), a registry Secret injected into a
// pod (pod mutation) — and the marker, plain or base64,
// never appears in a log line, an Event, a status, an error answer or /metrics.
import { CoreV1Api, CustomObjectsApi, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL, VERSION } from '../../src/domain/types.js';
import type { RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { distributionOf, Kube } from './fixtures/kube.js';
import { startTracedServer } from './fixtures/traced-server.js';
import { impersonating, rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const MARKER = 'leak-marker-7f3c9e1d';
const FORMS = [MARKER, Buffer.from(MARKER).toString('base64'), Buffer.from(`x${MARKER}`).toString('base64'), Buffer.from(`xx${MARKER}`).toString('base64')];
const b64 = (text: string): string => Buffer.from(text).toString('base64');

const kc = loadKubeConfig();
const kube = new Kube(kc);
const custom = kc.makeApiClient(CustomObjectsApi);
const metrics = createMetrics();
const logs: string[] = [];
const answers: string[] = [];
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const cleanups: (() => Promise<unknown>)[] = [];
let server: RunningServer;

function secret(data: Record<string, string>, type = 'Opaque'): { apiVersion: string; kind: string; metadata: { name: string }; type: string; data: Record<string, string> } {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'marked' }, type, data };
}

function leaks(text: string): string[] {
  // The forms a value can take: plain, and base64 at each of the three alignments.
  return FORMS.map((form) => form.slice(2, -2)).filter((form) => text.includes(form));
}

beforeAll(async () => {
  server = await startTracedServer(kc, 'e2e-leak', logs, metrics);
  // The distribution webhook answers once registered: an invalid dry run is denied.
  await waitFor(
    async () => {
      const invalid = distributionOf(uniqueName('probe'), { ...secret({ 'bad key': b64(MARKER) }) }, {});
      const denied = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: invalid, dryRun: 'All' })).catch(() => undefined);
      return denied?.message.includes('denied the request') ? true : undefined;
    },
    { what: 'the distribution webhook to be called', timeoutMs: 30_000 },
  );
}, 60_000);

afterAll(async () => {
  await server?.stop();
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  await kube.cleanup();
});

describe('Secret values', () => {
  it('never appear in logs, Events, status, error answers or metrics', async () => {
    const a = (await kube.createNamespace('leak')).metadata!.name!;
    const b = (await kube.createNamespace('leak')).metadata!.name!;
    const missing = uniqueName('leak-missing');
    // A foreign object in b: a conflict, reported in status and an Event.
    await kube.put({ ...secret({ mine: b64(`theirs-${MARKER}`) }), metadata: { name: 'marked', namespace: b } });
    const name = uniqueName('rd-leak');
    const targets = { includedNamespaces: { list: [{ name: a }, { name: b }, { name: missing }] } };
    await kube.createDistribution(distributionOf(name, secret({ token: b64(MARKER), other: b64(`x${MARKER}`) }), targets));
    await kube.waitForStatus(name, (s) => s.succeeded === 1 && s.failed === 2);

    // Drift repaired, then a type change (delete + create).
    const copy = (await kube.get('Secret', a, 'marked'))!;
    await kube.put({ ...copy, data: { token: b64(`edited-${MARKER}`) } });
    await kube.waitForObject('Secret', a, 'marked', (o) => o?.data?.token === b64(MARKER));
    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource = secret({ username: b64(MARKER), password: b64(`xx${MARKER}`) }, 'kubernetes.io/basic-auth');
    });
    await kube.waitForObject('Secret', a, 'marked', (o) => o?.type === 'kubernetes.io/basic-auth');

    // Denials: invalid content, and an author without rights.
    const invalid = distributionOf(uniqueName('rd-leak-bad'), secret({ 'not a key': b64(MARKER), ok: `not-base64-${MARKER}` }), targets);
    answers.push((await rejection(kube.createDistribution(invalid))).message);
    // May create distributions, but may not write Secrets anywhere.
    const author = uniqueName('leak-author');
    await rbac.createClusterRole({ body: { metadata: { name: author }, rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['create'] }] } });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: author },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: author },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: author }],
      },
    });
    cleanups.push(() => rbac.deleteClusterRoleBinding({ name: author }), () => rbac.deleteClusterRole({ name: author }));
    const asNobody = impersonating(kc, author).makeApiClient(CustomObjectsApi);
    const forbidden = distributionOf(uniqueName('rd-leak-forbidden'), secret({ token: b64(MARKER) }), targets);
    // RBAC changes reach the authorizer within a moment: until then the API server itself refuses.
    answers.push(
      await waitFor(
        async () => {
          const { message } = await rejection(asNobody.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: forbidden }));
          return message.includes('denied the request') ? message : undefined;
        },
        { what: 'the author to reach the webhook', timeoutMs: 20_000 },
      ),
    );

    // A registry Secret injected into pods (its keys parsed, its credentials never kept).
    const registry = uniqueName('rd-leak-registry');
    const pulled = (await kube.createNamespace('leak-pods')).metadata!.name!;
    const config = { auths: { 'registry.example.com': { username: 'robot', password: MARKER, auth: b64(`robot:${MARKER}`) } } };
    const registryRd = distributionOf(registry, { ...secret({ '.dockerconfigjson': b64(JSON.stringify(config)) }, 'kubernetes.io/dockerconfigjson'), metadata: { name: 'pull' } }, {
      includedNamespaces: { list: [{ name: pulled }] },
    });
    await kube.createDistribution({ ...registryRd, spec: { ...registryRd.spec, imagePullSecretInjection: 'MatchingImages' } });
    await kube.waitForStatus(registry, (s) => s.succeeded === 1);
    const pod = await waitFor(
      async () => {
        const created = await kc.makeApiClient(CoreV1Api).createNamespacedPod({
          namespace: pulled,
          body: { metadata: { name: uniqueName('pod') }, spec: { containers: [{ name: 'c', image: 'registry.example.com/app:1' }] } },
        });
        return (created.spec?.imagePullSecrets ?? []).length > 0 ? created : undefined;
      },
      { what: 'a pod with the injected Secret' },
    );
    expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'pull' }]);

    const events = await kc.makeApiClient(CoreV1Api).listEventForAllNamespaces();
    const status = JSON.stringify((await kube.getDistribution(name))?.status);
    const exported = await metrics.registry.metrics();
    expect(logs.length).toBeGreaterThan(10);
    expect(events.items.some((event) => event.involvedObject.name === name)).toBe(true);
    expect(answers.every((answer) => answer.includes('denied the request'))).toBe(true);
    for (const [where, text] of Object.entries({ logs: logs.join(''), events: JSON.stringify(events.items), status, answers: answers.join('\n'), metrics: exported })) {
      expect(leaks(text), where).toEqual([]);
    }
  });
});
