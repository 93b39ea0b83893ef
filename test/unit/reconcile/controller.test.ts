import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../../src/domain/clock.js';
import { toMicroTime } from '../../../src/k8s/leader-election.js';
import { createMetrics } from '../../../src/metrics.js';
import { createController, type RunningController } from '../../../src/reconcile/controller.js';
import { testSettings } from '../../e2e/fixtures/test-settings.js';
import { distribution } from '../builders.js';
import { FakeApiError, FakeCluster } from './fake-cluster.js';
import { silentLog } from './harness.js';

const running: RunningController[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function start(cluster: FakeCluster, identity: string): Promise<RunningController> {
  const controller = createController({
    clusterApi: cluster.api,
    log: silentLog,
    clock: systemClock,
    metrics: createMetrics(),
    settings: testSettings({ identity, leaseName: 'leader' }),
  });
  running.push(controller);
  await controller.start();
  return controller;
}

describe('controller (over the in-memory cluster)', () => {
  it('reconciles what its watches report, from distribution, namespace and copy changes alike', async () => {
    const cluster = new FakeCluster();
    cluster.putNamespace('ns-a', { team: 'a' });
    const controller = await start(cluster, 'one');
    await until(() => controller.isLeader());

    cluster.putDistribution(distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
    await until(() => cluster.object('ConfigMap', 'ns-a', 'settings') !== undefined);

    cluster.putNamespace('ns-b', { team: 'a' });
    await until(() => cluster.object('ConfigMap', 'ns-b', 'settings') !== undefined);

    cluster.putNamespace('ns-a', {});
    await until(() => cluster.object('ConfigMap', 'ns-a', 'settings') === undefined);

    const copy = cluster.object('ConfigMap', 'ns-b', 'settings')!;
    cluster.putObject({ ...copy, data: { a: 'edited' } });
    await until(() => cluster.object('ConfigMap', 'ns-b', 'settings')?.data?.a === '1');
    await controller.idle();
    expect(cluster.distributions.get('shared')?.status).toMatchObject({ desired: 1, succeeded: 1 });
  });

  it('follows a copy whose distribution label was removed and put back (the watch reported it DELETED, then ADDED)', async () => {
    const cluster = new FakeCluster();
    cluster.putNamespace('ns-a', { team: 'a' });
    const controller = await start(cluster, 'one');
    await until(() => controller.isLeader());
    cluster.putDistribution(distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
    await until(() => cluster.object('ConfigMap', 'ns-a', 'settings') !== undefined);
    const copy = cluster.object('ConfigMap', 'ns-a', 'settings')!;
    const { ['resource-distributor.io/distribution']: _removed, ...labels } = copy.metadata.labels ?? {};

    cluster.putObject({ ...copy, metadata: { ...copy.metadata, labels } });
    await until(() => cluster.object('ConfigMap', 'ns-a', 'settings')?.metadata.labels?.['resource-distributor.io/distribution'] === 'shared');
    await controller.idle();

    cluster.removeObject('ConfigMap', 'ns-a', 'settings');
    await until(() => cluster.object('ConfigMap', 'ns-a', 'settings') !== undefined);
    expect(cluster.object('ConfigMap', 'ns-a', 'settings')?.metadata.uid).not.toBe(copy.metadata.uid);
    cluster.putNamespace('ns-a', {});
    await until(() => cluster.object('ConfigMap', 'ns-a', 'settings') === undefined);
  });

  it('writes the copies of a new namespace once: the generator writes, the reconcile after it finds them in sync', async () => {
    const cluster = new FakeCluster();
    for (const name of ['one', 'two', 'three']) cluster.putDistribution(distribution(name).configMap(name, { a: '1' }).matchLabels({ team: 'a' }).build());
    const controller = await start(cluster, 'one');
    await until(() => controller.isLeader());
    await controller.idle();
    controller.requests.reset();

    // Admitted before it exists (the webhook runs first); then the watch reports it.
    const created = cluster.putNamespace('ns-new', { team: 'a' }, false, true);
    controller.namespaceAdmitted({ name: 'ns-new', uid: created.metadata.uid ?? '' });
    cluster.putNamespace('ns-new', { team: 'a' });
    await until(() => ['one', 'two', 'three'].every((name) => cluster.object('ConfigMap', 'ns-new', name) !== undefined));
    await controller.idle();

    const tally = controller.requests.tally();
    expect(tally.failures).toEqual({});
    expect(tally.byRequest['create configmaps']).toBe(3);
    expect(tally.byRequest['get configmaps']).toBeUndefined();
  });

  it('answers namespaceExists from its cache (terminating counts as absent)', async () => {
    const cluster = new FakeCluster();
    cluster.putNamespace('live');
    cluster.putNamespace('going', {}, true);
    const controller = await start(cluster, 'one');
    expect([controller.namespaceExists('live'), controller.namespaceExists('going'), controller.namespaceExists('never')]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('stops reconciling as soon as it sees another replica holding the lease', async () => {
    const cluster = new FakeCluster();
    cluster.putNamespace('ns-a', { team: 'a' });
    const controller = await start(cluster, 'one');
    await until(() => controller.isLeader());
    const held = cluster.leases.get('default/leader')!;
    cluster.leases.set('default/leader', { ...held, spec: { ...held.spec, holderIdentity: 'two', renewTime: toMicroTime(new Date()) } });

    // One retry period (1 s), well before the renew deadline (3 s) would end it.
    await until(() => !controller.isLeader(), 1_500);
    cluster.putDistribution(distribution('late').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(cluster.object('ConfigMap', 'ns-a', 'settings')).toBeUndefined();
  });

  it('leaves no timer behind once stopped (nothing fires after stop, nothing holds the process)', async () => {
    vi.useFakeTimers();
    try {
      const cluster = new FakeCluster();
      cluster.putNamespace('ns-a', { team: 'a' });
      const controller = await start(cluster, 'one');
      await vi.advanceTimersByTimeAsync(100);
      expect(controller.isLeader()).toBe(true);
      // A namespace that never appears keeps the generator waiting; a failing write leaves a retry pending.
      controller.namespaceAdmitted({ name: 'never', uid: 'uid-never' });
      cluster.failWhen((method) => (method === 'createCopy' ? new FakeApiError(503, 'ServiceUnavailable') : undefined));
      cluster.putDistribution(distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
      await vi.advanceTimersByTimeAsync(100);
      expect(vi.getTimerCount()).toBeGreaterThan(0);

      await controller.stop();

      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('lets one replica of two lead; the other takes over when it stops', async () => {
    const cluster = new FakeCluster();
    const first = await start(cluster, 'one');
    await until(() => first.isLeader());
    const second = await start(cluster, 'two');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(second.isLeader()).toBe(false);

    await first.stop();
    await until(() => second.isLeader(), 3_000);
    expect(cluster.leases.get('default/leader')?.spec.holderIdentity).toBe('two');
  });
});
