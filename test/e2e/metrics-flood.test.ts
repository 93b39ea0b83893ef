// /metrics under a flood of random bearer tokens, against the real API server: no cache can help
// with tokens never seen before, so each would cost a TokenReview. The API server's own count of
// TokenReviews shows the flood costs at most the configured burst and rate, while a scraper with a
// token allowed to get /metrics is answered 200 throughout, also after its cached answer expired.
import { randomBytes } from 'node:crypto';
import { Agent, request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import { RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { apiserverMetrics } from '../control-plane/apiserver-metrics.js';
import { connectionOf } from '../kube-client.js';
import { Kube } from './fixtures/kube.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';
import { serviceAccountKubeConfig } from './support/service-account.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
const metrics = createMetrics();
const readerRole = uniqueName('metrics-reader');
const LIMITS = { rate: 5, burst: 10, concurrency: 4 };
/** Shorter than the flood: the scraper's answer expires during it and is asked again. */
const ANSWER_TTL_SECONDS = 2;
const FLOOD_SECONDS = 8;
const FLOOD_CONNECTIONS = 32;
let server: RunningServer;
let scraperToken: string;

interface Answer {
  status: number;
  retryAfter: string | undefined;
}

function scrape(agent: Agent, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const options = { ca: server.certificates.current()?.trust, agent, headers: { authorization: `Bearer ${token}` } };
    const req = httpsRequest(`https://127.0.0.1:${server.port}/metrics`, options, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** kube-apiserver's own count of TokenReviews it has answered (every client's), from its /metrics. */
async function apiserverTokenReviews(): Promise<number> {
  const text = await apiserverMetrics(kc);
  return text
    .split('\n')
    .filter((line) => line.startsWith('apiserver_request_total{') && line.includes('resource="tokenreviews"'))
    .reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Random tokens on `connections` kept-alive connections until `until`; the answers by status. */
async function flood(until: number, connections: number): Promise<{ statuses: Record<number, number>; without429RetryAfter: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const statuses: Record<number, number> = {};
  let without429RetryAfter = 0;
  const worker = async (): Promise<void> => {
    while (performance.now() < until) {
      const answer = await scrape(agent, randomBytes(24).toString('base64url'));
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (answer.status === 429 && answer.retryAfter === undefined) without429RetryAfter++;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
  return { statuses, without429RetryAfter };
}

beforeAll(async () => {
  const namespace = (await kube.createNamespace('scrapers')).metadata!.name!;
  await kube.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'prometheus' } } });
  await rbac.createClusterRole({ body: { metadata: { name: readerRole }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] } });
  await rbac.createClusterRoleBinding({
    body: { metadata: { name: readerRole }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: readerRole }, subjects: [{ kind: 'ServiceAccount', namespace, name: 'prometheus' }] },
  });
  scraperToken = (await serviceAccountKubeConfig(kc, namespace, 'prometheus')).getCurrentUser()?.token ?? '';
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env: {
      RD_METRICS_AUTH: 'true',
      RD_SAR_CACHE_TTL: `${ANSWER_TTL_SECONDS}s`,
      RD_METRICS_REVIEW_RATE: String(LIMITS.rate),
      RD_METRICS_REVIEW_BURST: String(LIMITS.burst),
      RD_METRICS_REVIEW_CONCURRENCY: String(LIMITS.concurrency),
    },
    overrides: { webhookNames: { distributions: uniqueName('e2e-flood-distributions'), namespaces: uniqueName('e2e-flood-namespaces') }, shutdownDelayMs: 0 },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
  await rbac.deleteClusterRoleBinding({ name: readerRole }).catch(() => undefined);
  await rbac.deleteClusterRole({ name: readerRole }).catch(() => undefined);
});

describe('/metrics under a flood of random bearer tokens', () => {
  it('costs the API server at most the burst and rate of TokenReviews, and the scraper is served throughout', async () => {
    const scraperAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await scrape(scraperAgent, scraperToken)).status).toBe(200);
    const before = await apiserverTokenReviews();
    const started = performance.now();
    const until = started + FLOOD_SECONDS * 1000;

    const scraper: number[] = [];
    const scraping = (async (): Promise<void> => {
      while (performance.now() < until) {
        scraper.push((await scrape(scraperAgent, scraperToken)).status);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const [{ statuses, without429RetryAfter }] = await Promise.all([flood(until, FLOOD_CONNECTIONS), scraping]);
    const seconds = (performance.now() - started) / 1000;
    scraperAgent.destroy();
    const reviews = (await apiserverTokenReviews()) - before;

    const sent = Object.values(statuses).reduce((a, b) => a + b, 0);
    expect(sent, 'a flood: many more scrapes than the limits allow reviews').toBeGreaterThan(20 * (LIMITS.burst + LIMITS.rate * seconds));
    expect(Object.keys(statuses).sort(), JSON.stringify(statuses)).toEqual(['401', '429']);
    expect(without429RetryAfter).toBe(0);
    // The flood's reviews, plus the scraper's: one each time its answer expired.
    const bound = LIMITS.burst + LIMITS.rate * Math.ceil(seconds) + Math.ceil(seconds / ANSWER_TTL_SECONDS) + 1;
    expect(reviews, `${reviews} TokenReviews for ${sent} scrapes in ${seconds.toFixed(1)} s`).toBeLessThanOrEqual(bound);
    expect(statuses[401], 'the flood’s reviews answered').toBeGreaterThan(0);
    expect(scraper.length).toBeGreaterThan(FLOOD_SECONDS);
    expect(scraper.every((status) => status === 200), `the scraper's answers: ${scraper.join(',')}`).toBe(true);

    // The product's own counts agree with the API server's.
    const own = (await metrics.scrapeReviews.get()).values.reduce((total, v) => total + v.value, 0);
    const refused = (await metrics.scrapeReviewsRefused.get()).values.reduce((total, v) => total + v.value, 0);
    expect(own).toBeLessThanOrEqual(bound + 1);
    expect(refused).toBe(statuses[429]);
  });
});
