import { afterEach, describe, expect, it } from 'vitest';
import { ANNOTATION_FROM, LABEL_DISTRIBUTION, type ResourceDistribution } from '../../../src/domain/types.js';
import type { ClusterApi } from '../../../src/k8s/cluster-api.js';
import { copyOf, distribution, foreign } from '../builders.js';
import { FakeApiError } from './fake-cluster.js';
import { recordingLog, startHarness, type Harness } from './harness.js';

/** pino's numeric levels. */
const [DEBUG, INFO] = [20, 30];

let h: Harness;

afterEach(() => h?.caches.stop());

function condition(rd: ResourceDistribution | undefined, type: string) {
  return rd?.status?.conditions.find((c) => c.type === type);
}

async function withNamespaces(...names: string[]): Promise<Harness> {
  h = await startHarness();
  for (const name of names) h.cluster.putNamespace(name, { team: 'a' });
  return h;
}

const shared = () => distribution('shared').configMap('settings', { a: '1' }).matchLabels({ team: 'a' });

describe('reconcile', () => {
  it('creates a copy in every target namespace and writes status once', async () => {
    await withNamespaces('ns-a', 'ns-b', 'ns-c');
    h.cluster.putDistribution(shared().included('ns-missing').build());

    expect(await h.reconciler.reconcile('shared')).toBe('done');

    for (const ns of ['ns-a', 'ns-b', 'ns-c']) expect(h.cluster.object('ConfigMap', ns, 'settings')?.data).toEqual({ a: '1' });
    const rd = h.cluster.distributions.get('shared');
    expect(rd?.status).toMatchObject({ desired: 4, succeeded: 3, failed: 1 });
    expect(rd?.status?.conditions.map((c) => c.type)).toEqual([
      'GetResourceFailed',
      'CreateResourceFailed',
      'UpdateResourceFailed',
      'DeleteResourceFailed',
      'ConflictOccurred',
      'NamespaceNotExists',
      'Ready',
      'Stalled',
    ]);
    expect(condition(rd, 'NamespaceNotExists')).toMatchObject({ status: 'True', failedNamespace: ['ns-missing'] });
    // New targets: created at once, one request per copy (a read only follows an AlreadyExists);
    // the first pass since the lead was taken also reads the distribution itself, once.
    expect(h.requests.tally().byRequest).toEqual({ 'list resourcedistributions': 1, 'create configmaps': 3, 'patch resourcedistributions': 1, 'create events': 1 });
  });

  it('says what a pass wrote in one line at info, each copy at debug only', async () => {
    const { log, lines } = recordingLog();
    h = await startHarness({ log });
    for (const name of ['ns-a', 'ns-b', 'ns-c']) h.cluster.putNamespace(name, { team: 'a' });
    h.cluster.putDistribution(shared().build());
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    h.cluster.putDistribution(distribution('shared').configMap('settings', { a: '2' }).matchLabels({ team: 'a' }).build());
    h.cluster.putNamespace('ns-b', { team: 'gone' });
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(await h.reconciler.reconcile('shared')).toBe('done');

    const info = lines.filter((line) => line.level === INFO && line.msg === 'copies written');
    expect(info.map(({ msg: _msg, level: _level, time: _time, ...fields }) => fields)).toEqual([
      expect.objectContaining({ name: 'shared', created: 3 }),
      expect.objectContaining({ name: 'shared', updated: 2, deleted: 1 }),
    ]);
    expect(lines.filter((line) => line.msg.startsWith('copy ')).every((line) => line.level === DEBUG)).toBe(true);
    expect(lines.filter((line) => line.msg === 'copy created')).toHaveLength(3);
  });

  it('makes no request at all on a pass over a converged distribution', async () => {
    await withNamespaces('ns-a', 'ns-b');
    h.cluster.putDistribution(shared().build());
    await h.reconciler.reconcile('shared');
    h.requests.reset();

    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.requests.tally()).toMatchObject({ writes: 0, byVerb: {} });
  });

  it('keeps applying after a failure and asks for a retry when the failure is transient', async () => {
    await withNamespaces('ns-a', 'ns-b', 'ns-c');
    h.cluster.putDistribution(shared().build());
    h.cluster.failWhen((method, args) =>
      method === 'createCopy' && (args[0] as { metadata: { namespace: string } }).metadata.namespace === 'ns-b'
        ? new FakeApiError(503, 'ServiceUnavailable', 'etcd is busy')
        : undefined,
    );

    expect(await h.reconciler.reconcile('shared')).toBe('retry');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeDefined();
    expect(h.cluster.object('ConfigMap', 'ns-c', 'settings')).toBeDefined();
    const rd = h.cluster.distributions.get('shared');
    expect(rd?.status).toMatchObject({ desired: 3, succeeded: 2, failed: 1 });
    expect(condition(rd, 'CreateResourceFailed')).toMatchObject({ status: 'True', failedNamespace: ['ns-b'] });

    h.cluster.clearFailures();
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.cluster.distributions.get('shared')?.status).toMatchObject({ succeeded: 3, failed: 0 });
  });

  it.each<[string, FakeApiError, 'done' | 'retry']>([
    ['server unavailable: retry', new FakeApiError(503, 'ServiceUnavailable'), 'retry'],
    ['throttled: retry', new FakeApiError(429, 'TooManyRequests'), 'retry'],
    ['created by someone else meanwhile: retry (next pass classifies it)', new FakeApiError(409, 'AlreadyExists'), 'retry'],
    ['forbidden: wait for a change', new FakeApiError(403, 'Forbidden'), 'done'],
    ['invalid: wait for a change', new FakeApiError(422, 'Invalid'), 'done'],
  ])('a create failing with %s', async (_, error, expected) => {
    await withNamespaces('ns-a');
    h.cluster.putDistribution(shared().build());
    h.cluster.failWhen((method) => (method === 'createCopy' ? error : undefined));
    expect(await h.reconciler.reconcile('shared')).toBe(expected);
  });

  it('leaves a foreign object alone, reports it once, and does not retry', async () => {
    await withNamespaces('ns-a', 'ns-b');
    const original = h.cluster.putObject(foreign('ConfigMap', 'settings', 'ns-b').data({ mine: 'x' }).build());
    h.cluster.putDistribution(shared().build());

    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toEqual(original);
    const rd = h.cluster.distributions.get('shared');
    expect(condition(rd, 'ConflictOccurred')).toMatchObject({ status: 'True', failedNamespace: ['ns-b'] });
    expect(h.cluster.events.map((e) => [e.reason, e.type])).toEqual([['ResourceConflict', 'Warning']]);
    expect(h.cluster.events[0]?.message).not.toContain('mine');
  });

  it.each([
    ['ignore', { 'list resourcedistributions': 1, 'create configmaps': 2, 'get configmaps': 1 }, { 'get configmaps': 1 }],
    ['overwrite', { 'list resourcedistributions': 1, 'create configmaps': 2, 'get configmaps': 1, 'update configmaps': 1 }, {}],
    ['strict', { 'list resourcedistributions': 1, 'get configmaps': 2 }, { 'get configmaps': 2 }],
  ] as const)('with writePolicy %s, meets a foreign object by its create, and later reads it before writing', async (policy, first, second) => {
    await withNamespaces('ns-a', 'ns-b');
    h.cluster.putObject(foreign('ConfigMap', 'settings', 'ns-b').data({ mine: 'x' }).build());
    h.cluster.putDistribution(shared().writePolicy(policy).build());

    expect(await h.reconciler.reconcile('shared')).toBe('done');
    const { 'patch resourcedistributions': _status, 'create events': _events, ...firstPass } = h.requests.tally().byRequest;
    expect(firstPass).toEqual(first);
    // Decided within the first pass: the conflict is reported (or, under overwrite, taken over).
    const conflict = condition(h.cluster.distributions.get('shared'), 'ConflictOccurred');
    expect(conflict?.status).toBe(policy === 'overwrite' ? 'False' : 'True');
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings') !== undefined).toBe(policy !== 'strict');

    h.requests.reset();
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    // A settled conflict costs one read per pass, never a failed write.
    expect(h.requests.tally().byRequest).toEqual(second);
  });

  it('repairs a drifted copy, and recreates a deleted one', async () => {
    await withNamespaces('ns-a', 'ns-b');
    h.cluster.putDistribution(shared().build());
    await h.reconciler.reconcile('shared');
    const drifted = h.cluster.object('ConfigMap', 'ns-a', 'settings')!;
    h.cluster.putObject({ ...drifted, data: { a: 'edited' } });
    h.cluster.removeObject('ConfigMap', 'ns-b', 'settings');

    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toMatchObject({ data: { a: '1' }, metadata: { uid: drifted.metadata.uid } });
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')?.data).toEqual({ a: '1' });
  });

  it('removes copies from namespaces no longer targeted', async () => {
    await withNamespaces('ns-a', 'ns-b');
    h.cluster.putDistribution(shared().build());
    await h.reconciler.reconcile('shared');
    h.cluster.putNamespace('ns-b', { team: 'b' });

    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeUndefined();
    expect(h.cluster.distributions.get('shared')?.status).toMatchObject({ desired: 1, succeeded: 1 });
  });

  it('removes the leftovers of a deleted distribution, but not objects someone else took over', async () => {
    await withNamespaces('ns-a', 'ns-b');
    const rd = h.cluster.putDistribution(shared().build());
    h.cluster.putObject(copyOf(rd, 'ns-a').build());
    h.cluster.putObject(copyOf(rd, 'ns-b').annotation(ANNOTATION_FROM, 'someone').build());
    h.cluster.deleteDistribution('shared');

    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeUndefined();
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeDefined();
  });

  it('keeps the copies of a distribution deleted with propagation Orphan (no controller reference left)', async () => {
    await withNamespaces('ns-a', 'ns-b');
    const rd = h.cluster.putDistribution(shared().build());
    // What the garbage collector leaves after an orphaning delete: our annotations, no owner.
    h.cluster.putObject(copyOf(rd, 'ns-a').owners().build());
    h.cluster.putObject(copyOf(rd, 'ns-b').build());
    h.cluster.deleteDistribution('shared');

    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeDefined();
    // Still controlled by the deleted distribution: removed, as the garbage collector would.
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeUndefined();
  });

  it('leaves the orphans of an earlier distribution alone when a new one of the same name copies something else', async () => {
    await withNamespaces('ns-a', 'ns-b', 'team-a');
    const legacy = h.cluster.putDistribution(shared().build());
    // Deleted with propagation Orphan: the garbage collector removed the controller references.
    for (const ns of ['ns-a', 'ns-b']) h.cluster.putObject(copyOf(legacy, ns).owners().build());
    h.cluster.deleteDistribution('shared');
    // Made again: a new object, with a uid of its own.
    h.cluster.putDistribution(distribution('shared').configMap('hers', { mine: 'x' }).included('team-a').uid('uid-shared-again').build());

    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'team-a', 'hers')?.data).toEqual({ mine: 'x' });
    for (const ns of ['ns-a', 'ns-b']) expect(h.cluster.object('ConfigMap', ns, 'settings')?.data).toEqual({ a: '1' });
  });

  it('leaves copies alone while the distribution exists but its cache has not caught up yet', async () => {
    await withNamespaces('ns-a');
    const rd = shared().build();
    // Created, and its copy written (by another replica's generator), before this replica's
    // distribution watch delivered it: only the copy watch has spoken so far.
    h.cluster.distributions.set('shared', { ...rd, metadata: { ...rd.metadata, resourceVersion: '5' } });
    h.cluster.putObject(copyOf(rd, 'ns-a').build());

    expect(await h.reconciler.reconcile('shared')).toBe('retry');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeDefined();
    expect(h.requests.tally().writes).toBe(0);
  });

  it('puts back the label of a copy someone removed it from (the cache no longer sees that copy)', async () => {
    await withNamespaces('ns-a');
    h.cluster.putDistribution(shared().build());
    await h.reconciler.reconcile('shared');
    const copy = h.cluster.object('ConfigMap', 'ns-a', 'settings')!;
    const labels: Record<string, string> = { ...copy.metadata.labels, mine: 'yes' };
    delete labels[LABEL_DISTRIBUTION];
    h.cluster.putObject({ ...copy, metadata: { ...copy.metadata, labels } });
    expect(h.caches.copies.get({ kind: 'ConfigMap', namespace: 'ns-a', name: 'settings' })).toBeUndefined();

    expect(await h.reconciler.reconcile('shared')).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.metadata).toMatchObject({
      uid: copy.metadata.uid,
      labels: { [LABEL_DISTRIBUTION]: 'shared', mine: 'yes' },
    });
  });

  it('starts no write once leadership is lost, and writes no status from the cut pass', async () => {
    await withNamespaces('ns-a', 'ns-b', 'ns-c', 'ns-d');
    h.cluster.putDistribution(shared().build());
    const leadership = new AbortController();
    // Lost while the first write is in flight.
    h.cluster.failWhen((method) => {
      if (method === 'createCopy') leadership.abort();
      return undefined;
    });

    expect(await h.reconciler.reconcile('shared', leadership.signal)).toBe('retry');

    expect(h.requests.tally().byRequest['create configmaps']).toBe(1);
    expect(h.cluster.callsOf('patchDistributionStatus')).toBe(0);
  });

  it('deletes our copies that no longer match the template kind or name', async () => {
    await withNamespaces('ns-a');
    const rd = h.cluster.putDistribution(shared().build());
    h.cluster.putObject(copyOf(rd, 'ns-a').build());
    const renamed = h.cluster.putDistribution({ ...rd, spec: { ...rd.spec, resource: { ...rd.spec.resource, metadata: { name: 'renamed' } } } });

    expect(await h.reconciler.reconcile(renamed.metadata.name)).toBe('done');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeUndefined();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'renamed')?.metadata.labels?.[LABEL_DISTRIBUTION]).toBe('shared');
  });

  it('syncPolicy CreateOnce: releases a copy under an earlier template name instead of deleting it', async () => {
    await withNamespaces('ns-a');
    const rd = h.cluster.putDistribution(shared().syncPolicy('CreateOnce').build());
    h.cluster.putObject(copyOf(rd, 'ns-a').data({ a: 'tuned' }).build());
    const renamed = h.cluster.putDistribution({ ...rd, spec: { ...rd.spec, resource: { ...rd.spec.resource, metadata: { name: 'renamed' } } } });

    expect(await h.reconciler.reconcile(renamed.metadata.name)).toBe('done');

    const kept = h.cluster.object('ConfigMap', 'ns-a', 'settings');
    expect(kept?.data).toEqual({ a: 'tuned' });
    expect(kept?.metadata.labels?.[LABEL_DISTRIBUTION]).toBeUndefined();
    expect(kept?.metadata.ownerReferences ?? []).toEqual([]);
    expect(h.cluster.object('ConfigMap', 'ns-a', 'renamed')?.metadata.labels?.[LABEL_DISTRIBUTION]).toBe('shared');
    expect(h.cluster.events.filter((event) => event.reason === 'CopyReleased').map((event) => [event.type, event.message.split(' released')[0]])).toEqual([['Normal', 'ConfigMap ns-a/settings']]);
  });

  it('syncPolicy CreateOnce: writes nothing over an edited copy, deletes an untouched one and releases an edited one when narrowed', async () => {
    await withNamespaces('ns-a', 'ns-b', 'ns-c');
    const rd = h.cluster.putDistribution(shared().syncPolicy('CreateOnce').build());
    await h.reconciler.reconcile('shared');
    h.cluster.putObject(copyOf(rd, 'ns-a').data({ a: 'tuned' }).build());
    h.requests.reset();
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.requests.tally().writes).toBe(0);
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.data).toEqual({ a: 'tuned' });

    h.cluster.putNamespace('ns-a', {});
    h.cluster.putNamespace('ns-b', {});
    expect(await h.reconciler.reconcile('shared')).toBe('done');
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeUndefined();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.metadata.annotations?.[ANNOTATION_FROM]).toBeUndefined();
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.data).toEqual({ a: 'tuned' });
    expect(h.cluster.distributions.get('shared')?.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
  });

  it('writes status only when it changed, and emits an event only when a failure appears', async () => {
    await withNamespaces('ns-a');
    h.cluster.putDistribution(shared().included('later').build());
    await h.reconciler.reconcile('shared');
    await h.reconciler.reconcile('shared');
    expect(h.cluster.callsOf('patchDistributionStatus')).toBe(1);
    expect(h.cluster.events.map((e) => e.reason)).toEqual(['NamespaceNotFound']);

    h.cluster.putNamespace('later', {});
    await h.reconciler.reconcile('shared');
    expect(h.cluster.callsOf('patchDistributionStatus')).toBe(2);
    expect(condition(h.cluster.distributions.get('shared'), 'NamespaceNotExists')?.status).toBe('False');
    expect(h.cluster.events).toHaveLength(1);
  });

  it('reports a failed read of an uncached target under GetResourceFailed and retries', async () => {
    await withNamespaces('ns-a', 'ns-b');
    // The create meets the foreign object, and reading it fails.
    h.cluster.putObject(foreign('ConfigMap', 'settings', 'ns-a').data({ mine: 'x' }).build());
    h.cluster.putDistribution(shared().build());
    h.cluster.failWhen((method: keyof ClusterApi, args) =>
      method === 'getCopy' && (args[0] as { namespace: string }).namespace === 'ns-a' ? new FakeApiError(500, 'InternalError') : undefined,
    );

    expect(await h.reconciler.reconcile('shared')).toBe('retry');

    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')?.data).toEqual({ mine: 'x' });
    expect(h.cluster.object('ConfigMap', 'ns-b', 'settings')).toBeDefined();
    expect(condition(h.cluster.distributions.get('shared'), 'GetResourceFailed')).toMatchObject({
      status: 'True',
      failedNamespace: ['ns-a'],
    });
  });

  it('recreates a Secret whose type changed (new uid)', async () => {
    await withNamespaces('ns-a');
    const secret = () => distribution('creds').secret('creds', { token: 't' }).matchLabels({ team: 'a' });
    h.cluster.putDistribution(secret().build());
    await h.reconciler.reconcile('creds');
    const before = h.cluster.object('Secret', 'ns-a', 'creds')!;
    h.cluster.putDistribution(secret().type('kubernetes.io/basic-auth').data({ username: 'dQ==', password: 'cA==' }).build());

    expect(await h.reconciler.reconcile('creds')).toBe('done');

    const after = h.cluster.object('Secret', 'ns-a', 'creds')!;
    expect(after.type).toBe('kubernetes.io/basic-auth');
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
  });
});

describe('reconcile: what is never distributed', () => {
  it.each([
    ['a service-account token Secret', distribution('bad').secret('token', {}, 'kubernetes.io/service-account-token')],
    ['a Helm release Secret', distribution('bad').secret('release', {}, 'helm.sh/release.v1')],
    ['a kind other than Secret or ConfigMap', distribution('bad').field('kind', 'Pod')],
  ])('%s (stored while admission was off): no copy written, no retry, and the status says why', async (_, built) => {
    h = await startHarness();
    h.cluster.putNamespace('ns-a');
    h.cluster.putDistribution(built.allNamespaces().build());
    expect(await h.reconciler.reconcile('bad')).toBe('done');
    expect(h.requests.tally().byRequest).toEqual({ 'list resourcedistributions': 1, 'patch resourcedistributions': 1, 'create events': 1 });
    expect(h.cluster.events.map((e) => e.reason)).toEqual(['NotDistributable']);
    // Said once: a second pass over the same world writes nothing.
    expect(await h.reconciler.reconcile('bad')).toBe('done');
    expect(h.requests.tally().writes).toBe(2);
  });
});
