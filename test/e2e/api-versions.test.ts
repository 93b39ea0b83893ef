// ResourceDistribution in both served versions, against the real API server: v1beta1 stored,
// v1alpha1 converted by the product's conversion webhook. A distribution written in either is read
// in either, in that version's words (namespaceSelector / namespaceLabelSelector, failedNamespaces
// / failedNamespace); admission speaks the author's version; kubectl gets and explains both. And
// while no process serves conversion: what still works (everything in v1beta1, copies included),
// what fails (v1alpha1 reads and writes), and that it all comes back with the next process.
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishConversion } from '../../src/k8s/crd-conversion.js';
import { GROUP, PLURAL } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import type { RunningController } from '../../src/reconcile/controller.js';
import { kubeClientOf, connectionOf } from '../kube-client.js';
import { startInProcessController } from './fixtures/in-process.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { run } from './support/tools.js';

const kc = loadKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const created = { distributions: [] as string[], namespaces: [] as string[] };
let server: RunningServer | undefined;
let metrics: Metrics;

type Object = Record<string, unknown> & { metadata: { name: string }; spec?: Record<string, unknown>; status?: { conditions?: Record<string, unknown>[] } };

const configMap = (name: string): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { color: 'blue' } });

async function create(version: string, name: string, targets: object): Promise<Object> {
  created.distributions.push(name);
  const body = { apiVersion: `${GROUP}/${version}`, kind: 'ResourceDistribution', metadata: { name }, spec: { resource: configMap(name), targets } };
  return (await custom.createClusterCustomObject({ group: GROUP, version, plural: PLURAL, body })) as Object;
}

async function read(version: string, name: string): Promise<Object> {
  return (await custom.getClusterCustomObject({ group: GROUP, version, plural: PLURAL, name })) as Object;
}

async function namespace(labels: Record<string, string> = {}): Promise<string> {
  const name = uniqueName('versions');
  created.namespaces.push(name);
  await core.createNamespace({ body: { metadata: { name, labels } } });
  return name;
}

async function copyIn(ns: string, name: string): Promise<boolean> {
  return core.readNamespacedConfigMap({ name, namespace: ns }).then(
    () => true,
    () => false,
  );
}

/** The product, serving admission and the CRD's conversion. */
async function startProduct(): Promise<RunningServer> {
  metrics = createMetrics();
  const started = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env: { RD_REGISTER_CONVERSION: 'true' },
    overrides: { webhookNames: { distributions: uniqueName('e2e-versions-distributions'), namespaces: uniqueName('e2e-versions-namespaces') }, shutdownDelayMs: 0 },
  });
  // A new webhook configuration takes effect after a moment: wait until an invalid v1beta1 object is refused.
  await waitFor(
    async () => {
      const invalid = { apiVersion: `${GROUP}/v1beta1`, kind: 'ResourceDistribution', metadata: { name: uniqueName('marker') }, spec: { resource: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } }, targets: {} } };
      const refused = await rejection(custom.createClusterCustomObject({ group: GROUP, version: 'v1beta1', plural: PLURAL, body: invalid, dryRun: 'All' })).catch(() => undefined);
      return refused?.code === 422 ? true : undefined;
    },
    { what: 'the distribution webhook', timeoutMs: 30_000 },
  );
  return started;
}

function conversions(): Promise<number> {
  return metrics.admissionRequests.get().then((m) => m.values.filter((v) => v.labels.webhook === 'conversion' && v.labels.decision === 'converted').reduce((sum, v) => sum + v.value, 0));
}

beforeAll(async () => {
  server = await startProduct();
});

afterAll(async () => {
  await server?.stop();
  for (const name of created.distributions) await custom.deleteClusterCustomObject({ group: GROUP, version: 'v1beta1', plural: PLURAL, name }).catch(() => undefined);
  for (const name of created.namespaces) await core.deleteNamespace({ name }).catch(() => undefined);
  // The run's own conversion webhook again, for the files after this one.
  const client = kubeClientOf(kc);
  const { url, caPem } = inject('conversion');
  await publishConversion(client, { url }, caPem).finally(() => client.close());
});

describe('both served versions', () => {
  it('a v1beta1 distribution selects by namespaceSelector; read in v1alpha1 it says namespaceLabelSelector and failedNamespace', async () => {
    const label = uniqueName('team');
    const selected = await namespace({ team: label });
    const missing = uniqueName('absent');
    const name = uniqueName('beta');
    await create('v1beta1', name, { namespaceSelector: { matchLabels: { team: label } }, includedNamespaces: { list: [{ name: missing }] } });

    await waitFor(async () => ((await copyIn(selected, name)) ? true : undefined), { what: `copy in ${selected}` });
    const beta = await waitFor(async () => {
      const rd = await read('v1beta1', name);
      return rd.status?.conditions?.find((c) => c.type === 'NamespaceNotExists' && c.status === 'True') ? rd : undefined;
    }, { what: 'NamespaceNotExists' });
    expect(beta.spec?.targets).toEqual({ namespaceSelector: { matchLabels: { team: label } }, includedNamespaces: { list: [{ name: missing }] } });
    expect(beta.status?.conditions?.find((c) => c.type === 'NamespaceNotExists')).toMatchObject({ failedNamespaces: [missing] });
    expect(JSON.stringify(beta)).not.toContain('"failedNamespace"');

    const alpha = await read('v1alpha1', name);
    expect(alpha.apiVersion).toBe(`${GROUP}/v1alpha1`);
    expect(alpha.spec?.targets).toEqual({ namespaceLabelSelector: { matchLabels: { team: label } }, includedNamespaces: { list: [{ name: missing }] } });
    expect(alpha.status?.conditions?.find((c) => c.type === 'NamespaceNotExists')).toMatchObject({ failedNamespace: [missing] });
    expect(JSON.stringify(alpha)).not.toContain('failedNamespaces');
    expect(alpha.metadata).toEqual(beta.metadata);
  });

  it('a v1alpha1 distribution is stored as v1beta1 and read in either; the conversions are the product\'s', async () => {
    const label = uniqueName('team');
    const selected = await namespace({ team: label });
    const name = uniqueName('alpha');
    const before = await conversions();
    await create('v1alpha1', name, { namespaceLabelSelector: { matchLabels: { team: label } } });
    await waitFor(async () => ((await copyIn(selected, name)) ? true : undefined), { what: `copy in ${selected}` });
    expect((await read('v1beta1', name)).spec?.targets).toEqual({ namespaceSelector: { matchLabels: { team: label } } });
    expect((await read('v1alpha1', name)).spec?.targets).toEqual({ namespaceLabelSelector: { matchLabels: { team: label } } });
    expect(await conversions()).toBeGreaterThan(before);
    const crd = JSON.parse((await run('kubectl', ['get', 'crd', `${PLURAL}.${GROUP}`, '-o', 'json'])).stdout) as { status: { storedVersions: string[] } };
    expect(crd.status.storedVersions).toContain('v1beta1');
  });

  it('admission names the field as the author wrote it', async () => {
    const body = (version: string, key: string): object => ({
      apiVersion: `${GROUP}/${version}`,
      kind: 'ResourceDistribution',
      metadata: { name: uniqueName('bad-selector') },
      spec: { resource: configMap('x'), targets: { [key]: { matchExpressions: [{ key: 'env', operator: 'Near', values: ['a'] }] } } },
    });
    const beta = await rejection(custom.createClusterCustomObject({ group: GROUP, version: 'v1beta1', plural: PLURAL, body: body('v1beta1', 'namespaceSelector'), dryRun: 'All' }));
    const alpha = await rejection(custom.createClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: PLURAL, body: body('v1alpha1', 'namespaceLabelSelector'), dryRun: 'All' }));
    console.log(`v1beta1: ${beta.message}\nv1alpha1: ${alpha.message}`);
    expect(beta.message).toContain('spec.targets.namespaceSelector.matchExpressions[0].operator');
    expect(beta.message).not.toContain('namespaceLabelSelector');
    expect(alpha.message).toContain('spec.targets.namespaceLabelSelector.matchExpressions[0].operator');
  });

  it('kubectl gets both versions with the printer columns and the short name, and explains both', async () => {
    const name = uniqueName('columns');
    await create('v1beta1', name, { includedNamespaces: { list: [{ name: await namespace() }] } });
    for (const resource of [`${PLURAL}.v1beta1.${GROUP}`, `${PLURAL}.v1alpha1.${GROUP}`, 'distributor']) {
      const table = (await run('kubectl', ['get', resource, name])).stdout;
      expect(table.split('\n')[0]?.split(/\s+/)).toEqual(['NAME', 'TOTAL', 'SUCCEED', 'FAILED', 'AGE']);
    }
    const beta = (await run('kubectl', ['explain', `${PLURAL}.spec.targets`, `--api-version=${GROUP}/v1beta1`])).stdout;
    const alpha = (await run('kubectl', ['explain', `${PLURAL}.spec.targets`, `--api-version=${GROUP}/v1alpha1`])).stdout;
    expect(beta).toContain('namespaceSelector');
    expect(beta).not.toContain('namespaceLabelSelector');
    expect(alpha).toContain('namespaceLabelSelector');
    expect((await run('kubectl', ['explain', `${PLURAL}.spec.writePolicy`, `--api-version=${GROUP}/v1beta1`])).stdout).toContain('overwrite');
  });
});

describe('while no process serves conversion', () => {
  let controller: RunningController | undefined;
  afterAll(async () => controller?.stop());

  it('v1beta1 works, copies keep coming, v1alpha1 fails; the next process brings v1alpha1 back', async () => {
    const label = uniqueName('team');
    const first = await namespace({ team: label });
    const name = uniqueName('down');
    await create('v1alpha1', name, { namespaceLabelSelector: { matchLabels: { team: label } } });
    await waitFor(async () => ((await copyIn(first, name)) ? true : undefined), { what: `copy in ${first}` });

    await server?.stop();
    server = undefined;
    // A controller alone (reads and writes v1beta1), as the leader of a cluster whose webhook listener is down would be.
    controller = await startInProcessController(kc);

    const refusedRead = await rejection(read('v1alpha1', name));
    console.log(`v1alpha1 read without conversion: HTTP ${refusedRead.code}: ${refusedRead.message}`);
    expect(refusedRead.code).toBe(500);
    expect(refusedRead.message).toMatch(/conversion webhook/);
    expect((await read('v1beta1', name)).spec?.targets).toEqual({ namespaceSelector: { matchLabels: { team: label } } });
    const refusedCreate = await rejection(create('v1alpha1', uniqueName('down-alpha'), { namespaceLabelSelector: { matchLabels: { team: label } } }));
    expect(refusedCreate.code).toBe(500);
    expect(refusedCreate.message).toMatch(/conversion webhook/);

    // Still distributed: a new namespace, and a new distribution written in v1beta1.
    const second = await namespace({ team: label });
    const beta = uniqueName('down-beta');
    await create('v1beta1', beta, { namespaceSelector: { matchLabels: { team: label } } });
    await waitFor(async () => ((await copyIn(second, name)) && (await copyIn(second, beta)) && (await copyIn(first, beta)) ? true : undefined), { what: 'copies while conversion is down' });
    const listed = (await run('kubectl', ['get', `${PLURAL}.v1beta1.${GROUP}`, name, beta])).stdout;
    expect(listed).toContain(beta);

    server = await startProduct();
    expect((await read('v1alpha1', name)).spec?.targets).toEqual({ namespaceLabelSelector: { matchLabels: { team: label } } });
    expect((await read('v1alpha1', beta)).spec?.targets).toEqual({ namespaceLabelSelector: { matchLabels: { team: label } } });
  });
});
