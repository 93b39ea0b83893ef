// Metrics flood (only with `--only metrics-flood`): the product restarted with RD_METRICS_AUTH, as
// in a cluster, and its /metrics flooded over loopback with random bearer tokens (no cache can help
// with them) for a bounded time and count, beside a scraper whose token may get /metrics: first at
// a fixed rate, then as fast as the connections go. In each phase (and in a quiet one before),
// labelled namespaces are created at a fixed rate and timed until their copy shows: what the flood
// costs everyone else. The API server counts the TokenReviews itself (apiserver_request_total),
// whatever the product's own metrics say.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { LABEL_DISTRIBUTION } from '../src/domain/types.js';
import { GROUP_LABEL, groupDistribution, numberedNames, type BenchKube } from './bench-kube.js';
import { watchObjects } from './object-watch.js';
import type { Product } from './product.js';
import { fmtMs, table } from './format.js';
import { apiserverMetrics } from '../test/control-plane/apiserver-metrics.js';
import { parseMetrics } from './scrape.js';
import type { BenchSize } from './sizes.js';
import { summarize, type Summary } from './stats.js';
import { waitUntil } from './wait.js';

const FLOOD_GROUP = 'metrics-flood';
const DISTRIBUTION = 'bench-metrics-flood';
const REFUSED = 'resource_distributor_scrape_reviews_refused_total';

/** quiet: no flood; paced: random tokens at `pacedPerSecond` (the rate one client reached against it); flood: as fast as the connections go. */
export type FloodPhaseName = 'quiet' | 'paced' | 'flood';

export interface FloodPhase {
  phase: FloodPhaseName;
  seconds: number;
  /** Scrapes with random tokens sent (over `floodSeconds`: until the phase ends or the count is reached), and their answers by HTTP status. */
  scrapes: number;
  floodSeconds: number;
  answers: Record<string, number>;
  /** The 429s by the product's reason (resource_distributor_scrape_reviews_refused_total): rate, concurrency. */
  refused: Record<string, number>;
  /** TokenReviews the API server answered during the phase (every client's: the product is the only one asking). */
  tokenReviews: number;
  /** The scraper's scrapes, and those not answered 200. */
  scraper: { scrapes: number; refused: number };
  /** Namespace create response -> its copy visible. */
  copyLatencyMs: Summary;
}

export interface MetricsFloodResult {
  connections: number;
  pacedPerSecond: number;
  /** The product's review limits (RD_METRICS_REVIEW_*); undefined: a build without them. */
  limits: { ratePerSecond: number; burst: number; concurrency: number } | undefined;
  phases: FloodPhase[];
}

/** kube-apiserver's count of TokenReviews answered, from its own /metrics (the bench's admin may read them). */
async function apiserverTokenReviews(kc: KubeConfig): Promise<number> {
  const text = await apiserverMetrics(kc);
  return parseMetrics(text).sum('apiserver_request_total', { resource: 'tokenreviews' });
}

function scrapeWithToken(agent: Agent, port: number, token: string): Promise<number> {
  return new Promise((resolve) => {
    // Loopback to our own child; its CA is checked by the admission preflight, not here.
    const req = request({ host: '127.0.0.1', port, path: '/metrics', agent, rejectUnauthorized: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

interface FloodOptions {
  port: number;
  until: number;
  connections: number;
  maxScrapes: number;
  /** Scrapes sent evenly spaced at this rate (as far as the connections keep up); undefined: as fast as they go. */
  perSecond?: number;
}

/** Random tokens on `connections` kept-alive connections until `until` or `maxScrapes` sent. */
async function flood({ port, until, connections, maxScrapes, perSecond }: FloodOptions): Promise<{ scrapes: number; floodSeconds: number; answers: Record<string, number> }> {
  const started = performance.now();
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const answers: Record<string, number> = {};
  let scrapes = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < until && scrapes < maxScrapes) {
      const index = scrapes++;
      if (perSecond !== undefined) await sleep(Math.max(0, started + (index * 1000) / perSecond - performance.now()));
      const status = String(await scrapeWithToken(agent, port, randomBytes(24).toString('base64url')));
      answers[status] = (answers[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return { scrapes, floodSeconds: (performance.now() - started) / 1000, answers };
}

/** The product's own scrapes (its token may get /metrics), once a second, as Prometheus scrapes. */
async function scraper(product: Product, until: number): Promise<{ scrapes: number; refused: number }> {
  let scrapes = 0;
  let refused = 0;
  while (performance.now() < until) {
    scrapes++;
    await product.scrape().catch(() => refused++);
    await sleep(1000);
  }
  return { scrapes, refused };
}

interface PhaseOptions {
  kube: BenchKube;
  product: Product;
  size: BenchSize;
  seen: Map<string, number>;
}

async function runPhase(phase: FloodPhaseName, { kube, product, size, seen }: PhaseOptions): Promise<FloodPhase> {
  const { seconds, connections, maxScrapes, probes, pacedPerSecond } = size.metricsFlood;
  const namespaces = numberedNames(`bench-flood-${phase}`, 0, probes);
  const before = await apiserverTokenReviews(kube.kc);
  const ownBefore = await product.scrape();
  const started = performance.now();
  const until = started + seconds * 1000;
  const [created, sent, scraped] = await Promise.all([
    kube.createNamespacesAtRate(namespaces, { [GROUP_LABEL]: FLOOD_GROUP }, probes / seconds),
    phase === 'quiet'
      ? Promise.resolve({ scrapes: 0, floodSeconds: 0, answers: {} })
      : flood({ port: product.port, until, connections, maxScrapes, ...(phase === 'paced' ? { perSecond: pacedPerSecond } : {}) }),
    scraper(product, until),
  ]);
  const elapsed = (performance.now() - started) / 1000;
  const tokenReviews = (await apiserverTokenReviews(kube.kc)) - before;
  const ownAfter = await product.scrape();
  const refused = Object.fromEntries(
    ['rate', 'concurrency'].map((reason) => [reason, ownAfter.sum(REFUSED, { reason }) - ownBefore.sum(REFUSED, { reason })]),
  );
  await waitUntil(`the copies in ${probes} namespaces`, () => namespaces.every((ns) => seen.has(ns)), 60_000, () => `${namespaces.filter((ns) => seen.has(ns)).length} of ${probes}`);
  const latencies = namespaces.map((ns) => (seen.get(ns) ?? Number.NaN) - (created.get(ns)?.at ?? Number.NaN));
  return { phase, seconds: elapsed, ...sent, refused, tokenReviews, scraper: scraped, copyLatencyMs: summarize(latencies) };
}

export async function runMetricsFlood(options: { kube: BenchKube; product: Product; size: BenchSize }): Promise<MetricsFloodResult> {
  const { kube, product, size } = options;
  await kube.createDistribution(groupDistribution(DISTRIBUTION, 'ConfigMap', FLOOD_GROUP));
  await kube.waitForDistributions('the flood distribution seen by the product', (items) => items.some((rd) => rd.metadata.name === DISTRIBUTION && rd.status?.observedGeneration === rd.metadata.generation), 30_000);
  const seen = new Map<string, number>();
  const watch = await watchObjects(kube.kc, ['ConfigMap'], `${LABEL_DISTRIBUTION}=${DISTRIBUTION}`, (type, object, atMs) => {
    if (type !== 'DELETED' && !seen.has(object.namespace)) seen.set(object.namespace, atMs);
  });
  try {
    const phases: FloodPhase[] = [];
    for (const phase of ['quiet', 'paced', 'flood'] as const) phases.push(await runPhase(phase, { kube, product, size, seen }));
    return { connections: size.metricsFlood.connections, pacedPerSecond: size.metricsFlood.pacedPerSecond, limits: product.metricsReviews, phases };
  } finally {
    watch.stop();
    await kube.deleteDistribution(DISTRIBUTION);
  }
}

const perSecond = (n: number, seconds: number): string => (seconds > 0 ? (n / seconds).toFixed(0) : 'n/a');

export function renderMetricsFlood(result: MetricsFloodResult): string {
  const limits = result.limits === undefined
    ? 'no review limits (a build before RD_METRICS_REVIEW_*: one TokenReview per new token)'
    : `review limits ${result.limits.ratePerSecond}/s, burst ${result.limits.burst}, ${result.limits.concurrency} in flight`;
  const rows = result.phases.map((p) => [
    p.phase,
    p.seconds.toFixed(1),
    p.floodSeconds > 0 ? p.floodSeconds.toFixed(1) : '-',
    String(p.scrapes),
    perSecond(p.scrapes, p.floodSeconds),
    Object.entries(p.answers).map(([status, n]) => `${status}: ${n}`).join(', ') || '-',
    p.refused.rate || p.refused.concurrency ? `${p.refused.rate ?? 0} / ${p.refused.concurrency ?? 0}` : '-',
    String(p.tokenReviews),
    perSecond(p.tokenReviews, p.seconds),
    `${p.scraper.scrapes - p.scraper.refused} of ${p.scraper.scrapes}`,
    fmtMs(p.copyLatencyMs.p50),
    fmtMs(p.copyLatencyMs.max),
  ]);
  return [
    '## Metrics flood',
    '',
    `The product with RD_METRICS_AUTH (${limits}); its /metrics flooded over loopback with random bearer tokens on ${result.connections} kept-alive connections, ` +
      `paced at ${result.pacedPerSecond}/s, then as fast as they go, ` +
      'beside a scraper whose token may get /metrics (once a second). In each phase labelled namespaces are created at a fixed rate; ' +
      'a copy\'s latency runs from the namespace create response to the copy seen through a watch. The flood stops at the end of the phase or at its bounded count, whichever comes first. ' +
      'TokenReviews (over the whole phase) as counted by kube-apiserver; its scraper\'s among them (one per RD_SAR_CACHE_TTL, 10 s here).',
    '',
    table(['phase', 's', 'flood s', 'flood scrapes', 'per s', 'answers', '429: rate / concurrency', 'TokenReviews', 'per s', 'scraper 200', 'new copy p50', 'max'], rows),
  ].join('\n');
}
