// 6. Contention: one large ObjectSync must not monopolise the controller. N ObjectSyncs each copy
// their source Secret to the same M namespaces (N x M copies). Per round: an unrelated
// distribution (one ConfigMap, one namespace) has its data changed while the product is idle (the
// baseline), then every source is edited, so that every copy must be rewritten, and the same
// unrelated change is made right afterwards. Timed through watches: the unrelated change until its
// copy carries the new data, the rewrite until every copy does. After the rounds the ObjectSyncs
// are deleted: until their copies are gone and the ObjectSyncs with them (finalizer released).
import { performance } from 'node:perf_hooks';
import type { V1Secret } from '@kubernetes/client-node';
import { OBJECT_SYNC_API_VERSION, OBJECT_SYNC_GROUP, OBJECT_SYNC_KIND, OBJECT_SYNC_PLURAL, OBJECT_SYNC_VERSION, type ObjectSync } from '../src/domain/object-sync.js';
import { LABEL_DISTRIBUTION } from '../src/domain/types.js';
import { GROUP_LABEL, groupDistribution, numberedNames, type BenchKube } from './bench-kube.js';
import { watchObjects, type ObjectWatch } from './object-watch.js';
import { requestsBetween, waitForQuiet, workBetween, type Product } from './product.js';
import type { Scrape } from './scrape.js';
import type { BenchSize } from './sizes.js';
import { median, ratio } from './stats.js';
import { byNamespacedName, Tracker } from './tracker.js';
import { waitUntil } from './wait.js';

export interface ContentionResult {
  objectSyncs: number;
  destinationsPerSync: number;
  copies: number;
  /** The distributions the product made of the ObjectSyncs (distinct distribution labels on their copies). */
  distributions: number;
  rounds: number;
  /** First ObjectSync create request -> every copy visible. */
  createMs: number;
  /** The unrelated change with the product idle: update request -> its copy carries the new data (median, then each round). */
  idleMs: number;
  idleRoundsMs: number[];
  /** The same change made right after every source was edited (median, then each round). */
  stormMs: number;
  stormRoundsMs: number[];
  /** Per round: ObjectSync copies already rewritten when the unrelated copy showed its change. */
  rewrittenBeforeUnrelated: number[];
  /** First source edit -> every ObjectSync copy carries the new data (median, then each round). */
  rewriteMs: number;
  rewriteRoundsMs: number[];
  /** Copies rewritten per second over the median rewrite. */
  copiesPerSecond: number;
  /** The product's work per rewrite, from the first source edit until it is quiet again (medians): API writes, reconciles, CPU. */
  rewriteWork: Work;
  /** stormMs / idleMs. */
  ratio: number;
  /** Delete requests -> the last copy gone (watch), and -> no ObjectSync left (its finalizer released). */
  deletion: { copiesGoneMs: number; objectSyncsGoneMs: number };
}

const GROUP = 'contention';
const ADMIN_GROUP = 'contention-admin';
const ADMIN = 'bench-contention-admin';
const SOURCES_NAMESPACE = 'bench-contention-sources';
/** Carried by the sources, hence by their copies (a source's labels are copied). */
const STORM_LABEL = 'bench.resource-distributor.io/contention';
const OS = { group: OBJECT_SYNC_GROUP, version: OBJECT_SYNC_VERSION, plural: OBJECT_SYNC_PLURAL, namespace: SOURCES_NAMESPACE };

const base64 = (text: string): string => Buffer.from(text).toString('base64');

function syncName(index: number): string {
  return `bench-contention-${index}`;
}

function sourceName(index: number): string {
  return `bench-contention-source-${index}`;
}

/** A source Secret of a few hundred bytes whose `revision` key says which edit it carries. */
function sourceSecret(index: number, revision: number): V1Secret {
  const name = sourceName(index);
  const { data } = groupDistribution(name, 'Secret', GROUP, revision).spec.resource;
  return { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name, namespace: SOURCES_NAMESPACE, labels: { [STORM_LABEL]: 'storm' } }, data };
}

/** One destination per namespace, the copy named as the source (k8s-object-syncer's common use). */
function objectSync(index: number, namespaces: readonly string[]): ObjectSync {
  return {
    apiVersion: OBJECT_SYNC_API_VERSION,
    kind: OBJECT_SYNC_KIND,
    metadata: { name: syncName(index), namespace: SOURCES_NAMESPACE },
    spec: { source: { group: '', kind: 'Secret', name: sourceName(index) }, destinations: namespaces.map((namespace) => ({ namespace })) },
  };
}

/** Everything a round works on. */
interface Stage {
  kube: BenchKube;
  product: Product;
  syncs: number;
  copies: number;
  /** The unrelated distribution's one copy, by its revision. */
  admin: Tracker;
  /** The ObjectSyncs' copies, by their revision (base64, as a Secret's data). */
  storm: Tracker;
  /** The distribution label of every ObjectSync copy seen. */
  distributions: Set<string>;
  adminRevision: number;
}

async function watchCopies(stage: Stage): Promise<ObjectWatch[]> {
  const { kube, admin, storm, distributions } = stage;
  const toStorm = storm.listener();
  return Promise.all([
    watchObjects(kube.kc, ['ConfigMap'], `${LABEL_DISTRIBUTION}=${ADMIN}`, admin.listener()),
    watchObjects(kube.kc, ['Secret'], `${STORM_LABEL}=storm,${LABEL_DISTRIBUTION}`, (type, object, atMs) => {
      distributions.add(object.labels[LABEL_DISTRIBUTION] ?? '');
      toStorm(type, object, atMs);
    }),
  ]);
}

/** The namespaces, the unrelated distribution with its copy in place, the sources. */
async function prepare(stage: Stage, destinations: readonly string[], concurrency: number): Promise<void> {
  const { kube } = stage;
  await kube.createNamespaces(destinations, { [GROUP_LABEL]: GROUP }, concurrency);
  await kube.createNamespaces([SOURCES_NAMESPACE], {}, 1);
  await kube.createNamespaces([ADMIN], { [GROUP_LABEL]: ADMIN_GROUP }, 1);
  stage.admin.expect((revision) => revision === '1');
  await kube.createDistribution(groupDistribution(ADMIN, 'ConfigMap', ADMIN_GROUP, 1));
  await stage.admin.lastReachedAfter(1, 'the unrelated distribution copied');
  for (let i = 0; i < stage.syncs; i++) await kube.core.createNamespacedSecret({ namespace: SOURCES_NAMESPACE, body: sourceSecret(i, 1) });
}

/** Creates the ObjectSyncs; returns the time until every copy is visible. */
async function createObjectSyncs(stage: Stage, destinations: readonly string[]): Promise<number> {
  stage.storm.expect((revision) => revision === base64('1'));
  const started = performance.now();
  for (let i = 0; i < stage.syncs; i++) await stage.kube.custom.createNamespacedCustomObject({ ...OS, body: objectSync(i, destinations) });
  return (await stage.storm.lastReachedAfter(stage.copies, `${stage.copies} ObjectSync copies`)) - started;
}

/** Changes the unrelated distribution's data; returns when the request left and when its copy showed it. */
async function changeUnrelated(stage: Stage): Promise<{ startedAt: number; reachedAt: number }> {
  const revision = ++stage.adminRevision;
  stage.admin.expect((value) => value === String(revision));
  const startedAt = performance.now();
  await stage.kube.updateDistribution(ADMIN, (rd) => {
    rd.spec.resource = groupDistribution(ADMIN, 'ConfigMap', ADMIN_GROUP, revision).spec.resource;
  });
  return { startedAt, reachedAt: await stage.admin.lastReachedAfter(1, `the unrelated copy at revision ${revision}`) };
}

interface Work {
  writes: number;
  reconciles: number;
  cpuMs: number;
}

function workOf(before: Scrape, after: Scrape): Work {
  return { writes: requestsBetween(before, after).writes, ...workBetween(before, after) };
}

interface Round {
  idleMs: number;
  stormMs: number;
  rewrittenBeforeUnrelated: number;
  rewriteMs: number;
  work: Work;
}

/** Every source edited (so every copy must be rewritten), then at once the unrelated change. */
async function storm(stage: Stage, revision: number): Promise<Omit<Round, 'idleMs' | 'work'>> {
  const wanted = base64(String(revision));
  stage.storm.expect((value) => value === wanted);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: stage.syncs }, (_, i) => stage.kube.core.replaceNamespacedSecret({ namespace: SOURCES_NAMESPACE, name: sourceName(i), body: sourceSecret(i, revision) })),
  );
  const unrelated = await changeUnrelated(stage);
  const last = await stage.storm.lastReachedAfter(stage.copies, `${stage.copies} ObjectSync copies at revision ${revision}`);
  return {
    stormMs: unrelated.reachedAt - unrelated.startedAt,
    rewrittenBeforeUnrelated: [...stage.storm.reached.values()].filter((at) => at <= unrelated.reachedAt).length,
    rewriteMs: last - started,
  };
}

async function round(stage: Stage, index: number): Promise<Round> {
  await waitForQuiet(stage.product);
  const idle = await changeUnrelated(stage);
  const before = await waitForQuiet(stage.product);
  const rewrite = await storm(stage, index + 2);
  return { idleMs: idle.reachedAt - idle.startedAt, ...rewrite, work: workOf(before, await waitForQuiet(stage.product)) };
}

/** Deletes every ObjectSync; the product deletes their copies, then releases their finalizers. */
async function deleteObjectSyncs(stage: Stage): Promise<ContentionResult['deletion']> {
  const { kube, copies } = stage;
  await waitForQuiet(stage.product);
  const started = performance.now();
  await Promise.all(Array.from({ length: stage.syncs }, (_, i) => kube.custom.deleteNamespacedCustomObject({ ...OS, name: syncName(i) })));
  let left = stage.syncs;
  const gone = async (): Promise<boolean> => {
    left = ((await kube.custom.listNamespacedCustomObject(OS)) as { items: unknown[] }).items.length;
    return left === 0;
  };
  await waitUntil('ObjectSyncs gone', gone, 120_000 + copies * 20, () => `${left} ObjectSyncs left, ${stage.storm.latest.size} copies`, 100);
  const objectSyncsGoneMs = performance.now() - started;
  await waitUntil('ObjectSync copies gone', () => stage.storm.emptiedAt !== undefined, 30_000, () => `${stage.storm.latest.size} copies left`);
  return { copiesGoneMs: (stage.storm.emptiedAt ?? Number.NaN) - started, objectSyncsGoneMs };
}

/** The unrelated distribution and the sources; the namespaces stay, as the fleet's do. */
async function cleanUp(kube: BenchKube, syncs: number): Promise<void> {
  await kube.deleteDistribution(ADMIN);
  for (let i = 0; i < syncs; i++) await kube.core.deleteNamespacedSecret({ namespace: SOURCES_NAMESPACE, name: sourceName(i) });
}

export async function runContention(options: { kube: BenchKube; product: Product; size: BenchSize }): Promise<ContentionResult> {
  const { kube, product, size } = options;
  const { objectSyncs: syncs, destinationsPerSync, rounds } = size.contention;
  const destinations = numberedNames('bench-contention-ns', 0, destinationsPerSync);
  const stage: Stage = {
    kube,
    product,
    syncs,
    copies: syncs * destinationsPerSync,
    admin: new Tracker((object) => object.data.revision ?? ''),
    storm: new Tracker((object) => object.data.revision ?? '', byNamespacedName),
    distributions: new Set(),
    adminRevision: 1,
  };
  const watches = await watchCopies(stage);
  try {
    await prepare(stage, destinations, size.clientConcurrency);
    const createMs = await createObjectSyncs(stage, destinations);
    const results: Round[] = [];
    for (let i = 0; i < rounds; i++) results.push(await round(stage, i));
    const deletion = await deleteObjectSyncs(stage);
    await cleanUp(kube, syncs);
    return summarise(stage, destinationsPerSync, createMs, results, deletion);
  } finally {
    for (const watch of watches) watch.stop();
  }
}

function summarise(stage: Stage, destinationsPerSync: number, createMs: number, rounds: readonly Round[], deletion: ContentionResult['deletion']): ContentionResult {
  const of = (field: 'idleMs' | 'stormMs' | 'rewriteMs'): number[] => rounds.map((r) => r[field]);
  const [idleMs, stormMs, rewriteMs] = [median(of('idleMs')), median(of('stormMs')), median(of('rewriteMs'))];
  return {
    objectSyncs: stage.syncs,
    destinationsPerSync,
    copies: stage.copies,
    distributions: stage.distributions.size,
    rounds: rounds.length,
    createMs,
    idleMs,
    idleRoundsMs: of('idleMs'),
    stormMs,
    stormRoundsMs: of('stormMs'),
    rewrittenBeforeUnrelated: rounds.map((r) => r.rewrittenBeforeUnrelated),
    rewriteMs,
    rewriteRoundsMs: of('rewriteMs'),
    copiesPerSecond: ratio(stage.copies * 1000, rewriteMs),
    rewriteWork: { writes: median(rounds.map((r) => r.work.writes)), reconciles: median(rounds.map((r) => r.work.reconciles)), cpuMs: median(rounds.map((r) => r.work.cpuMs)) },
    ratio: ratio(stormMs, idleMs),
    deletion,
  };
}
