import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LeaseObject } from '../../../src/k8s/cluster-api.js';
import { LeaderElector, leaseStoreFromApi, toMicroTime, type LeaseStore } from '../../../src/k8s/leader-election.js';
import { FakeCluster } from './fake-cluster.js';
import { silentLog } from './harness.js';

const TIMING = { leaseDurationMs: 4_000, renewDeadlineMs: 3_000, retryPeriodMs: 1_000 };

/** A lease store over the cluster double, whose requests can be made to fail or hang. */
function flakyStore(cluster: FakeCluster) {
  const real = leaseStoreFromApi(cluster.api, 'ops', 'leader');
  let mode: 'ok' | 'fail' | 'hang' = 'ok';
  const gate = <T>(call: () => Promise<T>): Promise<T> => {
    if (mode === 'fail') return Promise.reject(new Error('connection refused'));
    if (mode === 'hang') return new Promise<T>(() => undefined);
    return call();
  };
  const store: LeaseStore = {
    get: () => gate(() => real.get()),
    create: (lease) => gate(() => real.create(lease)),
    replace: (lease) => gate(() => real.replace(lease)),
  };
  return { store, set: (next: typeof mode) => (mode = next) };
}

function elector(store: LeaseStore, identity: string) {
  const transitions: string[] = [];
  const instance = new LeaderElector({
    store,
    leaseName: 'leader',
    leaseNamespace: 'ops',
    identity,
    ...TIMING,
    clock: () => new Date(),
    log: silentLog,
    onStartedLeading: () => transitions.push('started'),
    onStoppedLeading: () => transitions.push('stopped'),
  });
  return { instance, transitions };
}

function lease(cluster: FakeCluster): LeaseObject | undefined {
  return cluster.leases.get('ops/leader');
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2024-05-01T10:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('LeaderElector', () => {
  it('creates the lease when absent and leads', async () => {
    const cluster = new FakeCluster();
    const a = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'a');
    a.instance.start();
    await vi.advanceTimersByTimeAsync(10);
    expect(a.instance.isLeader()).toBe(true);
    expect(a.transitions).toEqual(['started']);
    expect(lease(cluster)?.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 4, leaseTransitions: 0 });
    expect(lease(cluster)?.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('renews every retry period; a second candidate waits', async () => {
    const cluster = new FakeCluster();
    const a = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'a');
    const b = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'b');
    a.instance.start();
    await vi.advanceTimersByTimeAsync(10);
    b.instance.start();
    const firstRenew = lease(cluster)?.spec.renewTime;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(lease(cluster)?.spec.renewTime).not.toBe(firstRenew);
    expect(a.instance.isLeader()).toBe(true);
    expect(b.instance.isLeader()).toBe(false);
    expect(b.transitions).toEqual([]);
  });

  it('lets another candidate take over once the leader stopped renewing for the lease duration', async () => {
    const cluster = new FakeCluster();
    const flaky = flakyStore(cluster);
    const a = elector(flaky.store, 'a');
    const b = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'b');
    a.instance.start();
    await vi.advanceTimersByTimeAsync(10);
    b.instance.start();
    await vi.advanceTimersByTimeAsync(2_000);
    flaky.set('hang'); // the leader is gone as far as the API server can tell

    await vi.advanceTimersByTimeAsync(3_500);
    expect(a.instance.isLeader()).toBe(false); // stepped down at its renew deadline
    expect(a.transitions).toEqual(['started', 'stopped']);

    await vi.advanceTimersByTimeAsync(3_000);
    expect(b.instance.isLeader()).toBe(true);
    expect(lease(cluster)?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('steps down when renewals fail past the renew deadline, and leads again when they succeed', async () => {
    const cluster = new FakeCluster();
    const flaky = flakyStore(cluster);
    const a = elector(flaky.store, 'a');
    a.instance.start();
    await vi.advanceTimersByTimeAsync(10);
    flaky.set('fail');
    await vi.advanceTimersByTimeAsync(2_500);
    expect(a.instance.isLeader()).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.instance.isLeader()).toBe(false);
    flaky.set('ok');
    await vi.advanceTimersByTimeAsync(1_500);
    expect(a.instance.isLeader()).toBe(true);
    expect(a.transitions).toEqual(['started', 'stopped', 'started']);
  });

  it('releases the lease on stop so that another candidate leads at once', async () => {
    const cluster = new FakeCluster();
    const a = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'a');
    const b = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'b');
    a.instance.start();
    await vi.advanceTimersByTimeAsync(10);
    b.instance.start();
    await vi.advanceTimersByTimeAsync(1_500);

    await a.instance.stop();
    expect(lease(cluster)?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(a.transitions).toEqual(['started', 'stopped']);

    await vi.advanceTimersByTimeAsync(1_500);
    expect(b.instance.isLeader()).toBe(true);
  });

  it('steps down as soon as it sees another holder, without waiting for its renew deadline', async () => {
    const cluster = new FakeCluster();
    const a = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'a');
    a.instance.start();
    await vi.advanceTimersByTimeAsync(10);
    // Another replica took the lease (it deemed us gone).
    const held = lease(cluster)!;
    cluster.leases.set('ops/leader', { ...held, spec: { ...held.spec, holderIdentity: 'b', renewTime: toMicroTime(new Date()) } });

    await vi.advanceTimersByTimeAsync(1_100);
    expect(a.instance.isLeader()).toBe(false);
    expect(a.transitions).toEqual(['started', 'stopped']);
    await a.instance.stop();
    // Not ours any more: nothing to release.
    expect(lease(cluster)?.spec.holderIdentity).toBe('b');
  });

  it('releases a lease it acquired in the round that stop() waited for', async () => {
    const cluster = new FakeCluster();
    const real = leaseStoreFromApi(cluster.api, 'ops', 'leader');
    // The create answers only once stop() is waiting for it.
    let answer = (): void => undefined;
    const store: LeaseStore = {
      ...real,
      create: (lease) => new Promise((resolve, reject) => (answer = () => void real.create(lease).then(resolve, reject))),
    };
    const a = elector(store, 'a');
    a.instance.start();
    await vi.advanceTimersByTimeAsync(10);

    const stopping = a.instance.stop();
    answer();
    await stopping;

    expect(a.transitions).toEqual([]);
    expect(lease(cluster)?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  it('does not take a lease held by someone else whose record keeps changing', async () => {
    const cluster = new FakeCluster();
    const b = elector(leaseStoreFromApi(cluster.api, 'ops', 'leader'), 'b');
    const store = leaseStoreFromApi(cluster.api, 'ops', 'leader');
    await store.create({
      metadata: { name: 'leader', namespace: 'ops' },
      spec: { holderIdentity: 'other', leaseDurationSeconds: 4, renewTime: toMicroTime(new Date()) },
    });
    b.instance.start();
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(1_000);
      const held = (await store.get())!;
      await store.replace({ ...held, spec: { ...held.spec, renewTime: toMicroTime(new Date()) } });
    }
    expect(b.instance.isLeader()).toBe(false);
  });

  it('formats MicroTime with six fractional digits', () => {
    expect(toMicroTime(new Date('2024-05-01T10:00:00.123Z'))).toBe('2024-05-01T10:00:00.123000Z');
  });
});
