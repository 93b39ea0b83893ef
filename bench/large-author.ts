// 8. Large distributions by authors whom RBAC allows: N listed namespace names, each namespace
// holding a RoleBinding that grants user A (namespace-scoped) create and update on ConfigMaps;
// user B holds the same ClusterRole through a ClusterRoleBinding (cluster-wide). Requests are sent
// through the API server as those users (the admin client impersonating them, a new connection per
// request as kubectl makes one per command) and timed from the request until its answer, as a user
// sees it. Per round: a dry-run create (dryRun=All: the distribution webhook is called, its
// sideEffects are None, and nothing is stored, so no copies disturb the next figure) of the N-name
// distribution by A, the same by B, and a label-only merge patch (what `kubectl label` sends) of
// the same N-name distribution, created for real by A before the rounds (its N copies written).
// Every round starts once the access-review answers the product remembers (RD_SAR_CACHE_TTL) have
// expired: each create is an author's first try.
// Baseline, in the same rounds: the same requests by the same users with the product's
// distribution webhook pointed at a trivial admission route (the bench's baseline server, same
// certificate: it reads and parses the review and allows it), so that the API server's own work
// (authorization, schema validation of N entries, calling a webhook with the body) is the same and
// only the product's admission work differs. The namespaces are deleted at the end, not waited for
// (the namespace controller takes minutes for thousands): the section runs last.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  AdmissionregistrationV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { mapBounded } from '../src/bounded.js';
import { GROUP, PLURAL, VERSION, type ResourceDistribution } from '../src/domain/types.js';
import { describeApiError, isNotFound } from '../src/k8s/errors.js';
import { distribution } from '../test/unit/builders.js';
import { BASELINE_ADMISSION_PATH, startBaselineServer } from './baseline-server.js';
import { GROUP_LABEL, numberedNames, type BenchKube } from './bench-kube.js';
import { waitForQuiet, type Product } from './product.js';
import type { Scrape } from './scrape.js';
import { median, ratio, summarize } from './stats.js';
import { waitUntil } from './wait.js';

/** One request as its user saw it, and what the product did for it (from its /metrics). */
export interface Attempt {
  ms: number;
  allowed: boolean;
  code?: number;
  message?: string;
  /** SubjectAccessReviews the product sent meanwhile. */
  accessReviews: number;
  /** The product's distribution webhook: calls and its own time (body read to verdict) meanwhile. */
  webhookCalls: number;
  webhookMs: number;
}

export interface LargeAuthorRow {
  /** One attempt per round each. */
  product: Attempt[];
  baseline: Attempt[];
  productMs: { p50: number; max: number };
  baselineMs: { p50: number; max: number };
  /** product p50 / baseline p50. */
  ratio: number;
  /** The product's own time (its admission histogram), median over rounds. */
  webhookMs: number;
  /** Answers other than allowed, product side (message's first line). */
  denied: string[];
}

export interface LargeAuthorResult {
  namespaces: number;
  rounds: number;
  /** How long the product remembers an access review's answer; every round waits that long after A's last create. */
  sarCacheTtlMs: number;
  /** The create request's JSON body. */
  bodyBytes: number;
  /** N namespaces and N RoleBindings created (the bench's own client, bounded concurrency). */
  setupMs: number;
  /** The stored distribution: created for real by A (first try), then every copy written. */
  stored: { create: Attempt; convergedMs: number };
  rows: { namespaceScoped: LargeAuthorRow; clusterWide: LargeAuthorRow; labelUpdate: LargeAuthorRow };
  /** The namespaces' delete requests (the namespace controller removes them afterwards, not waited for). */
  cleanup: { deleteRequestsMs: number };
}

const RD = { group: GROUP, version: VERSION, plural: PLURAL };
const NAMESPACE_AUTHOR = 'bench-large-author-ns';
const CLUSTER_AUTHOR = 'bench-large-author-cluster';
/** Holds one RoleBinding, created after all of A's: once the product's RBAC cache grants it, it has seen them all. */
const SENTINEL = 'bench-large-author-sentinel';
const WRITER_ROLE = 'bench-large-author-configmaps';
const AUTHORS_ROLE = 'bench-large-author-distributions';
const STORED = 'bench-large-author';
const DRY_RUN_NAME = 'bench-large-author-dry';
const PROBE_NAME = 'bench-large-author-probe';
const NAMESPACE_GROUP = 'large-author';
const ROUND_LABEL = 'bench.resource-distributor.io/round';
const DISTRIBUTIONS_WEBHOOK = 'resourcedistributions.resource-distributor.io';
const REQUESTS = 'resource_distributor_api_requests_total';
const DURATION = 'resource_distributor_admission_duration_seconds';
const RBAC_API = 'rbac.authorization.k8s.io';
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

type Side = 'product' | 'baseline';

/** The admin kubeconfig, impersonating `user` (the Impersonate-User header). */
function impersonating(kc: KubeConfig, user: string): CustomObjectsApi {
  const admin = kc.getCurrentUser();
  if (!admin) throw new Error('the admin kubeconfig has no user');
  const impersonated = new KubeConfig();
  impersonated.loadFromOptions({
    clusters: kc.clusters,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
    users: kc.users.map((u) => (u.name === admin.name ? { ...u, impersonateUser: user } : u)),
  });
  return impersonated.makeApiClient(CustomObjectsApi);
}

/** A ConfigMap distribution of a few hundred bytes listing `namespaces` by name. */
function listing(name: string, namespaces: readonly string[], kind = 'ConfigMap'): ResourceDistribution {
  const rd = distribution(name)
    .configMap('bench-large-author', { 'settings.properties': 'feature.a=on\nfeature.b=off\nlimit=100\n', endpoint: 'https://service.example.internal:8443/api' })
    .included(...namespaces)
    .build();
  return { ...rd, metadata: { name }, spec: { ...rd.spec, resource: { ...rd.spec.resource, kind } } };
}

interface Stage {
  kube: BenchKube;
  product: Product;
  names: string[];
  asNamespaceAuthor: CustomObjectsApi;
  asClusterAuthor: CustomObjectsApi;
  asSentinel: CustomObjectsApi;
  /** The dry-run create body (every name listed). */
  body: ResourceDistribution;
  /** When the access-review answers remembered for A's last create have expired (performance.now() ms). */
  coldAt: number;
}

function delta(before: Scrape, after: Scrape, name: string, labels: Record<string, string>): number {
  return after.sum(name, labels) - before.sum(name, labels);
}

/** Runs `call` and times it; a refusal is an answer, recorded with its code and message. */
async function timed(product: Product, call: () => Promise<unknown>): Promise<Attempt> {
  const before = await product.scrape();
  let outcome: Pick<Attempt, 'allowed' | 'code' | 'message'> = { allowed: true };
  const started = performance.now();
  try {
    await call();
  } catch (error) {
    const info = describeApiError(error);
    outcome = { allowed: false, code: info.code, message: info.message };
  }
  const ms = performance.now() - started;
  const after = await product.scrape();
  const webhook = { webhook: 'distributions' };
  return {
    ms,
    ...outcome,
    accessReviews: delta(before, after, REQUESTS, { resource: 'subjectaccessreviews' }),
    webhookCalls: delta(before, after, `${DURATION}_count`, webhook),
    webhookMs: delta(before, after, `${DURATION}_sum`, webhook) * 1000,
  };
}

async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

const user = (name: string): { apiGroup: string; kind: string; name: string } => ({ apiGroup: RBAC_API, kind: 'User', name });
const clusterRole = (name: string): { apiGroup: string; kind: string; name: string } => ({ apiGroup: RBAC_API, kind: 'ClusterRole', name });

/** The ClusterRoles, B's and everyone's ClusterRoleBindings, then N namespaces each with A's RoleBinding, then the sentinel's. */
async function setUp(stage: Stage, rbac: RbacAuthorizationV1Api, concurrency: number): Promise<number> {
  const started = performance.now();
  await rbac.createClusterRole({ body: { metadata: { name: WRITER_ROLE }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'update'] }] } });
  await rbac.createClusterRole({ body: { metadata: { name: AUTHORS_ROLE }, rules: [{ apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'create', 'update', 'patch'] }] } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name: AUTHORS_ROLE }, roleRef: clusterRole(AUTHORS_ROLE), subjects: [user(NAMESPACE_AUTHOR), user(CLUSTER_AUTHOR), user(SENTINEL)] },
  });
  await rbac.createClusterRoleBinding({ body: { metadata: { name: CLUSTER_AUTHOR }, roleRef: clusterRole(WRITER_ROLE), subjects: [user(CLUSTER_AUTHOR)] } });
  const roleBinding = (name: string) => ({ metadata: { name }, roleRef: clusterRole(WRITER_ROLE), subjects: [user(name)] });
  await mapBounded(stage.names, concurrency, async (namespace) => {
    await stage.kube.core.createNamespace({ body: { metadata: { name: namespace, labels: { [GROUP_LABEL]: NAMESPACE_GROUP } } } });
    await rbac.createNamespacedRoleBinding({ namespace, body: roleBinding(NAMESPACE_AUTHOR) });
  });
  await rbac.createNamespacedRoleBinding({ namespace: stage.names.at(-1) ?? '', body: roleBinding(SENTINEL) });
  return performance.now() - started;
}

/**
 * Until the product's RBAC cache has seen the sentinel's RoleBinding (hence every one before it):
 * a dry-run create by the sentinel listing its namespace costs only the two cluster-wide questions
 * (create, update: not granted cluster-wide), none for the namespace. A retry waits for the
 * remembered answers to expire, so that it asks again.
 */
async function waitForRbacCache(stage: Stage): Promise<void> {
  const body = listing(PROBE_NAME, [stage.names.at(-1) ?? '']);
  for (let attempt = 1; ; attempt++) {
    await sleep(1000);
    const probe = await timed(stage.product, () => stage.asSentinel.createClusterCustomObject({ ...RD, body, dryRun: 'All' }));
    if (!probe.allowed) throw new Error(`large-author: the RBAC probe was refused (${probe.code ?? '?'}): ${probe.message ?? ''}`);
    if (probe.accessReviews <= 2) return;
    if (attempt >= 5) throw new Error(`large-author: the product's RBAC cache did not grant the sentinel's RoleBinding (${probe.accessReviews} access reviews)`);
    await sleep(stage.product.sarCacheTtlMs);
  }
}

/** Points the API server's call of the distribution webhook at the product or at the baseline route. */
class WebhookSwitch {
  private configName = '';
  private productUrl = '';
  private readonly probe: ResourceDistribution;

  constructor(
    private readonly api: AdmissionregistrationV1Api,
    private readonly admin: CustomObjectsApi,
    private readonly baselineUrl: string,
    namespace: string,
  ) {
    // A template kind the product refuses and the trivial route allows: the answer says who was asked.
    this.probe = listing(PROBE_NAME, [namespace], 'Pod');
  }

  private async find(): Promise<{ config: V1ValidatingWebhookConfiguration; index: number }> {
    for (const config of (await this.api.listValidatingWebhookConfiguration()).items) {
      const index = (config.webhooks ?? []).findIndex((w) => w.name === DISTRIBUTIONS_WEBHOOK);
      if (index >= 0) return { config, index };
    }
    throw new Error(`large-author: no ValidatingWebhookConfiguration holds ${DISTRIBUTIONS_WEBHOOK}`);
  }

  private async answeredBy(): Promise<Side> {
    try {
      await this.admin.createClusterCustomObject({ ...RD, body: this.probe, dryRun: 'All' });
      return 'baseline';
    } catch (error) {
      const info = describeApiError(error);
      if (info.message.includes('spec.resource.kind')) return 'product';
      throw error;
    }
  }

  /** Rewrites the webhook's URL, then waits until the API server calls the new one (its connection warmed by the probe). */
  async to(side: Side): Promise<void> {
    const { config, index } = await this.find();
    const webhook = config.webhooks?.[index];
    if (!webhook?.clientConfig.url) throw new Error('large-author: the distribution webhook is not registered by URL');
    if (this.productUrl === '') [this.configName, this.productUrl] = [config.metadata?.name ?? '', webhook.clientConfig.url];
    const url = side === 'product' ? this.productUrl : this.baselineUrl;
    if (webhook.clientConfig.url !== url) {
      webhook.clientConfig.url = url;
      await this.api.replaceValidatingWebhookConfiguration({ name: this.configName, body: config });
    }
    await waitUntil(`the API server to call the ${side} for distributions`, async () => (await this.answeredBy()) === side, 30_000, undefined, 100);
  }
}

/** A's create, B's create, A's label patch of the stored distribution, on one side. */
async function measure(stage: Stage, side: Side, label: string): Promise<Attempt[]> {
  const { product, body } = stage;
  await waitForQuiet(product, 1000);
  if (side === 'product') await sleep(Math.max(0, stage.coldAt - performance.now()));
  const namespaceScoped = await timed(product, () => stage.asNamespaceAuthor.createClusterCustomObject({ ...RD, body, dryRun: 'All' }));
  if (side === 'product') stage.coldAt = performance.now() + product.sarCacheTtlMs + 500;
  const clusterWide = await timed(product, () => stage.asClusterAuthor.createClusterCustomObject({ ...RD, body, dryRun: 'All' }));
  const labels = { metadata: { labels: { [ROUND_LABEL]: label } } };
  const labelUpdate = await timed(product, () => stage.asNamespaceAuthor.patchClusterCustomObject({ ...RD, name: STORED, body: labels }, MERGE_PATCH));
  const attempts = [namespaceScoped, clusterWide, labelUpdate];
  // The switch is checked by every request: the product's webhook is called by its own, never by the baseline's.
  const calls = attempts.map((a) => a.webhookCalls);
  if (calls.some((n) => (side === 'product' ? n < 1 : n !== 0))) throw new Error(`large-author: ${side} requests made ${calls.join(', ')} product webhook calls`);
  return attempts;
}

/** The stored N-name distribution, created for real by A, until its status reports every copy written. */
async function createStored(stage: Stage): Promise<LargeAuthorResult['stored']> {
  const { kube, product, names } = stage;
  const started = performance.now();
  const create = await timed(product, () => stage.asNamespaceAuthor.createClusterCustomObject({ ...RD, body: listing(STORED, names) }));
  stage.coldAt = performance.now() + product.sarCacheTtlMs + 500;
  if (!create.allowed) throw new Error(`large-author: the ${names.length}-name distribution was refused to A (${create.code ?? '?'}): ${create.message ?? ''}`);
  let status = '';
  await waitUntil(
    `the ${names.length}-name distribution converged`,
    async () => {
      const rd = await kube.getDistribution(STORED);
      status = `generation ${rd.metadata.generation ?? '?'}, observed ${rd.status?.observedGeneration ?? '-'}, succeeded ${rd.status?.succeeded ?? '-'}`;
      return rd.status?.observedGeneration === rd.metadata.generation && rd.status?.succeeded === names.length;
    },
    60_000 + names.length * 30,
    () => status,
    250,
  );
  return { create, convergedMs: performance.now() - started };
}

function row(product: Attempt[], baseline: Attempt[]): LargeAuthorRow {
  const [p, b] = [summarize(product.map((a) => a.ms)), summarize(baseline.map((a) => a.ms))];
  return {
    product,
    baseline,
    productMs: { p50: p.p50, max: p.max },
    baselineMs: { p50: b.p50, max: b.max },
    ratio: ratio(p.p50, b.p50),
    webhookMs: median(product.map((a) => a.webhookMs)),
    denied: product.filter((a) => !a.allowed).map((a) => `${a.code ?? '?'}: ${(a.message ?? '').split('\n')[0] ?? ''}`),
  };
}

/**
 * The distribution and the RBAC objects, then the namespaces (their RoleBindings and copies go
 * with them). Not waited for: the namespace controller takes minutes for thousands of them.
 */
async function cleanUp(stage: Stage, rbac: RbacAuthorizationV1Api, concurrency: number): Promise<LargeAuthorResult['cleanup']> {
  const { kube, names } = stage;
  await ignoreNotFound(kube.deleteDistribution(STORED));
  for (const name of [AUTHORS_ROLE, CLUSTER_AUTHOR]) await ignoreNotFound(rbac.deleteClusterRoleBinding({ name }));
  for (const name of [AUTHORS_ROLE, WRITER_ROLE]) await ignoreNotFound(rbac.deleteClusterRole({ name }));
  const started = performance.now();
  await mapBounded(names, concurrency, (name) => ignoreNotFound(kube.core.deleteNamespace({ name })));
  return { deleteRequestsMs: performance.now() - started };
}

export async function runLargeAuthor(options: { kube: BenchKube; product: Product; namespaces: number; rounds: number; concurrency: number }): Promise<LargeAuthorResult> {
  const { kube, product, rounds, concurrency } = options;
  const names = numberedNames('bench-large-author-ns', 0, options.namespaces);
  const rbac = kube.kc.makeApiClient(RbacAuthorizationV1Api);
  const stage: Stage = {
    kube,
    product,
    names,
    asNamespaceAuthor: impersonating(kube.kc, NAMESPACE_AUTHOR),
    asClusterAuthor: impersonating(kube.kc, CLUSTER_AUTHOR),
    asSentinel: impersonating(kube.kc, SENTINEL),
    body: listing(DRY_RUN_NAME, names),
    coldAt: 0,
  };
  const baselineServer = await startBaselineServer(product.certificates.serving);
  const webhook = new WebhookSwitch(
    kube.kc.makeApiClient(AdmissionregistrationV1Api),
    kube.custom,
    `https://127.0.0.1:${baselineServer.port}${BASELINE_ADMISSION_PATH}`,
    names[0] ?? '',
  );
  let cleanup: LargeAuthorResult['cleanup'] | undefined;
  try {
    const setupMs = await setUp(stage, rbac, concurrency);
    await waitForRbacCache(stage);
    const stored = await createStored(stage);
    const attempts: Record<Side, Attempt[][]> = { product: [], baseline: [] };
    for (let i = 0; i < rounds; i++) {
      attempts.product.push(await measure(stage, 'product', `product-${i}`));
      await webhook.to('baseline');
      attempts.baseline.push(await measure(stage, 'baseline', `baseline-${i}`));
      await webhook.to('product');
    }
    cleanup = await cleanUp(stage, rbac, concurrency);
    const column = (side: Side, index: number): Attempt[] => attempts[side].map((round) => round[index] as Attempt);
    const rowOf = (index: number): LargeAuthorRow => row(column('product', index), column('baseline', index));
    return {
      namespaces: names.length,
      rounds,
      sarCacheTtlMs: product.sarCacheTtlMs,
      bodyBytes: Buffer.byteLength(JSON.stringify(stage.body)),
      setupMs,
      stored,
      rows: { namespaceScoped: rowOf(0), clusterWide: rowOf(1), labelUpdate: rowOf(2) },
      cleanup,
    };
  } finally {
    try {
      // Already so after the last round; after a failure, later sections must find the product called again.
      await webhook.to('product');
    } finally {
      await baselineServer.close(1000);
      if (cleanup === undefined) await cleanUp(stage, rbac, concurrency).catch(() => undefined);
    }
  }
}
