// The author recorded on a distribution is asked again whether they may create its kind in a
// namespace before the first copy is written there: a namespace that starts to match after
// admission gets no copy while they may not, and the status and an Event say so.
import { afterEach, describe, expect, it } from 'vitest';
import { ANNOTATION_AUTHOR, authorValue } from '../../../src/domain/author.js';
import { CORE_REGISTRY } from '../../../src/domain/kinds.js';
import { systemClock } from '../../../src/domain/clock.js';
import type { ResourceDistribution } from '../../../src/domain/types.js';
import { createMetrics } from '../../../src/metrics.js';
import { createAuthorGate, type AuthorGate } from '../../../src/reconcile/author-gate.js';
import { createGenerator } from '../../../src/reconcile/generator.js';
import { createPodMaterializer } from '../../../src/reconcile/pod-materializer.js';
import { podReferences } from '../../../src/domain/pod-references.js';
import { FakeAccessReviewer } from '../admission/review-builder.js';
import { distribution } from '../builders.js';
import { silentLog, startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

const ALICE = authorValue({ username: 'alice', groups: ['system:authenticated'] });

/** `null`: admitted before authors were recorded. */
function selected(author: string | null = ALICE): ResourceDistribution {
  const rd = distribution('team-settings').configMap('settings', { a: '1' }).matchLabels({ team: 'a' }).build();
  if (author !== null) rd.metadata.annotations = { [ANNOTATION_AUTHOR]: author };
  return rd;
}

async function start(reviewer: FakeAccessReviewer, rd: ResourceDistribution = selected(), denialTtlMs?: number): Promise<AuthorGate> {
  const authors = createAuthorGate({ reviewer, kinds: CORE_REGISTRY, log: silentLog, ...(denialTtlMs === undefined ? {} : { denialTtlMs }) });
  h = await startHarness({ authors });
  h.cluster.putNamespace('mine', { team: 'a' });
  h.cluster.putNamespace('theirs');
  h.cluster.putDistribution(rd);
  return authors;
}

const copyIn = (namespace: string) => h.cluster.object('ConfigMap', namespace, 'settings');
const status = () => h.cluster.distributions.get('team-settings')?.status;
const authorCondition = () => status()?.conditions.find((c) => c.type === 'AuthorAccessDenied');
const asked = (reviewer: FakeAccessReviewer) => reviewer.checks.map((check) => `${check.verb} ${check.resource} ${check.namespace || '*'}`);

describe('a namespace that starts to match after admission', () => {
  it('gets no copy while the author may not create there; the status and an Event say so, other namespaces are unaffected', async () => {
    const reviewer = new FakeAccessReviewer().grant('alice', ['create'], 'configmaps', 'mine');
    await start(reviewer);
    expect(await h.reconciler.reconcile('team-settings')).toBe('done');
    expect(copyIn('mine')?.data).toEqual({ a: '1' });
    expect(authorCondition()).toBeUndefined();

    // Labelled to match later: no new admission.
    h.cluster.putNamespace('theirs', { team: 'a' });
    expect(await h.reconciler.reconcile('team-settings')).toBe('done');

    expect(copyIn('theirs')).toBeUndefined();
    expect(copyIn('mine')?.data).toEqual({ a: '1' });
    expect(status()).toMatchObject({ desired: 2, succeeded: 1, failed: 1 });
    expect(authorCondition()).toMatchObject({
      status: 'True',
      reason: 'AuthorLacksAccess',
      failedNamespace: ['theirs'],
      message: 'author "alice" may not create configmaps in namespace theirs: no copy is written there until the author may',
    });
    expect(status()?.conditions.find((c) => c.type === 'CreateResourceFailed')?.status).toBe('False');
    expect(h.cluster.events.filter((event) => event.reason === 'AuthorLacksAccess').map((event) => event.message)).toEqual([authorCondition()?.message]);
  });

  it('asks nothing for a namespace that already holds the copy', async () => {
    const reviewer = new FakeAccessReviewer().grant('alice', ['create'], 'configmaps', 'mine');
    await start(reviewer);
    await h.reconciler.reconcile('team-settings');
    // Selector targets: one cluster-wide question first (what admission asked), then the namespace.
    expect(asked(reviewer)).toEqual(['create configmaps *', 'create configmaps mine']);

    reviewer.checks.length = 0;
    h.cluster.putNamespace('theirs', { team: 'a' });
    await h.reconciler.reconcile('team-settings');
    await h.reconciler.reconcile('team-settings');
    expect(asked(reviewer).filter((question) => question.endsWith(' mine'))).toEqual([]);
  });

  it('keeps a denial for its time without asking again, then writes the copy at the first pass after, once the author may', async () => {
    const reviewer = new FakeAccessReviewer().grant('alice', ['create'], 'configmaps', 'mine');
    await start(reviewer, selected(), 50);
    h.cluster.putNamespace('theirs', { team: 'a' });
    await h.reconciler.reconcile('team-settings');
    expect(copyIn('theirs')).toBeUndefined();

    reviewer.grant('alice', ['create'], 'configmaps', 'theirs');
    reviewer.checks.length = 0;
    expect(await h.reconciler.reconcile('team-settings')).toBe('done');
    expect(reviewer.checks).toEqual([]);
    expect(copyIn('theirs')).toBeUndefined();

    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await h.reconciler.reconcile('team-settings')).toBe('done');
    expect(copyIn('theirs')?.data).toEqual({ a: '1' });
    expect(authorCondition()).toBeUndefined();
    expect(status()).toMatchObject({ desired: 2, succeeded: 2, failed: 0 });
  });

  it('costs one question for every namespace when the author may create cluster-wide', async () => {
    const reviewer = new FakeAccessReviewer().grant('alice', ['create'], 'configmaps');
    await start(reviewer);
    for (const name of ['x', 'y', 'z']) h.cluster.putNamespace(name, { team: 'a' });
    expect(await h.reconciler.reconcile('team-settings')).toBe('done');
    for (const name of ['mine', 'x', 'y', 'z']) expect(copyIn(name)).toBeDefined();
    expect(asked(reviewer)).toEqual(['create configmaps *']);
  });

  it('is written as before, without a question, for a distribution without a recorded author', async () => {
    const reviewer = new FakeAccessReviewer();
    await start(reviewer, selected(null));
    h.cluster.putNamespace('theirs', { team: 'a' });
    expect(await h.reconciler.reconcile('team-settings')).toBe('done');
    expect(copyIn('theirs')).toBeDefined();
    expect(reviewer.checks).toEqual([]);
  });

  it('retries, writing no first copy, when the question cannot be answered', async () => {
    const reviewer = new FakeAccessReviewer();
    reviewer.failWith = new Error('connection refused');
    await start(reviewer);
    expect(await h.reconciler.reconcile('team-settings')).toBe('retry');
    expect(copyIn('mine')).toBeUndefined();
    expect(authorCondition()).toBeUndefined();
  });
});

describe('a new namespace the generator writes into', () => {
  async function generateInto(authors: AuthorGate): Promise<unknown> {
    const generator = createGenerator({ api: h.requests.api, caches: h.caches, catalog: h.catalog, writer: h.writer, clock: systemClock, log: silentLog, metrics: createMetrics(), forbiddenNamespaces: [], parallelism: 4, waitTimeoutMs: 400, pollAfterMs: 150, updateSettleMs: 20, authors });
    const ns = h.cluster.putNamespace('fresh', { team: 'a' });
    for (let i = 0; i < 200 && h.caches.namespaces.get('fresh') === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    generator.namespaceAdmitted({ name: 'fresh', uid: ns.metadata.uid ?? '' });
    await generator.idle();
    await generator.stop();
    return copyIn('fresh');
  }

  it('gets no copy when the author may not create there', async () => {
    const authors = await start(new FakeAccessReviewer().grant('alice', ['create'], 'configmaps', 'mine'));
    for (let i = 0; i < 200 && h.catalog.list().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await generateInto(authors)).toBeUndefined();
  });

  it('gets its copy when the author may', async () => {
    const authors = await start(new FakeAccessReviewer().grant('alice', ['create'], 'configmaps', 'fresh'));
    for (let i = 0; i < 200 && h.catalog.list().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await generateInto(authors)).toBeDefined();
  });
});

describe('a pod admitted into a namespace that holds no copy yet', () => {
  async function materializeIn(namespace: string, authors: AuthorGate): Promise<unknown> {
    for (let i = 0; i < 200 && h.catalog.list().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    const metrics = createMetrics();
    const materializer = createPodMaterializer({ api: h.requests.api, caches: h.caches, catalog: h.catalog, writer: h.writer, clock: systemClock, log: silentLog, metrics, forbiddenNamespaces: [], waitMs: 1_000, authors });
    const refs = podReferences({ spec: { volumes: [{ name: 'v', configMap: { name: 'settings' } }] } });
    return materializer.materialize(namespace, refs, { dryRun: false, signal: new AbortController().signal });
  }

  it('is admitted without the copy its author may not create there', async () => {
    const authors = await start(new FakeAccessReviewer().grant('alice', ['create'], 'configmaps', 'mine'));
    h.cluster.putNamespace('theirs', { team: 'a' });
    for (let i = 0; i < 200 && h.caches.namespaces.get('theirs')?.info.labels.team !== 'a'; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await materializeIn('theirs', authors)).toEqual({ pending: 1, inPlace: 0, missing: 1 });
    expect(copyIn('theirs')).toBeUndefined();
    expect(await materializeIn('mine', authors)).toEqual({ pending: 1, inPlace: 1, missing: 0 });
    expect(copyIn('mine')).toBeDefined();
  });
});
