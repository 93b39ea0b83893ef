import { describe, expect, it } from 'vitest';
import type { Action, ResolvedDistribution } from '../../../src/domain/types.js';
import type { ClusterApi } from '../../../src/k8s/cluster-api.js';
import { copyOf, distribution } from '../builders.js';
import { FakeApiError, FakeCluster } from './fake-cluster.js';
import { startHarness } from './harness.js';

const rd: ResolvedDistribution = distribution('shared').configMap('settings', { a: '1' }).build();

interface Case {
  what: string;
  /** Builds the action against the seeded cluster (which holds our copy in ns-a). */
  action: (cluster: FakeCluster) => Action;
  failWith?: [keyof ClusterApi, FakeApiError];
  expected: { ok: boolean; verb?: string; transient?: boolean; stale?: boolean };
}

const copyIn = (cluster: FakeCluster) => cluster.object('ConfigMap', 'ns-a', 'settings')!;

describe('copy writer', () => {
  it.each<Case>([
    { what: 'create', action: () => ({ type: 'create', namespace: 'ns-b', object: copyOf(rd, 'ns-b').build() }), expected: { ok: true } },
    {
      what: 'create that lost a race',
      action: (c) => ({ type: 'create', namespace: 'ns-a', object: { ...copyIn(c), metadata: { ...copyIn(c).metadata, uid: undefined } } }),
      expected: { ok: false, verb: 'create', transient: true, stale: true },
    },
    {
      what: 'update over a stale resourceVersion',
      action: (c) => ({ type: 'update', namespace: 'ns-a', object: { ...copyIn(c), metadata: { ...copyIn(c).metadata, resourceVersion: '1' } } }),
      expected: { ok: false, verb: 'update', transient: true, stale: true },
    },
    {
      what: 'update of an object deleted meanwhile: retry (the next pass creates it)',
      action: (c) => ({ type: 'update', namespace: 'ns-b', object: { ...copyIn(c), metadata: { ...copyIn(c).metadata, namespace: 'ns-b' } } }),
      expected: { ok: false, verb: 'update', transient: true },
    },
    { what: 'delete', action: (c) => ({ type: 'delete', namespace: 'ns-a', name: 'settings', uid: copyIn(c).metadata.uid! }), expected: { ok: true } },
    { what: 'delete of what is gone already', action: () => ({ type: 'delete', namespace: 'ns-b', name: 'settings', uid: 'x' }), expected: { ok: true } },
    {
      what: 'delete of a replaced object (uid precondition)',
      action: () => ({ type: 'delete', namespace: 'ns-a', name: 'settings', uid: 'another-uid' }),
      expected: { ok: false, verb: 'delete', transient: true, stale: true },
    },
    {
      what: 'recreate',
      action: (c) => ({ type: 'recreate', namespace: 'ns-a', object: copyOf(rd, 'ns-a').build(), existingUid: copyIn(c).metadata.uid! }),
      expected: { ok: true },
    },
    {
      what: 'forbidden create',
      action: () => ({ type: 'create', namespace: 'ns-b', object: copyOf(rd, 'ns-b').build() }),
      failWith: ['createCopy', new FakeApiError(403, 'Forbidden')],
      expected: { ok: false, verb: 'create', transient: false },
    },
    { what: 'in-sync: no request', action: () => ({ type: 'in-sync', namespace: 'ns-a' }), expected: { ok: true } },
  ])('$what', async ({ action, failWith, expected }) => {
    const h = await startHarness();
    h.cluster.putNamespace('ns-a');
    h.cluster.putNamespace('ns-b');
    h.cluster.putObject(copyOf(rd, 'ns-a').build());
    if (failWith) h.cluster.failWhen((method) => (method === failWith[0] ? failWith[1] : undefined));

    const outcome = await h.writer.apply(action(h.cluster), 'ConfigMap');

    expect(outcome).toMatchObject(expected);
    if (!expected.stale) expect(outcome).not.toHaveProperty('stale');
    h.caches.stop();
  });

  it('recreates with a new uid and keeps the cache in step', async () => {
    const h = await startHarness();
    h.cluster.putNamespace('ns-a');
    const before = h.cluster.putObject(copyOf(rd, 'ns-a').type('Opaque').build());
    await h.writer.apply({ type: 'recreate', namespace: 'ns-a', object: copyOf(rd, 'ns-a').build(), existingUid: before.metadata.uid! }, 'ConfigMap');
    const after = h.cluster.object('ConfigMap', 'ns-a', 'settings')!;
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(h.caches.copies.get({ kind: 'ConfigMap', namespace: 'ns-a', name: 'settings' })?.metadata.uid).toBe(after.metadata.uid);
    h.caches.stop();
  });
});
