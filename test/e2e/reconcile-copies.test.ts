// The reconciler against a real API server: copies appear, follow the template and the targets,
// and are put back when someone edits or deletes them.
import { describe, expect, it } from 'vitest';
import { ANNOTATION_FROM, ANNOTATION_HASH, LABEL_DISTRIBUTION, type Resource } from '../../src/domain/types.js';
import { apiserverMetrics } from '../control-plane/apiserver-metrics.js';
import { condition, configMapOf, distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName } from './support/cluster.js';

const { kube } = useReconcileSuite();

/** Three namespaces carrying a fresh label; returns the label value and the names. */
async function labelledNamespaces(count: number): Promise<{ team: string; names: string[] }> {
  const team = uniqueName('team');
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push((await kube.createNamespace('rc', { team })).metadata!.name!);
  return { team, names };
}

const hasData = (data: Record<string, string>) => (object: Resource | undefined) => JSON.stringify(object?.data) === JSON.stringify(data);

/** kube-apiserver's count of GETs of one ResourceDistribution in v1alpha1 it has answered (every client's): each converted from the stored v1beta1. */
async function v1alpha1Gets(): Promise<number> {
  const text = await apiserverMetrics(kube.kc);
  return text
    .split('\n')
    .filter((line) => line.startsWith('apiserver_request_total{') && line.includes('resource="resourcedistributions"') && line.includes('verb="GET"') && line.includes('version="v1alpha1"'))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('reconcile: copies', () => {
  it('creates a copy in every target namespace and reports status with six conditions, then Ready and Stalled', async () => {
    const { team, names } = await labelledNamespaces(3);
    const name = uniqueName('rd-create');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));

    for (const ns of names) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined);
      expect(copy?.data).toEqual({ a: '1' });
      expect(copy?.metadata.annotations?.[ANNOTATION_FROM]).toBe(name);
      expect(copy?.metadata.annotations?.[ANNOTATION_HASH]).toMatch(/^[0-9a-f]{64}$/);
      expect(copy?.metadata.labels?.[LABEL_DISTRIBUTION]).toBe(name);
      expect(copy?.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'ResourceDistribution', name, controller: true, blockOwnerDeletion: true }),
      ]);
    }
    const rd = await kube.waitForStatus(name, (s) => s.succeeded === 3);
    expect(rd.status).toMatchObject({ desired: 3, succeeded: 3, failed: 0, observedGeneration: 1 });
    expect(rd.status?.conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['GetResourceFailed', 'False', 'Succeeded'],
      ['CreateResourceFailed', 'False', 'Succeeded'],
      ['UpdateResourceFailed', 'False', 'Succeeded'],
      ['DeleteResourceFailed', 'False', 'Succeeded'],
      ['ConflictOccurred', 'False', 'Succeeded'],
      ['NamespaceNotExists', 'False', 'Succeeded'],
      ['Ready', 'True', 'Synced'],
      ['Stalled', 'False', 'Succeeded'],
    ]);
  });

  it('names the distribution in the version the garbage collector watches: new copies cost no read of it', async () => {
    // An owner reference in another version than the one discovery prefers makes the garbage
    // collector GET the owner in that version once per new dependent, each GET converted by the webhook.
    const { team, names } = await labelledNamespaces(12);
    const name = uniqueName('rd-owner');
    const before = await v1alpha1Gets();
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    for (const ns of names) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined);
      expect(copy?.metadata.ownerReferences?.[0]?.apiVersion).toBe('apps.kruise.io/v1beta1');
    }
    // The collector verifies a dependent within moments of seeing it.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(await v1alpha1Gets()).toBe(before);
  });

  it('updates every copy when spec.resource changes (data, template labels and annotations)', async () => {
    const { team, names } = await labelledNamespaces(2);
    const name = uniqueName('rd-update');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.succeeded === 2);

    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource = configMapOf('settings', { a: '2', b: '3' }, { labels: { tier: 'gold' }, annotations: { note: 'v2' } });
    });

    for (const ns of names) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'settings', hasData({ a: '2', b: '3' }));
      expect(copy?.metadata.labels).toMatchObject({ tier: 'gold', [LABEL_DISTRIBUTION]: name });
      expect(copy?.metadata.annotations).toMatchObject({ note: 'v2' });
    }
    await kube.waitForStatus(name, (s) => s.observedGeneration === 2 && s.succeeded === 2);
  });

  it('drops from every copy the template labels and annotations it no longer has, keeping those others added', async () => {
    const { team, names } = await labelledNamespaces(2);
    const name = uniqueName('rd-drop');
    const template = (metadata: Resource['metadata']): Resource => configMapOf('settings', { a: '1' }, metadata);
    await kube.createDistribution(distributionOf(name, template({ labels: { tier: 'gold', app: 'web' }, annotations: { note: 'v1' } }), { namespaceLabelSelector: { matchLabels: { team } } }));
    for (const ns of names) {
      const copy = (await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.metadata.labels?.tier === 'gold'))!;
      await kube.put({ ...copy, metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, mine: 'yes' }, annotations: { ...copy.metadata.annotations, theirs: 'x' } } });
    }

    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource = template({ labels: { app: 'web' } });
    });
    const later = (await kube.createNamespace('rc', { team })).metadata!.name!;

    const copies: Resource[] = [];
    for (const ns of names) copies.push((await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.metadata.labels?.tier === undefined))!);
    for (const copy of copies) {
      expect(copy.metadata.labels).toEqual({ app: 'web', mine: 'yes', [LABEL_DISTRIBUTION]: name });
      expect(copy.metadata.annotations).not.toHaveProperty('note');
      expect(copy.metadata.annotations).toMatchObject({ theirs: 'x' });
    }
    const fresh = (await kube.waitForObject('ConfigMap', later, 'settings', (o) => o !== undefined))!;
    expect(fresh.metadata.labels).toEqual({ app: 'web', [LABEL_DISTRIBUTION]: name });
    expect(fresh.metadata.annotations).not.toHaveProperty('note');
    await kube.waitForStatus(name, (s) => s.observedGeneration === 2 && s.desired === 3 && s.succeeded === 3);
  });

  it('removes copies from namespaces no longer targeted, and never touches foreign objects there', async () => {
    const { team, names } = await labelledNamespaces(2);
    const [keep, drop] = names as [string, string];
    const other = (await kube.createNamespace('rc-foreign')).metadata!.name!;
    const foreignObject = await kube.put(configMapOf('settings', { theirs: 'x' }, { namespace: other }));
    const name = uniqueName('rd-narrow');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.succeeded === 2);

    await kube.updateDistribution(name, (rd) => {
      rd.spec.targets = { excludedNamespaces: { list: [{ name: drop }] }, namespaceLabelSelector: { matchLabels: { team } } };
    });

    await kube.waitForObject('ConfigMap', drop, 'settings', (o) => o === undefined);
    await kube.waitForStatus(name, (s) => s.desired === 1 && s.succeeded === 1);
    expect((await kube.get('ConfigMap', keep, 'settings'))?.data).toEqual({ a: '1' });
    expect(await kube.get('ConfigMap', other, 'settings')).toMatchObject({ data: { theirs: 'x' }, metadata: { uid: foreignObject.metadata.uid } });
  });

  it('follows namespace labels both ways', async () => {
    const team = uniqueName('team');
    const ns = (await kube.createNamespace('rc-labels')).metadata!.name!;
    const name = uniqueName('rd-labels');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    await kube.waitForStatus(name, (s) => s.desired === 0);

    await kube.labelNamespace(ns, { team });
    await kube.waitForObject('ConfigMap', ns, 'settings', hasData({ a: '1' }));
    await kube.waitForStatus(name, (s) => s.desired === 1 && s.succeeded === 1);

    await kube.labelNamespace(ns, { team: null });
    await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o === undefined);
    await kube.waitForStatus(name, (s) => s.desired === 0);
  });

  it('reverts a copy edited by hand, keeping labels others added', async () => {
    const { team, names } = await labelledNamespaces(1);
    const ns = names[0]!;
    const name = uniqueName('rd-drift');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    const copy = (await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined))!;

    await kube.put({ ...copy, data: { a: 'edited', extra: 'x' }, metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, mine: 'yes' } } });

    const repaired = await kube.waitForObject('ConfigMap', ns, 'settings', hasData({ a: '1' }));
    expect(repaired?.metadata.uid).toBe(copy.metadata.uid);
    expect(repaired?.metadata.labels).toMatchObject({ mine: 'yes' });
  });

  it('puts back the label of a copy someone removed it from (the label-filtered watch reports it as deleted)', async () => {
    const { team, names } = await labelledNamespaces(1);
    const ns = names[0]!;
    const name = uniqueName('rd-unlabelled');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    const copy = (await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined))!;
    const labels = { ...copy.metadata.labels };
    delete labels[LABEL_DISTRIBUTION];

    await kube.put({ ...copy, metadata: { ...copy.metadata, labels } });

    const relabelled = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.metadata.labels?.[LABEL_DISTRIBUTION] === name);
    expect(relabelled?.metadata.uid).toBe(copy.metadata.uid);
    expect(relabelled?.data).toEqual({ a: '1' });
  });

  it('recreates a copy deleted by hand', async () => {
    const { team, names } = await labelledNamespaces(1);
    const ns = names[0]!;
    const name = uniqueName('rd-deleted');
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    const copy = (await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined))!;

    await kube.remove('ConfigMap', ns, 'settings');

    const again = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined && o.metadata.uid !== copy.metadata.uid);
    expect(again?.data).toEqual({ a: '1' });
  });

  it('recreates a copy whose Secret type changed (new uid)', async () => {
    const { team, names } = await labelledNamespaces(1);
    const ns = names[0]!;
    const name = uniqueName('rd-type');
    const secret = (type: string, data: Record<string, string>): Resource => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, type, data });
    await kube.createDistribution(distributionOf(name, secret('Opaque', { token: 'dA==' }), { namespaceLabelSelector: { matchLabels: { team } } }));
    const before = (await kube.waitForObject('Secret', ns, 'creds', (o) => o !== undefined))!;

    await kube.updateDistribution(name, (rd) => {
      rd.spec.resource = secret('kubernetes.io/basic-auth', { username: 'dQ==', password: 'cA==' });
    });

    const after = await kube.waitForObject('Secret', ns, 'creds', (o) => o?.type === 'kubernetes.io/basic-auth');
    expect(after?.metadata.uid).not.toBe(before.metadata.uid);
    expect(after?.data).toEqual({ username: 'dQ==', password: 'cA==' });
    const rd = await kube.waitForStatus(name, (s) => s.observedGeneration === 2);
    expect(condition(rd, 'UpdateResourceFailed')?.status).toBe('False');
  });
});
