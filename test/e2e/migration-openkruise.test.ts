// Migration from a running OpenKruise v1.9.0, as a user does it: kruise-manager (built from its Go
// module, test/tools/kruise-manager/) runs with ResourceDistributionGate on and has made its
// copies. Its CRD, as that module holds it, serves v1alpha1 and v1beta1 and stores v1beta1, with
// kruise-manager's own conversion webhook: status.storedVersions holds v1beta1. It is stopped, its
// webhooks removed, our CRD put over its CRD and the product started. Every copy is kept (same
// uid) with at most one write; the statuses go on in our words; kubectl reads both versions. A
// CRD without v1beta1 (this project's before it served v1beta1) is refused there; ours is not.
// On a control plane of its own: OpenKruise's webhooks and CRD are not for the shared one.
import { readFile } from 'node:fs/promises';
import { CoreV1Api, CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL } from '../../src/domain/types.js';
import { DISTRIBUTION_CRD as RD_CRD } from '../../src/k8s/crd-conversion.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { waitForCrdEstablished, type ControlPlane } from '../control-plane/index.js';
import { startKruise, startKruisePlane } from '../control-plane/kruise-manager.js';
import type { ManagedProcess } from '../control-plane/processes.js';
import { connectionOf } from '../kube-client.js';
import { uniqueName, waitFor } from './support/cluster.js';
import { run, type ToolResult } from './support/tools.js';

let plane: ControlPlane | undefined;
let kruise: ManagedProcess | undefined;
let product: RunningServer | undefined;
let stopWatch: (() => void) | undefined;

const kubectl = (args: string[], input?: string): Promise<ToolResult> => {
  if (plane === undefined) throw new Error('no control plane');
  return run('kubectl', ['--kubeconfig', plane.kubeconfigPath, ...args], input === undefined ? {} : { input });
};

/** Every change to the ConfigMaps named `names`, per namespace/name, from now on. */
async function countWrites(kc: KubeConfig, names: Set<string>): Promise<{ writes: Map<string, string[]>; stop: () => void }> {
  const writes = new Map<string, string[]>();
  const request = await new Watch(kc).watch('/api/v1/configmaps', { allowWatchBookmarks: false }, (type: string, object: { metadata?: { name?: string; namespace?: string } }) => {
    const name = object.metadata?.name ?? '';
    if (!names.has(name)) return;
    const key = `${object.metadata?.namespace ?? ''}/${name}`;
    writes.set(key, [...(writes.get(key) ?? []), type]);
  }, () => undefined);
  return { writes, stop: () => request.abort() };
}

const configMap = (name: string): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { mode: 'kruise' } });

interface Copy {
  namespace: string;
  name: string;
  uid: string;
  ownerApiVersion: string | undefined;
}

async function copies(core: CoreV1Api, names: string[], namespaces: string[]): Promise<Copy[]> {
  const found: Copy[] = [];
  for (const namespace of namespaces) {
    for (const name of names) {
      const cm = await core.readNamespacedConfigMap({ name, namespace }).catch(() => undefined);
      if (cm !== undefined) found.push({ namespace, name, uid: cm.metadata?.uid ?? '', ownerApiVersion: cm.metadata?.ownerReferences?.[0]?.apiVersion });
    }
  }
  return found;
}

/** Our CRD over OpenKruise's, replaced whole as Helm's adoption of it does (its conversion address and caBundle go). */
async function replaceCrd(): Promise<void> {
  const live = JSON.parse((await kubectl(['get', 'crd', RD_CRD, '-o', 'json'])).stdout) as { metadata: { resourceVersion: string } };
  const ours = parse(await readFile(`webhook-config/crd/${RD_CRD}.yaml`, 'utf8')) as { metadata: Record<string, unknown> };
  await kubectl(['replace', '-f', '-'], JSON.stringify({ ...ours, metadata: { ...ours.metadata, resourceVersion: live.metadata.resourceVersion } }));
}

async function expectKeptWithOneWrite(core: CoreV1Api, before: Copy[], writes: Map<string, string[]>, names: string[], namespaces: string[]): Promise<void> {
  const after = await copies(core, names, namespaces);
  expect(after.map(({ namespace, name, uid }) => ({ namespace, name, uid }))).toEqual(before.map(({ namespace, name, uid }) => ({ namespace, name, uid })));
  const sample = await core.readNamespacedConfigMap({ name: before[0]?.name ?? '', namespace: before[0]?.namespace ?? '' });
  console.log(`a copy after the switch: labels ${JSON.stringify(sample.metadata?.labels)}, owner ${JSON.stringify(sample.metadata?.ownerReferences)}`);
  const perCopy = Object.fromEntries(before.map((copy) => [`${copy.namespace}/${copy.name}`, (writes.get(`${copy.namespace}/${copy.name}`) ?? []).filter((type) => type !== 'ADDED')]));
  console.log(`writes per copy during the switch: ${JSON.stringify(perCopy)}`);
  for (const events of Object.values(perCopy)) {
    expect(events.filter((type) => type === 'DELETED')).toEqual([]);
    expect(events.filter((type) => type === 'MODIFIED').length).toBeLessThanOrEqual(1);
  }
}

async function expectBothVersions(custom: CustomObjectsApi, names: string[], label: string): Promise<void> {
  const beta = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1beta1', plural: PLURAL, name: names[1] ?? '' })) as { spec: { targets: unknown }; status: { desired: number; succeeded: number } };
  // As OpenKruise stored it (its empty lists included).
  expect(beta.spec.targets).toMatchObject({ namespaceSelector: { matchLabels: { team: label } } });
  expect(beta.status).toMatchObject({ desired: 3, succeeded: 3 });
  const alpha = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: PLURAL, name: names[1] ?? '' })) as { spec: { targets: unknown } };
  expect(alpha.spec.targets).toMatchObject({ namespaceLabelSelector: { matchLabels: { team: label } } });
  expect(JSON.stringify(alpha.spec.targets)).not.toContain('namespaceSelector');
  for (const resource of [`${PLURAL}.v1beta1.${GROUP}`, `${PLURAL}.v1alpha1.${GROUP}`]) {
    const table = (await kubectl(['get', resource, ...names])).stdout;
    expect(table.split('\n')[0]?.split(/\s+/)).toEqual(['NAME', 'TOTAL', 'SUCCEED', 'FAILED', 'AGE']);
    for (const name of names) expect(table).toContain(name);
  }
}

beforeAll(async () => {
  plane = await startKruisePlane();
  kruise = await startKruise(plane.kubeconfigPath, plane.dir);
}, 900_000);

afterAll(async () => {
  stopWatch?.();
  await product?.stop();
  await kruise?.stop();
  await plane?.stop();
});

describe('migration from a running OpenKruise v1.9.0', () => {
  const names = [uniqueName('kruise-listed'), uniqueName('kruise-selected')];
  const label = uniqueName('team');
  const namespaces: string[] = [];
  let before: Copy[] = [];

  it("OpenKruise's manager distributes (v1beta1 stored, its own conversion webhook)", async () => {
    if (plane === undefined) throw new Error('no control plane');
    const core = plane.kubeConfig.makeApiClient(CoreV1Api);
    const custom = plane.kubeConfig.makeApiClient(CustomObjectsApi);
    for (let i = 0; i < 3; i++) {
      const name = uniqueName('migrate');
      namespaces.push(name);
      await core.createNamespace({ body: { metadata: { name, labels: { team: label } } } });
    }
    // Its webhook answers once its certificates are in place.
    await waitFor(
      async () => {
        const body = { apiVersion: `${GROUP}/v1alpha1`, kind: 'ResourceDistribution', metadata: { name: names[0] }, spec: { resource: configMap(names[0] ?? ''), targets: { includedNamespaces: { list: namespaces.slice(0, 2).map((name) => ({ name })) } } } };
        return custom.createClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: PLURAL, body }).then(() => true, () => undefined);
      },
      { what: "OpenKruise's webhook and the first distribution", timeoutMs: 180_000, intervalMs: 2_000 },
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\nkruise-manager log:\n${(await kruise?.tail(6_000)) ?? ''}`);
    });
    await custom.createClusterCustomObject({
      group: GROUP,
      version: 'v1alpha1',
      plural: PLURAL,
      body: { apiVersion: `${GROUP}/v1alpha1`, kind: 'ResourceDistribution', metadata: { name: names[1] }, spec: { resource: configMap(names[1] ?? ''), targets: { namespaceLabelSelector: { matchLabels: { team: label } } } } },
    });
    before = await waitFor(async () => {
      const found = await copies(core, names, namespaces);
      return found.length === 5 ? found : undefined;
    }, { what: "OpenKruise's copies", timeoutMs: 60_000 }).catch(async (error: unknown) => {
      throw new Error(`${String(error)}\nkruise-manager log:\n${(await kruise?.tail(8_000)) ?? ''}`);
    });
    console.log(`copies made by kruise-manager v1.9.0: ${String(before.length)}`);
    const status = await waitFor(async () => {
      const rd = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: PLURAL, name: names[1] ?? '' })) as { status?: { desired?: number; succeeded?: number } };
      return rd.status?.succeeded === 3 ? rd.status : undefined;
    }, { what: "OpenKruise's status" });
    expect(status).toMatchObject({ desired: 3, succeeded: 3 });
  }, 300_000);

  it('after the switch, every copy is kept (same uid) with at most one write, statuses go on, kubectl reads both versions', async () => {
    if (plane === undefined) throw new Error('no control plane');
    const core = plane.kubeConfig.makeApiClient(CoreV1Api);
    const watched = await countWrites(plane.kubeConfig, new Set(names));
    stopWatch = watched.stop;
    // The documented steps: OpenKruise's controller stopped, its webhook for distributions removed, our CRD over its CRD.
    await kruise?.stop(10_000);
    await kubectl(['delete', 'validatingwebhookconfiguration', 'kruise-validating-webhook-configuration']);
    await kubectl(['delete', 'mutatingwebhookconfiguration', 'kruise-mutating-webhook-configuration']);
    await replaceCrd();
    await waitForCrdEstablished(plane.kubeConfig, RD_CRD);
    const metrics = createMetrics();
    product = await startLocalServer({
      connection: connectionOf(plane.kubeConfig),
      metrics,
      env: { RD_REGISTER_CONVERSION: 'true' },
      overrides: { shutdownDelayMs: 0 },
    });
    const custom = plane.kubeConfig.makeApiClient(CustomObjectsApi);
    for (const name of names) {
      await waitFor(async () => {
        const rd = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1beta1', plural: PLURAL, name })) as { status?: { conditions?: { type: string; status: string }[] } };
        return rd.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
      }, { what: `our status of ${name}`, timeoutMs: 60_000 });
    }
    // A sweep's worth of time for anything else to happen.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await expectKeptWithOneWrite(core, before, watched.writes, names, namespaces);
    const updates = (await metrics.apiRequests.get()).values.filter((v) => v.labels.resource === 'configmaps' && ['create', 'update', 'delete'].includes(String(v.labels.verb)));
    console.log(`the product's ConfigMap writes: ${JSON.stringify(updates.map((v) => [v.labels.verb, v.value]))}`);
    await expectBothVersions(custom, names, label);
  });

  it('with v1beta1 in status.storedVersions, a CRD without v1beta1 is refused and ours is applied again', async () => {
    const crd = JSON.parse((await kubectl(['get', 'crd', RD_CRD, '-o', 'json'])).stdout) as { status: { storedVersions: string[] } };
    console.log(`status.storedVersions after the switch: ${JSON.stringify(crd.status.storedVersions)}`);
    expect(crd.status.storedVersions).toContain('v1beta1');
    const ours = parse(await readFile(`webhook-config/crd/${RD_CRD}.yaml`, 'utf8')) as { spec: { versions: { name: string; storage: boolean }[]; conversion?: unknown } };
    const alphaOnly = structuredClone(ours);
    alphaOnly.spec.versions = alphaOnly.spec.versions.filter((v) => v.name === 'v1alpha1').map((v) => ({ ...v, storage: true }));
    delete alphaOnly.spec.conversion;
    const refused = await kubectl(['apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', '-'], stringify(alphaOnly)).then(
      () => '',
      (error: unknown) => String((error as { stderr?: string }).stderr ?? error),
    );
    expect(refused).toMatch(/storedVersions\[\d\]: Invalid value: "v1beta1": missing from spec.versions/);
    await replaceCrd();
  });
});
