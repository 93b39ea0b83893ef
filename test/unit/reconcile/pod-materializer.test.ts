// The pod webhook's writes over the in-memory cluster: what is pending is written, what is in sync
// or not ours costs nothing, a dry run writes nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { podReferences } from '../../../src/domain/pod-references.js';
import { createPodMaterializer, type PodMaterializer } from '../../../src/reconcile/pod-materializer.js';
import { createMetrics } from '../../../src/metrics.js';
import { distribution, foreign } from '../builders.js';
import { silentLog, startHarness, type Harness } from './harness.js';
import { T0 } from '../builders.js';

let h: Harness;
afterEach(() => h?.caches.stop());

const signal = new AbortController().signal;
const refs = podReferences({ spec: { imagePullSecrets: [{ name: 'pull' }], volumes: [{ name: 'v', configMap: { name: 'settings' } }] } });

async function setup(): Promise<PodMaterializer> {
  h = await startHarness();
  h.cluster.putNamespace('team-a', { team: 'a' });
  h.cluster.putDistribution(distribution('pull').secret('pull', { token: 'dA==' }).matchLabels({ team: 'a' }).build());
  h.cluster.putDistribution(distribution('settings').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build());
  h.cluster.putDistribution(distribution('other').configMap('unrelated', { a: '1' }).matchLabels({ team: 'a' }).build());
  await new Promise((resolve) => setTimeout(resolve, 10));
  h.requests.reset();
  return createPodMaterializer({
    api: h.requests.api,
    caches: h.caches,
    catalog: h.catalog,
    writer: h.writer,
    clock: () => T0,
    log: silentLog,
    metrics: createMetrics(),
    forbiddenNamespaces: [],
    waitMs: 1_000,
  });
}

describe('copies before pods', () => {
  it('writes the copies the pod references that are missing, and only those', async () => {
    const materializer = await setup();
    expect(await materializer.materialize('team-a', refs, { dryRun: false, signal })).toEqual({ pending: 2, inPlace: 2, missing: 0 });
    expect(h.cluster.object('Secret', 'team-a', 'pull')).toBeDefined();
    expect(h.cluster.object('ConfigMap', 'team-a', 'settings')).toBeDefined();
    expect(h.cluster.object('ConfigMap', 'team-a', 'unrelated')).toBeUndefined();
  });

  it('holds back the copy of a strict distribution that the reconciler holds back (a conflict in another target)', async () => {
    const materializer = await setup();
    h.cluster.putNamespace('team-d', { team: 'a' });
    h.cluster.putObject(foreign('Secret', 'pull', 'team-d').build());
    h.cluster.putDistribution(distribution('pull').secret('pull', { token: 'dA==' }).matchLabels({ team: 'a' }).writePolicy('strict').build());
    await new Promise((resolve) => setTimeout(resolve, 10));
    await h.reconciler.reconcile('pull');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(h.cluster.distributions.get('pull')?.status?.conditions.find((c) => c.type === 'ConflictOccurred')?.status).toBe('True');

    expect(await materializer.materialize('team-a', refs, { dryRun: false, signal })).toEqual({ pending: 1, inPlace: 1, missing: 0 });
    expect(h.cluster.object('Secret', 'team-a', 'pull')).toBeUndefined();
    expect(h.cluster.object('ConfigMap', 'team-a', 'settings')).toBeDefined();
  });

  it('answers at once, without a single request, when every copy is in place', async () => {
    const materializer = await setup();
    await materializer.materialize('team-a', refs, { dryRun: false, signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    h.requests.reset();
    const result = materializer.materialize('team-a', refs, { dryRun: false, signal });
    expect(result).toEqual({ pending: 0, inPlace: 0, missing: 0 });
    expect(h.requests.tally().byVerb).toEqual({});
  });

  it('writes again a copy changed after it was found in place (what was found settled is not trusted past a change)', async () => {
    const materializer = await setup();
    await materializer.materialize('team-a', refs, { dryRun: false, signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(materializer.materialize('team-a', refs, { dryRun: false, signal })).toEqual({ pending: 0, inPlace: 0, missing: 0 });
    const copy = h.cluster.object('Secret', 'team-a', 'pull')!;
    const written = copy.data;
    h.cluster.putObject({ ...copy, data: { token: 'ZWRpdGVk' } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await materializer.materialize('team-a', refs, { dryRun: false, signal })).toEqual({ pending: 1, inPlace: 1, missing: 0 });
    expect(h.cluster.object('Secret', 'team-a', 'pull')?.data).toEqual(written);
  });

  it.each([
    ['a dry run', true, 'team-a'],
    ['a namespace no distribution targets', false, 'elsewhere'],
  ])('writes nothing for %s', async (_what, dryRun, namespace) => {
    const materializer = await setup();
    h.cluster.putNamespace('elsewhere', {});
    await new Promise((resolve) => setTimeout(resolve, 10));
    h.requests.reset();
    await materializer.materialize(namespace, refs, { dryRun, signal });
    expect(h.requests.tally().writes).toBe(0);
  });

  it('leaves a same-named object it does not own alone (found by its create, then read)', async () => {
    const materializer = await setup();
    h.cluster.putObject(foreign('ConfigMap', 'settings', 'team-a').data({ mine: 'x' }).build());
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await materializer.materialize('team-a', refs, { dryRun: false, signal })).toEqual({ pending: 2, inPlace: 2, missing: 0 });
    expect(h.cluster.object('ConfigMap', 'team-a', 'settings')?.data).toEqual({ mine: 'x' });
  });

  it('reads a namespace its cache has not seen yet, once', async () => {
    const materializer = await setup();
    h.cluster.putNamespace('brand-new', { team: 'a' }, false, true);
    h.requests.reset();
    expect(await materializer.materialize('brand-new', refs, { dryRun: false, signal })).toMatchObject({ pending: 2, inPlace: 2 });
    expect(h.requests.tally().byRequest['get namespaces']).toBe(1);
  });
});
