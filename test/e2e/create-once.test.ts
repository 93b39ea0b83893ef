// Create-once distributions (spec.syncPolicy CreateOnce), with the whole product registered in the
// API server: a copy is created in every target namespace, new ones at once, then left to the
// namespace (an edit stays, a template change reaches only new namespaces); deleted by hand it
// comes back; narrowing deletes untouched copies and releases edited ones (with an Event);
// switching to Sync takes the copies back; deleting the distribution deletes its copies, unless
// it is deleted with propagation Orphan. The same for a NetworkPolicy, whose copies the API server
// fills in (an untouched one is told by what the server stores of the template).
import { performance } from 'node:perf_hooks';
import { NetworkingV1Api, type V1NetworkPolicy } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABEL_DISTRIBUTION, PLURAL, VERSION, type Resource, type SyncPolicy } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { createController, type RunningController } from '../../src/reconcile/controller.js';
import { connectionOf } from '../kube-client.js';
import { configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { distributionWebhookCalled } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const team = uniqueName('once');
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
let server: RunningServer;
let controller: RunningController;

const TEMPLATE = 'namespace-defaults';
const name = uniqueName('rd-once');
const namespaces: Record<'a' | 'b' | 'c' | 'd', string> = { a: '', b: '', c: '', d: '' };

function defaults(limit: string): Resource {
  return configMapOf(TEMPLATE, { limit }, { labels: { app: 'defaults' } });
}

const limitIn = async (ns: string): Promise<string | undefined> => (await kube.get('ConfigMap', ns, TEMPLATE))?.data?.limit;

async function editCopy(ns: string, change: (copy: Resource) => void): Promise<void> {
  await waitFor(
    async () => {
      const copy = await kube.get('ConfigMap', ns, TEMPLATE);
      if (copy === undefined) return undefined;
      change(copy);
      return kube.put(copy);
    },
    { what: `an edit of the copy in ${ns}` },
  );
}

/** A change of the spec that no copy depends on: the controller plans every target afresh (a full pass). */
async function fullPass(distribution = name): Promise<void> {
  const rd = await kube.updateDistribution(distribution, (found) => {
    found.spec.targets.excludedNamespaces = { list: [{ name: uniqueName('nowhere') }] };
  });
  await kube.waitForStatus(distribution, (s) => s.observedGeneration === rd.metadata.generation);
  await controller.idle();
}

async function setPolicy(syncPolicy: SyncPolicy): Promise<void> {
  const rd = await kube.updateDistribution(name, (found) => {
    found.spec.syncPolicy = syncPolicy;
  });
  await kube.waitForStatus(name, (s) => s.observedGeneration === rd.metadata.generation);
}

beforeAll(async () => {
  for (const key of ['a', 'b', 'c'] as const) namespaces[key] = (await kube.createNamespace(`once-${key}`, { team })).metadata!.name!;
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics: createMetrics(),
    env: { RD_ALLOWED_KINDS: 'Secret,ConfigMap,NetworkPolicy.networking.k8s.io' },
    createController: (deps) => (controller = createController(deps)),
    overrides: { webhookNames: { distributions: uniqueName('e2e-once-distributions'), namespaces: uniqueName('e2e-once-namespaces') }, shutdownDelayMs: 0 },
  });
  // Only the webhook refuses a label of ours added to copies (the schema lets it through).
  await distributionWebhookCalled(kube.custom, distributionOf(uniqueName('probe'), defaults('1'), { namespaceLabelSelector: { matchLabels: { team } } }, { copyMetadata: { labels: { add: { [LABEL_DISTRIBUTION]: 'x' } } } }));
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('syncPolicy CreateOnce', () => {
  it('creates a copy in every target namespace, and in a new one by the time it exists', async () => {
    await kube.createDistribution(distributionOf(name, defaults('10'), { namespaceLabelSelector: { matchLabels: { team } } }, { syncPolicy: 'CreateOnce' }));
    await kube.waitForStatus(name, (s) => s.desired === 3 && s.succeeded === 3);
    for (const key of ['a', 'b', 'c'] as const) expect(await limitIn(namespaces[key])).toBe('10');

    const started = performance.now();
    namespaces.d = (await kube.createNamespace('once-d', { team })).metadata!.name!;
    await kube.waitForObject('ConfigMap', namespaces.d, TEMPLATE, (o) => o !== undefined, 10_000);
    console.log(`new namespace: its copy present ${Math.round(performance.now() - started)} ms after the namespace create was sent`);
    await kube.waitForStatus(name, (s) => s.desired === 4 && s.succeeded === 4);
  });

  it('leaves an edit by hand as it is, also after a full pass, and counts the copy as present', async () => {
    await editCopy(namespaces.a, (copy) => {
      copy.data = { limit: '50', extra: 'mine' };
      copy.metadata.labels = { ...copy.metadata.labels, app: 'tuned', owner: 'team-a' };
    });
    // Our label removed too (by which the controller finds its copies): put back, the edit kept.
    await editCopy(namespaces.d, (copy) => {
      copy.data = { limit: 'd-tuned' };
      delete copy.metadata.labels?.[LABEL_DISTRIBUTION];
    });
    await fullPass();
    await sleep(1_000);
    const copy = await kube.get('ConfigMap', namespaces.a, TEMPLATE);
    expect(copy?.data).toEqual({ limit: '50', extra: 'mine' });
    expect(copy?.metadata.labels).toMatchObject({ app: 'tuned', owner: 'team-a', [LABEL_DISTRIBUTION]: name });
    const relabelled = await kube.waitForObject('ConfigMap', namespaces.d, TEMPLATE, (o) => o?.metadata.labels?.[LABEL_DISTRIBUTION] === name);
    expect(relabelled?.data).toEqual({ limit: 'd-tuned' });
    expect((await kube.getDistribution(name))?.status).toMatchObject({ desired: 4, succeeded: 4, failed: 0 });
  });

  it('does not update existing copies when the template changes; a new namespace gets the new template', async () => {
    const rd = await kube.updateDistribution(name, (found) => {
      found.spec.resource = defaults('20');
    });
    await kube.waitForStatus(name, (s) => s.observedGeneration === rd.metadata.generation && s.succeeded === 4);
    await controller.idle();
    await sleep(1_000);
    expect([await limitIn(namespaces.a), await limitIn(namespaces.b), await limitIn(namespaces.c), await limitIn(namespaces.d)]).toEqual(['50', '10', '10', 'd-tuned']);

    const fresh = (await kube.createNamespace('once-new', { team })).metadata!.name!;
    await kube.waitForObject('ConfigMap', fresh, TEMPLATE, (o) => o?.data?.limit === '20', 10_000);
    await kube.waitForStatus(name, (s) => s.desired === 5 && s.succeeded === 5);
    // Not a target of what follows.
    await kube.labelNamespace(fresh, { team: null });
    await kube.waitForObject('ConfigMap', fresh, TEMPLATE, (o) => o === undefined);
  });

  it('creates a copy deleted by hand again, from the current template', async () => {
    await kube.remove('ConfigMap', namespaces.b, TEMPLATE);
    await kube.waitForObject('ConfigMap', namespaces.b, TEMPLATE, (o) => o?.data?.limit === '20', 10_000);
    await kube.waitForStatus(name, (s) => s.desired === 4 && s.succeeded === 4);
  });

  it('narrowed: deletes a copy untouched since it was written, releases an edited one with an Event', async () => {
    // b's copy is what the distribution writes now (untouched); a's was edited.
    await kube.labelNamespace(namespaces.b, { team: null });
    await kube.labelNamespace(namespaces.a, { team: null });
    await kube.waitForObject('ConfigMap', namespaces.b, TEMPLATE, (o) => o === undefined);
    const released = await kube.waitForObject('ConfigMap', namespaces.a, TEMPLATE, (o) => o !== undefined && o.metadata.labels?.[LABEL_DISTRIBUTION] === undefined);
    expect(released?.data).toEqual({ limit: '50', extra: 'mine' });
    expect(released?.metadata.labels).toEqual({ app: 'tuned', owner: 'team-a' });
    expect(Object.keys(released?.metadata.annotations ?? {}).filter((key) => key.startsWith('kruise.io/') || key.startsWith('resource-distributor.io/'))).toEqual([]);
    expect(released?.metadata.ownerReferences ?? []).toEqual([]);
    await kube.waitForStatus(name, (s) => s.desired === 2 && s.succeeded === 2);
    const event = await waitFor(
      async () => {
        const list = await kube.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` });
        return list.items.find((item) => item.reason === 'CopyReleased');
      },
      { what: 'the CopyReleased Event' },
    );
    console.log(`Event ${event.type} ${event.reason}: ${event.message}`);
    expect(event.type).toBe('Normal');
    expect(event.message).toContain(`${namespaces.a}/${TEMPLATE} released`);

    // Targeted again, the released copy is the namespace's object: a conflict, left alone.
    await kube.labelNamespace(namespaces.a, { team });
    await kube.waitForStatus(name, (s) => s.desired === 3 && s.conditions.some((c) => c.type === 'ConflictOccurred' && c.status === 'True'));
    expect((await kube.get('ConfigMap', namespaces.a, TEMPLATE))?.data).toEqual({ limit: '50', extra: 'mine' });
    await kube.labelNamespace(namespaces.a, { team: null });
    await kube.waitForStatus(name, (s) => s.desired === 2 && s.succeeded === 2);
  });

  it('switched to Sync, takes the copies back; switched back to CreateOnce, leaves them', async () => {
    await editCopy(namespaces.c, (copy) => {
      copy.data = { limit: 'tuned' };
    });
    await fullPass();
    expect(await limitIn(namespaces.c)).toBe('tuned');

    await setPolicy('Sync');
    // c's copy and d's (both edited, from the first template) are written with the template now.
    await kube.waitForObject('ConfigMap', namespaces.c, TEMPLATE, (o) => o?.data?.limit === '20');
    await kube.waitForObject('ConfigMap', namespaces.d, TEMPLATE, (o) => o?.data?.limit === '20');

    await setPolicy('CreateOnce');
    await editCopy(namespaces.c, (copy) => {
      copy.data = { limit: 'tuned again' };
    });
    await fullPass();
    await sleep(1_000);
    expect(await limitIn(namespaces.c)).toBe('tuned again');
  });

  it('deleted, its copies go with it; deleted with propagation Orphan, they stay', async () => {
    const orphaning = uniqueName('rd-once-orphan');
    await kube.createDistribution(distributionOf(orphaning, configMapOf('kept-defaults', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }, { syncPolicy: 'CreateOnce' }));
    await kube.waitForStatus(orphaning, (s) => s.desired === 2 && s.succeeded === 2);
    // The garbage collector orphans only the dependents its graph already holds.
    await sleep(2_000);
    await kube.custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: orphaning, propagationPolicy: 'Orphan' });
    for (const ns of [namespaces.c, namespaces.d]) await kube.waitForObject('ConfigMap', ns, 'kept-defaults', (o) => o !== undefined && (o.metadata.ownerReferences ?? []).length === 0);
    await waitFor(async () => ((await kube.getDistribution(orphaning)) === undefined ? true : undefined), { what: `${orphaning} deleted` });

    await kube.deleteDistribution(name);
    for (const ns of [namespaces.c, namespaces.d]) await kube.waitForObject('ConfigMap', ns, TEMPLATE, (o) => o === undefined);
    // The released copy is no longer the distribution's: the garbage collector leaves it.
    expect(await limitIn(namespaces.a)).toBe('50');
    await controller.idle();
    for (const ns of [namespaces.c, namespaces.d]) expect((await kube.get('ConfigMap', ns, 'kept-defaults'))?.data).toEqual({ a: '1' });
  });
});

describe('syncPolicy CreateOnce for a kind the API server fills in: NetworkPolicy', () => {
  const networking = kc.makeApiClient(NetworkingV1Api);
  const policyName = 'default-deny-ingress';
  const tenants = uniqueName('once-np');
  const distributionName = uniqueName('rd-once-np');

  async function policyIn(namespace: string): Promise<V1NetworkPolicy | undefined> {
    return networking.readNamespacedNetworkPolicy({ namespace, name: policyName }).catch(() => undefined);
  }

  const portOf = (policy: V1NetworkPolicy | undefined): number | string | undefined => policy?.spec?.ingress?.[0]?.ports?.[0]?.port;
  const ours = (policy: V1NetworkPolicy | undefined): boolean => policy?.metadata?.labels?.[LABEL_DISTRIBUTION] !== undefined;

  it('leaves a tuned policy alone; narrowed, deletes the untouched one and releases the tuned one', async () => {
    const [tuned, untouched] = [(await kube.createNamespace('once-np', { tenants })).metadata!.name!, (await kube.createNamespace('once-np', { tenants })).metadata!.name!];
    const template = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: policyName }, spec: { podSelector: {}, policyTypes: ['Ingress'] } };
    await kube.createDistribution(distributionOf(distributionName, template, { namespaceLabelSelector: { matchLabels: { tenants } } }, { syncPolicy: 'CreateOnce' }));
    await kube.waitForStatus(distributionName, (s) => s.desired === 2 && s.succeeded === 2);

    const copy = (await policyIn(tuned))!;
    copy.spec!.ingress = [{ ports: [{ port: 8080 }] }];
    await networking.replaceNamespacedNetworkPolicy({ namespace: tuned, name: policyName, body: copy });
    await fullPass(distributionName);
    await sleep(1_000);
    expect(portOf(await policyIn(tuned))).toBe(8080);

    await kube.labelNamespace(untouched, { tenants: null });
    await kube.labelNamespace(tuned, { tenants: null });
    await waitFor(async () => ((await policyIn(untouched)) === undefined ? true : undefined), { what: 'the untouched policy deleted' });
    const released = await waitFor(async () => {
      const found = await policyIn(tuned);
      return found !== undefined && !ours(found) ? found : undefined;
    }, { what: 'the tuned policy released' });
    expect(portOf(released)).toBe(8080);
    expect(released.metadata?.ownerReferences).toBeUndefined();
    await kube.waitForStatus(distributionName, (s) => s.desired === 0);
    await kube.deleteDistribution(distributionName);
  });
});
