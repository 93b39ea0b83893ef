import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/domain/clock.js';
import { createMetrics } from '../../../src/metrics.js';
import { createGenerator, type Generator } from '../../../src/reconcile/generator.js';
import type { Logger } from '../../../src/log.js';
import type { Resource } from '../../../src/domain/types.js';
import { distribution, foreign } from '../builders.js';
import { FakeApiError } from './fake-cluster.js';
import { recordingLog, silentLog, startHarness, WARN, type Harness } from './harness.js';

let h: Harness;
let generator: Generator;

afterEach(async () => {
  await generator?.stop();
  h?.caches.stop();
});

async function setup(log: Logger = silentLog, metrics = createMetrics()): Promise<void> {
  h = await startHarness();
  generator = createGenerator({
    api: h.requests.api,
    caches: h.caches,
    catalog: h.catalog,
    writer: h.writer,
    clock: systemClock,
    log,
    metrics,
    forbiddenNamespaces: [],
    parallelism: 4,
    waitTimeoutMs: 400,
    pollAfterMs: 150,
    maxPending: 50,
    updateSettleMs: 200,
  });
  h.listeners.push((change) => {
    if (change.resource === 'namespaces') generator.namespaceChanged(change.change.current?.info.name ?? '');
  });
  h.cluster.putDistribution(distribution('team-a').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
  h.cluster.putDistribution(distribution('team-b').configMap('other', { b: '1' }).matchLabels({ team: 'b' }).build());
}

describe('namespace generator', () => {
  it('waits for an admitted namespace to appear, then writes the copies of the distributions that target it', async () => {
    await setup();
    generator.namespaceAdmitted({ name: 'fresh', uid: 'uid-1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    h.cluster.putNamespace('fresh', { team: 'a' });
    await generator.idle();

    expect(h.cluster.object('ConfigMap', 'fresh', 'settings')?.data).toEqual({ a: '1' });
    expect(h.cluster.object('ConfigMap', 'fresh', 'other')).toBeUndefined();
    // A namespace that has just appeared is written to without reading it first.
    expect(h.requests.tally().byRequest['get configmaps']).toBeUndefined();
    // Status is the leader's business.
    expect(h.cluster.callsOf('patchDistributionStatus')).toBe(0);
  });

  it('gives up quietly when the namespace never appears', async () => {
    await setup();
    const started = Date.now();
    generator.namespaceAdmitted({ name: 'rejected', uid: 'uid-1' });
    await generator.idle();
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(h.requests.tally().writes).toBe(0);
  });

  it('bounds a flood of admitted namespaces that never appear: pending generations and reads alike', async () => {
    const metrics = createMetrics();
    await setup(silentLog, metrics);
    for (let i = 0; i < 2000; i++) generator.namespaceAdmitted({ name: `never-${i}`, uid: `uid-${i}` });
    await generator.idle();

    // 50 generations at most (the setting here), each asking the API server once.
    expect(h.requests.tally().byRequest['get namespaces']).toBe(50);
    expect((await metrics.generationSkipped.get()).values[0]?.value).toBe(1950);
    expect(h.requests.tally().writes).toBe(0);
  });

  it('ignores a namespace of the same name but another uid (deleted and recreated)', async () => {
    await setup();
    h.cluster.putNamespace('reused', { team: 'a' });
    generator.namespaceAdmitted({ name: 'reused', uid: 'some-older-uid' });
    await generator.idle();
    expect(h.cluster.object('ConfigMap', 'reused', 'settings')).toBeUndefined();
  });

  it('asks the API server when the cache does not see the namespace in time', async () => {
    await setup();
    const ns = h.cluster.putNamespace('unseen', { team: 'a' }, false, true);
    generator.namespaceAdmitted({ name: 'unseen', uid: ns.metadata.uid! });
    await generator.idle();
    expect(h.cluster.object('ConfigMap', 'unseen', 'settings')).toBeDefined();
    expect(h.requests.tally().byRequest['get namespaces']).toBeGreaterThanOrEqual(1);
  });

  it('goes through the ownership rules: a foreign object is left alone', async () => {
    await setup();
    h.cluster.putNamespace('taken', { team: 'a' }, false, true);
    const theirs = h.cluster.putObject(foreign('ConfigMap', 'settings', 'taken').build());
    generator.namespaceAdmitted({ name: 'taken', uid: h.cluster.namespaces.get('taken')!.metadata.uid! });
    await generator.idle();
    expect(h.cluster.object('ConfigMap', 'taken', 'settings')).toEqual(theirs);
  });

  it('takes a create lost to another writer as done: reads what was written, plans again, no warning', async () => {
    const { log, lines } = recordingLog();
    await setup(log);
    const ns = h.cluster.putNamespace('raced', { team: 'a' }, false, true);
    // The leader's reconcile creates the same copy first; this replica's cache has not seen it yet.
    h.cluster.failWhen((method, args) => {
      if (method !== 'createCopy' || h.cluster.object('ConfigMap', 'raced', 'settings')) return undefined;
      const copy = args[0] as Resource;
      h.cluster.copies.set(`ConfigMap/raced/settings`, { ...structuredClone(copy), metadata: { ...copy.metadata, uid: 'theirs', resourceVersion: '1' } });
      return new FakeApiError(409, 'AlreadyExists', 'configmaps "settings" already exists');
    });

    generator.namespaceAdmitted({ name: 'raced', uid: ns.metadata.uid! });
    await generator.idle();

    expect(h.cluster.object('ConfigMap', 'raced', 'settings')?.metadata.uid).toBe('theirs');
    // Create first (no GET before it), then one read of what the other writer left.
    expect(h.requests.tally().byRequest).toMatchObject({ 'create configmaps': 1, 'get configmaps': 1 });
    expect(h.requests.tally().writes).toBe(1);
    expect(lines.filter((line) => line.level >= WARN)).toEqual([]);
  });

  it('still warns about a write that failed for another reason than a race', async () => {
    const { log, lines } = recordingLog();
    await setup(log);
    const ns = h.cluster.putNamespace('locked', { team: 'a' }, false, true);
    h.cluster.failWhen((method) => (method === 'createCopy' ? new FakeApiError(403, 'Forbidden') : undefined));

    generator.namespaceAdmitted({ name: 'locked', uid: ns.metadata.uid! });
    await generator.idle();

    expect(lines.filter((line) => line.level >= WARN).map((line) => line.msg)).toEqual(['copy write failed']);
  });

  it('on an admitted update, writes for the labels it lands with', async () => {
    await setup();
    const ns = h.cluster.putNamespace('relabelled', { team: 'x' });
    generator.namespaceAdmitted({ name: 'relabelled', uid: ns.metadata.uid! });
    h.cluster.putNamespace('relabelled', { team: 'b' });
    await generator.idle();
    expect(h.cluster.object('ConfigMap', 'relabelled', 'other')?.data).toEqual({ b: '1' });
  });
});
