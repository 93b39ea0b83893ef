// The author recorded on a distribution is asked again whether they may read its source when the
// source appears or changes; while they may not, nothing is copied and the status says why.
import { afterEach, describe, expect, it } from 'vitest';
import { ANNOTATION_AUTHOR, authorValue } from '../../../src/domain/author.js';
import { CORE_REGISTRY } from '../../../src/domain/kinds.js';
import type { Resource, ResourceDistribution } from '../../../src/domain/types.js';
import { systemClock } from '../../../src/domain/clock.js';
import { createMetrics } from '../../../src/metrics.js';
import { createAuthorGate, type AuthorGate } from '../../../src/reconcile/author-gate.js';
import { createGenerator } from '../../../src/reconcile/generator.js';
import { sourcesOf } from '../../../src/reconcile/triggers.js';
import { FakeAccessReviewer } from '../admission/review-builder.js';
import { distribution } from '../builders.js';
import { silentLog, startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

const ALICE = authorValue({ username: 'alice', groups: ['system:authenticated'] });

function secret(password: string): Resource {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db', namespace: 'home' }, type: 'Opaque', data: { password: Buffer.from(password).toString('base64') } };
}

function fromSource(author: string | undefined, selected = false): ResourceDistribution {
  const named = distribution('db-copy');
  const rd = (selected ? named.matchLabels({ team: 'a' }) : named.included('shared')).build() as ResourceDistribution;
  delete (rd.spec as { resource?: unknown }).resource;
  rd.spec.source = { apiVersion: 'v1', kind: 'Secret', namespace: 'home', name: 'db' };
  if (author !== undefined) rd.metadata.annotations = { [ANNOTATION_AUTHOR]: author };
  return rd;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error('condition not reached');
}

async function start(author: string | undefined, reviewer: FakeAccessReviewer, options: { denialTtlMs?: number; selected?: boolean } = {}): Promise<AuthorGate> {
  const authors = createAuthorGate({ reviewer, kinds: CORE_REGISTRY, log: silentLog, ...(options.denialTtlMs === undefined ? {} : { denialTtlMs: options.denialTtlMs }) });
  h = await startHarness({ authors });
  for (const ns of ['home', 'shared']) h.cluster.putNamespace(ns);
  h.cluster.putDistribution(fromSource(author, options.selected));
  await until(() => h.catalog.list().length > 0);
  h.caches.sources.follow(sourcesOf(h.catalog.list()));
  await until(() => h.caches.sources.get(sourcesOf(h.catalog.list())[0]!).synced);
  return authors;
}

/** The source put (or changed) by someone else, and the cache having seen it. */
async function putSource(password: string): Promise<void> {
  const stored = h.cluster.putObject(secret(password));
  await until(() => {
    const state = h.caches.sources.get(sourcesOf(h.catalog.list())[0]!);
    return state.synced && state.object?.metadata.resourceVersion === stored.metadata.resourceVersion;
  });
}

const copy = () => h.cluster.object('Secret', 'shared', 'db');
/** The questions about the source (the first copy in a namespace asks about writing there too). */
const sourceChecks = (reviewer: FakeAccessReviewer) => reviewer.checks.filter((check) => check.verb === 'get');
const authorCondition = () => h.cluster.distributions.get('db-copy')?.status?.conditions.find((c) => c.type === 'AuthorAccessDenied');

describe('a source that appears after its distribution was admitted', () => {
  it('is not copied when its author may no longer read it, and the status and an Event say so', async () => {
    const reviewer = new FakeAccessReviewer();
    await start(ALICE, reviewer);
    await putSource('s3cr3t');
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');

    expect(copy()).toBeUndefined();
    expect(reviewer.checks).toEqual([expect.objectContaining({ subject: expect.objectContaining({ username: 'alice' }), verb: 'get', resource: 'secrets', namespace: 'home', name: 'db' })]);
    expect(authorCondition()).toMatchObject({ status: 'True', reason: 'AuthorLacksAccess', message: expect.stringContaining('author "alice" may not get secrets "db" in namespace "home"') });
    expect(h.cluster.distributions.get('db-copy')?.status).toMatchObject({ desired: 1, succeeded: 0, failed: 1 });
    expect(h.cluster.events.map((event) => event.reason)).toContain('AuthorLacksAccess');
    // Nothing in the event or status carries the value.
    expect(JSON.stringify([h.cluster.events, h.cluster.distributions.get('db-copy')?.status])).not.toContain(Buffer.from('s3cr3t').toString('base64'));

    // The same source version: the answer holds, no new question.
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');
    expect(reviewer.checks).toHaveLength(1);
  });

  it('is copied when its author may read it, and asked about again only when it changes', async () => {
    const reviewer = new FakeAccessReviewer().grant('alice', ['get'], 'secrets', 'home').grant('alice', ['create'], 'secrets');
    await start(ALICE, reviewer);
    await putSource('one');
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');
    expect(copy()?.data).toEqual(secret('one').data);
    expect(authorCondition()).toBeUndefined();
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');
    expect(sourceChecks(reviewer)).toHaveLength(1);

    await putSource('two');
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');
    expect(copy()?.data).toEqual(secret('two').data);
    expect(sourceChecks(reviewer)).toHaveLength(2);
  });

  it('keeps the copies as they are when the right is lost between two versions, and writes again once it is back', async () => {
    const reviewer = new FakeAccessReviewer().grant('alice', ['get'], 'secrets', 'home').grant('alice', ['create'], 'secrets');
    await start(ALICE, reviewer, { denialTtlMs: 1 });
    await putSource('one');
    await h.reconciler.reconcile('db-copy');
    expect(copy()?.data).toEqual(secret('one').data);

    const revoked = new FakeAccessReviewer();
    reviewer.review = (check) => revoked.review(check);
    await putSource('two');
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');
    expect(copy()?.data).toEqual(secret('one').data);
    expect(authorCondition()).toMatchObject({ status: 'True' });

    // Given back: the denial is asked again after its time (here 1 ms), without a change of the source.
    reviewer.review = (check) => new FakeAccessReviewer().grant('alice', ['get'], 'secrets', 'home').grant('alice', ['create'], 'secrets').review(check);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');
    expect(copy()?.data).toEqual(secret('two').data);
    expect(authorCondition()).toBeUndefined();
  });

  it('is copied as before for a distribution admitted before authors were recorded, without a question', async () => {
    const reviewer = new FakeAccessReviewer();
    await start(undefined, reviewer);
    await putSource('s3cr3t');
    expect(await h.reconciler.reconcile('db-copy')).toBe('done');
    expect(copy()?.data).toEqual(secret('s3cr3t').data);
    expect(reviewer.checks).toEqual([]);
  });

  it('retries, copying nothing, when the question cannot be answered', async () => {
    const reviewer = new FakeAccessReviewer();
    reviewer.failWith = new Error('connection refused');
    await start(ALICE, reviewer);
    await putSource('s3cr3t');
    await expect(h.reconciler.reconcile('db-copy')).rejects.toThrow('connection refused');
    expect(copy()).toBeUndefined();
  });
});

describe('a new namespace that a source distribution targets', () => {
  async function generateInto(authors: AuthorGate): Promise<Resource | undefined> {
    const generator = createGenerator({ api: h.requests.api, caches: h.caches, catalog: h.catalog, writer: h.writer, clock: systemClock, log: silentLog, metrics: createMetrics(), forbiddenNamespaces: [], parallelism: 4, waitTimeoutMs: 400, pollAfterMs: 150, updateSettleMs: 20, authors });
    h.listeners.push((change) => {
      if (change.resource === 'namespaces') generator.namespaceChanged(change.change.current?.info.name ?? '');
    });
    // Admitted as it is stored: the generator writes its copies for what it is now.
    const ns = h.cluster.putNamespace('fresh', { team: 'a' });
    await until(() => h.caches.namespaces.get('fresh') !== undefined);
    generator.namespaceAdmitted({ name: 'fresh', uid: ns.metadata.uid ?? '' });
    await generator.idle();
    await generator.stop();
    return h.cluster.object('Secret', 'fresh', 'db');
  }

  it('gets no copy from the generator when the author may not read the source', async () => {
    const authors = await start(ALICE, new FakeAccessReviewer(), { selected: true });
    await putSource('s3cr3t');
    expect(await generateInto(authors)).toBeUndefined();
  });

  it('gets its copy from the generator when the author may', async () => {
    const authors = await start(ALICE, new FakeAccessReviewer().grant('alice', ['get'], 'secrets', 'home').grant('alice', ['create'], 'secrets'), { selected: true });
    await putSource('s3cr3t');
    expect((await generateInto(authors))?.data).toEqual(secret('s3cr3t').data);
  });
});
