// Health as the tools that judge it read it, asked of the tools themselves: kstatus (Flux, kpt) and
// Argo CD's health check (integrations/argocd/health.lua under Lua 5.1), over distributions of this
// cluster caught in each state: current, in progress (a generation not yet distributed, a write
// being retried), stalled (a conflict, a missing namespace, a write the API server refuses, a
// missing source), before any status at all, and under a status as OpenKruise's own controller
// writes it (no Ready).
import { AdmissionregistrationV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { CONDITION_TYPES, GROUP, PLURAL, VERSION, type DistributionStatus, type ResourceDistribution } from '../../src/domain/types.js';
import { condition, configMapOf, distributionOf } from './fixtures/kube.js';
import { startInProcessController } from './fixtures/in-process.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName, waitFor } from './support/cluster.js';
import { argoCdHealthOf, kstatusOf } from './support/health-readers.js';

const suite = useReconcileSuite();
const { kube } = suite;
const admission = kube.kc.makeApiClient(AdmissionregistrationV1Api);
const webhooks: string[] = [];
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

afterAll(async () => {
  await Promise.allSettled(webhooks.map((name) => admission.deleteValidatingWebhookConfiguration({ name })));
});

const ready = (s: DistributionStatus): string | undefined => s.conditions.find((c) => c.type === 'Ready')?.status;

async function namespaces(count: number, labels: Record<string, string> = {}): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push((await kube.createNamespace('health', labels)).metadata!.name!);
  return names;
}

async function distribute(targets: string[], data: Record<string, string> = { a: '1' }): Promise<string> {
  const name = uniqueName('rd-health');
  await kube.createDistribution(distributionOf(name, configMapOf('settings', data), { includedNamespaces: { list: targets.map((n) => ({ name: n })) } }));
  return name;
}

interface Readings {
  kstatus: { status: string; message: string };
  argocd: { status: string; message: string };
}

/** What kstatus and Argo CD's check say of the object as the API server returns it. */
async function readingsOf(rd: ResourceDistribution): Promise<Readings> {
  const [kstatus] = await kstatusOf([rd]);
  return { kstatus: kstatus!, argocd: await argoCdHealthOf(rd) };
}

/** Waits until a create of a ConfigMap in `namespace` fails with `code` (the API server has taken up the webhook or quota). */
async function createFailsWith(namespace: string, code: number): Promise<void> {
  await waitFor(
    async () => {
      const probe = configMapOf(uniqueName('probe'), { p: '1' }, { namespace });
      try {
        await kube.core.createNamespacedConfigMap({ namespace, body: probe as never });
        await kube.remove('ConfigMap', namespace, probe.metadata.name!);
        return undefined;
      } catch (error) {
        return (error as { code?: number }).code === code ? true : undefined;
      }
    },
    { what: `a create in ${namespace} failing with ${code}`, timeoutMs: 30_000 },
  );
}

describe('health as kstatus and Argo CD read it', () => {
  it('current: every target holds a correct copy -> Current, Healthy', async () => {
    const name = await distribute(await namespaces(2));
    const rd = await kube.waitForStatus(name, (s) => ready(s) === 'True');
    const readings = await readingsOf(rd);
    expect(readings.kstatus.status).toBe('Current');
    expect(readings.argocd).toEqual({ status: 'Healthy', message: '2 of 2 targets hold a correct copy' });
  });

  it('before the first pass, under a status as OpenKruise writes it, and while a new generation waits for one', async () => {
    const [first, second] = (await namespaces(2)) as [string, string];
    const current = await distribute([first]);
    await kube.waitForStatus(current, (s) => ready(s) === 'True');
    await suite.controller.stop();
    try {
      const fresh = await distribute([second]);
      const unseen = await kube.getDistribution(fresh);
      expect(unseen?.status).toBeUndefined();
      // Nothing to read: kstatus takes an object without status or observedGeneration as Current;
      // the check says Progressing until the first status.
      expect(await readingsOf(unseen!)).toMatchObject({ kstatus: { status: 'Current' }, argocd: { status: 'Progressing', message: 'Waiting for the first status' } });

      // The status OpenKruise's own controller writes (its six conditions, no Ready): kstatus reads
      // a failure as Current; the check reads Kruise's conditions as they are.
      const kruise = CONDITION_TYPES.map((type) =>
        type === 'NamespaceNotExists'
          ? { type, status: 'True', reason: 'namespace not found', lastTransitionTime: '2026-01-01T00:00:00Z', failedNamespace: ['gone'] }
          : { type, status: 'False', reason: 'Succeeded', lastTransitionTime: '2026-01-01T00:00:00Z' },
      );
      const status = { desired: 2, succeeded: 1, failed: 1, observedGeneration: 1, conditions: kruise };
      await kube.custom.patchClusterCustomObjectStatus({ group: GROUP, version: VERSION, plural: PLURAL, name: fresh, body: { status } }, merge);
      const kruiseStatus = await kube.getDistribution(fresh);
      expect(await readingsOf(kruiseStatus!)).toEqual({
        kstatus: { status: 'Current', message: 'Resource is current' },
        argocd: { status: 'Degraded', message: 'NamespaceNotExists: namespace not found' },
      });
      const mended = { desired: 2, succeeded: 2, failed: 0, observedGeneration: 1, conditions: kruise.map((c) => ({ type: c.type, status: 'False', reason: 'Succeeded', lastTransitionTime: c.lastTransitionTime })) };
      await kube.custom.replaceClusterCustomObjectStatus({ group: GROUP, version: VERSION, plural: PLURAL, name: fresh, body: { ...kruiseStatus!, status: mended } });
      expect(await readingsOf((await kube.getDistribution(fresh))!)).toEqual({
        kstatus: { status: 'Current', message: 'Resource is current' },
        argocd: { status: 'Healthy', message: '2 of 2 targets hold a correct copy' },
      });

      const bumped = await kube.updateDistribution(current, (rd) => {
        rd.spec.resource.data = { a: '2' };
      });
      expect(bumped.metadata.generation).toBe(2);
      expect(bumped.status?.observedGeneration).toBe(1);
      expect(await readingsOf(bumped)).toEqual({
        kstatus: { status: 'InProgress', message: 'ResourceDistribution generation is 2, but latest observed generation is 1' },
        argocd: { status: 'Progressing', message: 'Waiting for generation 2 to be distributed (the status describes 1)' },
      });
    } finally {
      suite.controller = await startInProcessController(kube.kc);
    }
    const done = await kube.waitForStatus(current, (s, rd) => s.observedGeneration === rd.metadata.generation && ready(s) === 'True');
    expect(await readingsOf(done)).toMatchObject({ kstatus: { status: 'Current' }, argocd: { status: 'Healthy' } });
  });

  it('a write that fails and is retried (a webhook that cannot be reached: 500) -> InProgress, Progressing', async () => {
    const label = uniqueName('unreachable');
    const [fine, failing] = [...(await namespaces(1)), ...(await namespaces(1, { 'health-e2e': label }))] as [string, string];
    const webhook = uniqueName('health-unreachable');
    webhooks.push(webhook);
    await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: webhook },
        webhooks: [
          {
            name: 'unreachable.health.e2e.resource-distributor.io',
            // Nothing listens on the discard port: every call fails, and failurePolicy Fail refuses the write with 500.
            clientConfig: { url: 'https://127.0.0.1:9/validate' },
            rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'health-e2e': label } },
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 1,
          },
        ],
      },
    });
    await createFailsWith(failing, 500);
    const name = await distribute([fine, failing]);
    const rd = await kube.waitForStatus(name, (s) => condition({ status: s } as ResourceDistribution, 'CreateResourceFailed')?.status === 'True');
    expect(condition(rd, 'Ready')).toMatchObject({ status: 'False', reason: 'CreateFailed' });
    expect(condition(rd, 'Stalled')).toMatchObject({ status: 'False', reason: 'Retrying' });
    const readings = await readingsOf(rd);
    expect(readings.kstatus.status).toBe('InProgress');
    expect(readings.argocd.status).toBe('Progressing');
    expect(readings.argocd.message).toContain(`1 of 2 targets without a correct copy; CreateResourceFailed: ${failing}: `);
  });

  const STALLED: [string, () => Promise<{ name: string; namespace: string }>, string][] = [
    [
      'a foreign object where the copy goes',
      async () => {
        const [free, taken] = (await namespaces(2)) as [string, string];
        await kube.put(configMapOf('settings', { theirs: 'x' }, { namespace: taken }));
        return { name: await distribute([free, taken]), namespace: taken };
      },
      'ResourceConflict',
    ],
    [
      'a listed namespace that does not exist',
      async () => {
        const [present] = (await namespaces(1)) as [string];
        const absent = kube.reserveNamespace('health-absent');
        return { name: await distribute([present, absent]), namespace: absent };
      },
      'NamespaceNotFound',
    ],
    [
      'a write the API server refuses (a quota: 403)',
      async () => {
        const [full] = (await namespaces(1)) as [string];
        const quota = await kube.core.createNamespacedResourceQuota({ namespace: full, body: { metadata: { name: 'no-configmaps' }, spec: { hard: { configmaps: '0' } } } });
        // This control plane runs no quota controller: its status, which admission enforces, is written here.
        await kube.core.replaceNamespacedResourceQuotaStatus({ namespace: full, name: 'no-configmaps', body: { ...quota, status: { hard: { configmaps: '0' }, used: { configmaps: '0' } } } });
        await createFailsWith(full, 403);
        return { name: await distribute([full]), namespace: full };
      },
      'CreateFailed',
    ],
    [
      'a source that does not exist',
      async () => {
        const [home, target] = (await namespaces(2)) as [string, string];
        const name = uniqueName('rd-health');
        await kube.createDistribution({
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'ResourceDistribution',
          metadata: { name },
          spec: { source: { apiVersion: 'v1', kind: 'ConfigMap', namespace: home, name: 'not-there' }, targets: { includedNamespaces: { list: [{ name: target }] } } },
        });
        return { name, namespace: home };
      },
      'SourceNotFound',
    ],
  ];

  it.each(STALLED)('stalled on %s -> Failed, Degraded', async (_what, make, reason) => {
    const { name, namespace } = await make();
    const rd = await kube.waitForStatus(name, (s) => s.conditions.some((c) => c.type === 'Stalled' && c.status === 'True'));
    expect(condition(rd, 'Stalled')).toMatchObject({ reason });
    expect(condition(rd, 'Ready')).toMatchObject({ status: 'False' });
    const readings = await readingsOf(rd);
    expect(readings.kstatus.status).toBe('Failed');
    expect(readings.kstatus.message).toBe(condition(rd, 'Stalled')?.message);
    expect(readings.argocd.status).toBe('Degraded');
    expect(readings.argocd.message).toContain(namespace);
  });
});
