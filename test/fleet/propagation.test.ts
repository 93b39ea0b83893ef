// A distribution created once on the fleet's control plane (Karmada), propagated by the example
// ClusterPropagationPolicy to both members, where the product makes the copies; the fleet's status
// is what our ResourceInterpreterCustomization aggregates of the members' statuses.
import { AdmissionregistrationV1Api, KubeConfig, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { GROUP, PLURAL, VERSION, type DistributionStatus, type ResourceDistribution } from '../../src/domain/types.js';
import { condition, configMapOf, distributionOf, Kube } from '../e2e/fixtures/kube.js';
import { uniqueName, waitFor } from '../e2e/support/cluster.js';
import { argoCdHealthOf, kstatusOf } from '../e2e/support/health-readers.js';

function kubeAt(path: string): Kube {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return new Kube(kc);
}

const fleet = kubeAt(inject('fleetKubeconfigPath'));
const members = inject('members').map(({ name, kubeconfigPath }) => ({ name, kube: kubeAt(kubeconfigPath) }));
const [first, second] = members as [(typeof members)[number], (typeof members)[number]];

afterAll(async () => {
  await fleet.cleanup();
  await Promise.all(members.map(({ kube }) => kube.cleanup()));
});

/** `count` namespaces in `kube` labelled `fleet-test=<tag>`. */
async function labelledNamespaces(kube: Kube, tag: string, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push((await kube.createNamespace('fleet', { 'fleet-test': tag })).metadata!.name!);
  return names;
}

async function copiesIn(kube: Kube, namespaces: readonly string[], name: string, value: string): Promise<boolean> {
  const found = await Promise.all(namespaces.map((namespace) => kube.get('ConfigMap', namespace, name)));
  return found.every((copy) => copy?.data?.['value'] === value);
}

const summed = (s: DistributionStatus): [number, number, number] => [s.desired, s.succeeded, s.failed];

/** The API server's refusal as plain text, whether the client kept its body as text or parsed it. */
const said = (body: unknown): string => JSON.stringify(body).replaceAll('\\', '');

/** What Flux (kstatus) and Argo CD (integrations/argocd/health.lua) make of the fleet's distribution. */
async function healthOf(rd: ResourceDistribution): Promise<[string, string]> {
  const [kstatus] = await kstatusOf([rd]);
  return [kstatus!.status, (await argoCdHealthOf(rd)).status];
}

function productPid(member: string): number {
  const found = inject('processes').find((p) => p.name === `${member} product`);
  if (!found) throw new Error(`no product process of ${member}`);
  return found.pid;
}

describe('a distribution created on the fleet', () => {
  it('makes copies in the targeted namespaces of both members, and the fleet status sums them', async () => {
    const tag = uniqueName('sum');
    const inFirst = await labelledNamespaces(first.kube, tag, 2);
    const inSecond = await labelledNamespaces(second.kube, tag, 3);
    const name = uniqueName('rd-fleet');
    const started = Date.now();
    await fleet.createDistribution(distributionOf(name, configMapOf('fleet-settings', { value: 'one' }), { namespaceLabelSelector: { matchLabels: { 'fleet-test': tag } } }));
    await waitFor(async () => ((await copiesIn(first.kube, inFirst, 'fleet-settings', 'one')) && (await copiesIn(second.kube, inSecond, 'fleet-settings', 'one')) ? true : undefined), {
      what: 'copies in both members',
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    console.log(`[fleet] create on the fleet -> last copy in the last member: ${Date.now() - started} ms`);

    const rd = await fleet.waitForStatus(name, (s, current) => s.observedGeneration === current.metadata.generation && s.desired === 5 && s.succeeded === 5, 60_000);
    expect(summed(rd.status!)).toEqual([5, 5, 0]);
    expect(condition(rd, 'Ready')).toMatchObject({ status: 'True' });
    expect(condition(rd, 'NamespaceNotExists')).toMatchObject({ status: 'False' });
    const types = rd.status!.conditions.map((c) => c.type);
    expect(types.slice(0, 6)).toEqual(['GetResourceFailed', 'CreateResourceFailed', 'UpdateResourceFailed', 'DeleteResourceFailed', 'ConflictOccurred', 'NamespaceNotExists']);
    const inMember: ResourceDistribution | undefined = await second.kube.getDistribution(name);
    expect(inMember?.status?.desired).toBe(3);
  });

  it('reaches both members on an update, and observedGeneration moves only once both have it', async () => {
    const tag = uniqueName('update');
    const inFirst = await labelledNamespaces(first.kube, tag, 1);
    const inSecond = await labelledNamespaces(second.kube, tag, 1);
    const name = uniqueName('rd-update');
    await fleet.createDistribution(distributionOf(name, configMapOf('fleet-update', { value: 'one' }), { namespaceLabelSelector: { matchLabels: { 'fleet-test': tag } } }));
    await fleet.waitForStatus(name, (s, rd) => s.observedGeneration === rd.metadata.generation && condition(rd, 'Ready')?.status === 'True', 60_000);

    // The second member's product is paused: its webhook does not answer, so its API server
    // refuses the new generation (failurePolicy Fail) until it runs again.
    const paused = productPid(second.name);
    process.kill(paused, 'SIGSTOP');
    try {
      const updated = await fleet.updateDistribution(name, (rd) => {
        rd.spec.resource.data = { value: 'two' };
      });
      expect(updated.metadata.generation).toBe(2);
      await waitFor(async () => ((await copiesIn(first.kube, inFirst, 'fleet-update', 'two')) ? true : undefined), { what: 'the update in the first member', timeoutMs: 60_000 });
      await waitFor(async () => ((await first.kube.getDistribution(name))?.status?.observedGeneration === 2 ? true : undefined), { what: 'the first member observing generation 2', timeoutMs: 30_000 });
      // Karmada collects the first member's status; the fleet's still describes generation 1.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      const waiting = await fleet.getDistribution(name);
      expect(waiting?.status?.observedGeneration).toBe(1);
      expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', message: expect.stringContaining(second.name) as string });
      expect(await healthOf(waiting!)).toEqual(['InProgress', 'Progressing']);
    } finally {
      process.kill(paused, 'SIGCONT');
    }
    await waitFor(async () => ((await copiesIn(second.kube, inSecond, 'fleet-update', 'two')) ? true : undefined), { what: 'the update in the second member', timeoutMs: 90_000 });
    const current = await fleet.waitForStatus(name, (s, rd) => s.observedGeneration === 2 && condition(rd, 'Ready')?.status === 'True', 60_000);
    expect(await healthOf(current)).toEqual(['Current', 'Healthy']);
  });

  it("shows a member's failure on the fleet, naming member/namespace", async () => {
    const onlyInSecond = (await second.kube.createNamespace('fleet-only')).metadata!.name!;
    const name = uniqueName('rd-missing');
    await fleet.createDistribution(distributionOf(name, configMapOf('fleet-missing', { value: 'one' }), { includedNamespaces: { list: [{ name: onlyInSecond }] } }));
    const rd = await fleet.waitForStatus(name, (s, current) => s.observedGeneration === current.metadata.generation && condition(current, 'NamespaceNotExists')?.status === 'True', 60_000);
    expect(summed(rd.status!)).toEqual([2, 1, 1]);
    expect(condition(rd, 'NamespaceNotExists')).toMatchObject({ failedNamespace: [`${first.name}/${onlyInSecond}`], message: expect.stringContaining(`${first.name}: `) as string });
    expect(condition(rd, 'Ready')).toMatchObject({ status: 'False' });
    expect(condition(rd, 'Stalled')).toMatchObject({ status: 'True' });
    expect(await healthOf(rd)).toEqual(['Failed', 'Degraded']);
    expect(await second.kube.get('ConfigMap', onlyInSecond, 'fleet-missing')).toMatchObject({ data: { value: 'one' } });
  });

  it('is refused at the fleet when invalid, before any member sees it', async () => {
    const name = uniqueName('rd-invalid');
    const invalid = distributionOf(name, configMapOf('fleet-invalid', { value: 'one' }), { includedNamespaces: { list: [{ name: 'a' }] }, excludedNamespaces: { list: [{ name: 'a' }] } });
    const refused = await fleet.createDistribution(invalid).then(
      () => undefined,
      (error: unknown) => error as { code?: number; body?: unknown },
    );
    expect(refused?.code).toBe(422);
    expect(said(refused?.body)).toContain('is both included and excluded');
    expect(await fleet.getDistribution(name)).toBeUndefined();
    // Admission alone on the fleet: the webhooks that hand work to a reconciler are not registered.
    const registered = await fleet.kc.makeApiClient(AdmissionregistrationV1Api).listValidatingWebhookConfiguration();
    expect(registered.items.map((c) => c.metadata?.name).filter((n) => n?.startsWith('resource-distributor'))).toEqual(['resource-distributor-distributions']);
  });

  it("refuses, at the fleet, an author who may not write the copies there (the fleet's RBAC)", async () => {
    const user = uniqueName('fleet-author');
    const rbac = fleet.kc.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({ body: { metadata: { name: user }, rules: [{ apiGroups: ['apps.kruise.io'], resources: ['resourcedistributions'], verbs: ['create', 'get'] }] } });
    await rbac.createClusterRoleBinding({ body: { metadata: { name: user }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] } });
    try {
      const name = uniqueName('rd-author');
      const body = distributionOf(name, configMapOf('fleet-author', { value: 'one' }), { includedNamespaces: { list: [{ name: 'team-x' }] } });
      const refused = await fleet.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body }, setHeaderOptions('Impersonate-User', user)).then(
        () => undefined,
        (error: unknown) => error as { code?: number; body?: unknown },
      );
      expect(refused?.code).toBe(403);
      expect(said(refused?.body)).toContain(`user "${user}" may not create, update configmaps in namespace "team-x"`);
      expect(await fleet.getDistribution(name)).toBeUndefined();
    } finally {
      await rbac.deleteClusterRoleBinding({ name: user });
      await rbac.deleteClusterRole({ name: user });
    }
  });

  it('without the fleet webhook, says on the fleet that each member refused an invalid distribution', async () => {
    const admission = fleet.kc.makeApiClient(AdmissionregistrationV1Api);
    const webhook = 'resource-distributor-distributions';
    const saved = await admission.readValidatingWebhookConfiguration({ name: webhook });
    await admission.deleteValidatingWebhookConfiguration({ name: webhook });
    try {
      const name = uniqueName('rd-unchecked');
      const invalid = distributionOf(name, configMapOf('fleet-unchecked', { value: 'one' }), { includedNamespaces: { list: [{ name: 'a' }] }, excludedNamespaces: { list: [{ name: 'a' }] } });
      // The API server takes the removal up within moments.
      await waitFor(() => fleet.createDistribution(invalid), { what: 'the fleet admitting it without our webhook' });
      const notApplied = (member: string) => `${member}: not applied: `;
      const rd = await fleet.waitForStatus(name, (_, current) => [first.name, second.name].every((m) => condition(current, 'Ready')?.message?.includes(notApplied(m))), 60_000);
      expect(condition(rd, 'Ready')).toMatchObject({ status: 'False', message: expect.stringContaining('is both included and excluded') as string });
      expect(rd.status?.observedGeneration).toBeUndefined();
    } finally {
      await admission.createValidatingWebhookConfiguration({ body: { ...saved, metadata: { name: webhook, labels: saved.metadata?.labels } } });
    }
  });

  it('reaches both members when applied as v1beta1 too (the policy selects the version Karmada watches)', async () => {
    const tag = uniqueName('beta');
    const inFirst = await labelledNamespaces(first.kube, tag, 1);
    const inSecond = await labelledNamespaces(second.kube, tag, 1);
    const name = uniqueName('rd-beta');
    const beta = { group: GROUP, version: 'v1beta1', plural: PLURAL };
    await fleet.custom.createClusterCustomObject({
      ...beta,
      body: {
        apiVersion: `${GROUP}/v1beta1`,
        kind: 'ResourceDistribution',
        metadata: { name },
        spec: { resource: configMapOf('fleet-beta', { value: 'beta' }), targets: { namespaceSelector: { matchLabels: { 'fleet-test': tag } } } },
      },
    });
    try {
      await waitFor(async () => ((await copiesIn(first.kube, inFirst, 'fleet-beta', 'beta')) && (await copiesIn(second.kube, inSecond, 'fleet-beta', 'beta')) ? true : undefined), {
        what: 'copies in both members',
        timeoutMs: 60_000,
      });
      // Read back as v1alpha1, on the fleet and in a member.
      const rd = await fleet.waitForStatus(name, (s, current) => s.observedGeneration === current.metadata.generation && s.desired === 2 && s.succeeded === 2, 60_000);
      expect(rd.spec.targets.namespaceLabelSelector).toEqual({ matchLabels: { 'fleet-test': tag } });
      expect((await first.kube.getDistribution(name))?.spec.targets.namespaceLabelSelector).toEqual({ matchLabels: { 'fleet-test': tag } });
    } finally {
      await fleet.deleteDistribution(name);
    }
  });

  it('once deleted, leaves no member distribution and no copy, and a foreign object untouched', async () => {
    const tag = uniqueName('delete');
    const [withForeign] = (await labelledNamespaces(first.kube, tag, 1)) as [string];
    const inSecond = await labelledNamespaces(second.kube, tag, 1);
    await first.kube.put(configMapOf('fleet-delete', { value: 'foreign' }, { namespace: withForeign }));
    const name = uniqueName('rd-delete');
    await fleet.createDistribution(distributionOf(name, configMapOf('fleet-delete', { value: 'ours' }), { namespaceLabelSelector: { matchLabels: { 'fleet-test': tag } } }));
    const conflicted = await fleet.waitForStatus(name, (s, rd) => s.observedGeneration === rd.metadata.generation && condition(rd, 'ConflictOccurred')?.status === 'True', 60_000);
    expect(condition(conflicted, 'ConflictOccurred')).toMatchObject({ failedNamespace: [`${first.name}/${withForeign}`] });
    await waitFor(async () => ((await copiesIn(second.kube, inSecond, 'fleet-delete', 'ours')) ? true : undefined), { what: 'the copy in the second member' });

    await fleet.deleteDistribution(name);
    await waitFor(
      async () => {
        const left = await Promise.all([first.kube.getDistribution(name), second.kube.getDistribution(name), ...inSecond.map((ns) => second.kube.get('ConfigMap', ns, 'fleet-delete'))]);
        return left.every((object) => object === undefined) ? true : undefined;
      },
      { what: 'member distributions and copies removed', timeoutMs: 90_000 },
    );
    expect(await first.kube.get('ConfigMap', withForeign, 'fleet-delete')).toMatchObject({ data: { value: 'foreign' } });
  });
});
