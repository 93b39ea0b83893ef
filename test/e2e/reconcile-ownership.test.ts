// Ownership against a real API server: what is not ours is reported and left alone, unless the
// writePolicy or the owner's consent (adopt annotation) says otherwise.
import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, LABEL_DISTRIBUTION, type WritePolicy } from '../../src/domain/types.js';
import { condition, configMapOf, distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName, waitFor } from './support/cluster.js';

const { kube } = useReconcileSuite();

async function namespaces(count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push((await kube.createNamespace('ro')).metadata!.name!);
  return names;
}

async function distribute(names: string[], writePolicy?: WritePolicy): Promise<string> {
  const name = uniqueName('rd-own');
  const extra = writePolicy ? { writePolicy } : {};
  await kube.createDistribution(
    distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: names.map((n) => ({ name: n })) } }, extra),
  );
  return name;
}

describe('reconcile: ownership', () => {
  it('reports a pre-existing foreign object under ConflictOccurred, naming the namespace, and leaves it alone', async () => {
    const [free, taken] = (await namespaces(2)) as [string, string];
    const theirs = await kube.put(configMapOf('settings', { theirs: 'x' }, { namespace: taken }));
    const name = await distribute([free, taken]);

    const rd = await kube.waitForStatus(name, (s) => s.succeeded === 1 && s.failed === 1);
    expect(condition(rd, 'ConflictOccurred')).toMatchObject({ status: 'True', reason: 'ResourceConflict', failedNamespace: [taken] });
    expect(condition(rd, 'ConflictOccurred')?.message).toContain(taken);
    expect(await kube.get('ConfigMap', taken, 'settings')).toMatchObject({
      data: { theirs: 'x' },
      metadata: { uid: theirs.metadata.uid, resourceVersion: theirs.metadata.resourceVersion },
    });
    expect((await kube.get('ConfigMap', free, 'settings'))?.data).toEqual({ a: '1' });
  });

  it('records a Warning event about the conflict on the distribution, without object data', async () => {
    const [taken] = (await namespaces(1)) as [string];
    await kube.put(configMapOf('settings', { secretish: 'do-not-leak' }, { namespace: taken }));
    const name = await distribute([taken]);
    const core = kube.kc.makeApiClient(CoreV1Api);

    const events = await waitFor(
      async () => {
        const list = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name}` });
        return list.items.length > 0 ? list.items : undefined;
      },
      { what: `events about ${name}` },
    );
    expect(events.map((e) => [e.type, e.reason, e.involvedObject.kind])).toEqual([['Warning', 'ResourceConflict', 'ResourceDistribution']]);
    expect(events[0]?.message).toContain(taken);
    expect(events[0]?.message).not.toContain('do-not-leak');
  });

  it('treats a copy whose from annotation was changed as a conflict: left alone and reported', async () => {
    const [ns] = (await namespaces(1)) as [string];
    const name = await distribute([ns]);
    const copy = (await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined))!;
    await kube.waitForStatus(name, (s) => s.succeeded === 1);

    const edited = await kube.put({
      ...copy,
      data: { a: 'mine now' },
      metadata: { ...copy.metadata, annotations: { ...copy.metadata.annotations, [ANNOTATION_FROM]: 'someone-else' } },
    });

    const rd = await kube.waitForStatus(name, (s) => s.failed === 1);
    expect(condition(rd, 'ConflictOccurred')).toMatchObject({ status: 'True', failedNamespace: [ns] });
    expect(await kube.get('ConfigMap', ns, 'settings')).toMatchObject({
      data: { a: 'mine now' },
      metadata: { resourceVersion: edited.metadata.resourceVersion },
    });
  });

  it('adopts an object annotated for this distribution in place (same uid)', async () => {
    const [ns] = (await namespaces(1)) as [string];
    const name = uniqueName('rd-adopt');
    const before = await kube.put(configMapOf('settings', { old: 'x' }, { namespace: ns, annotations: { [ANNOTATION_ADOPT]: name } }));
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: [{ name: ns }] } }));

    const after = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.metadata.annotations?.[ANNOTATION_FROM] === name);
    expect(after?.metadata.uid).toBe(before.metadata.uid);
    expect(after?.data).toEqual({ a: '1' });
    expect(after?.metadata.annotations?.[ANNOTATION_ADOPT]).toBeUndefined();
    await kube.waitForStatus(name, (s) => s.succeeded === 1);
  });

  it('adopts an object handed over after the distribution exists at once when it is also labelled for it (the copies\' watch sees it)', async () => {
    const [ns] = (await namespaces(1)) as [string];
    const name = uniqueName('rd-adopt-later');
    const before = await kube.put(configMapOf('settings', { old: 'x' }, { namespace: ns }));
    await kube.createDistribution(distributionOf(name, configMapOf('settings', { a: '1' }), { includedNamespaces: { list: [{ name: ns }] } }));
    await kube.waitForStatus(name, (s) => s.conditions.some((c) => c.type === 'ConflictOccurred' && c.status === 'True'));

    const handedOver = Date.now();
    await kube.put({ ...before, metadata: { ...before.metadata, resourceVersion: undefined, annotations: { [ANNOTATION_ADOPT]: name }, labels: { [LABEL_DISTRIBUTION]: name } } });
    // Well before the next sweep (a minute here): an event, not the periodic pass.
    const after = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.metadata.annotations?.[ANNOTATION_FROM] === name, 10_000);
    console.log(`adoption after hand-over: ${Date.now() - handedOver} ms`);
    expect(after?.metadata.uid).toBe(before.metadata.uid);
    await kube.waitForStatus(name, (s) => s.succeeded === 1, 10_000);
  });

  it('with writePolicy overwrite, takes a foreign object over', async () => {
    const [ns] = (await namespaces(1)) as [string];
    const before = await kube.put(configMapOf('settings', { theirs: 'x' }, { namespace: ns, labels: { app: 'theirs' } }));
    const name = await distribute([ns], 'overwrite');

    const after = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.metadata.annotations?.[ANNOTATION_FROM] === name);
    expect(after?.metadata.uid).toBe(before.metadata.uid);
    expect(after?.data).toEqual({ a: '1' });
    expect(after?.metadata.labels).toMatchObject({ app: 'theirs' });
    const rd = await kube.waitForStatus(name, (s) => s.succeeded === 1);
    expect(condition(rd, 'ConflictOccurred')?.status).toBe('False');
  });

  it('with writePolicy strict, writes nothing while any target has a conflict, then everything once it is gone', async () => {
    const [free, taken] = (await namespaces(2)) as [string, string];
    await kube.put(configMapOf('settings', { theirs: 'x' }, { namespace: taken }));
    const name = await distribute([free, taken], 'strict');

    const rd = await kube.waitForStatus(name, (s) => s.failed === 2);
    expect(condition(rd, 'ConflictOccurred')).toMatchObject({ status: 'True', failedNamespace: [free, taken].sort() });
    expect(await kube.get('ConfigMap', free, 'settings')).toBeUndefined();

    // The foreign object is not watched (it carries no label of ours): removing it is seen on the
    // next pass, which a change to the distribution triggers at once.
    await kube.remove('ConfigMap', taken, 'settings');
    await kube.updateDistribution(name, (d) => {
      d.metadata.annotations = { ...d.metadata.annotations, poke: '1' };
    });
    await kube.waitForStatus(name, (s) => s.succeeded === 2);
    expect((await kube.get('ConfigMap', free, 'settings'))?.data).toEqual({ a: '1' });
    expect((await kube.get('ConfigMap', taken, 'settings'))?.data).toEqual({ a: '1' });
  });
});
