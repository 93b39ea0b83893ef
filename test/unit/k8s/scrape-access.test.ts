import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createScrapeAccess, type ScrapeLimits, type ScrapeVerdict } from '../../../src/k8s/scrape-access.js';
import { createScrapeReviewer } from '../../../src/k8s/scrape-review.js';
import type { CallOptions, KubeClient } from '../../../src/k8s/kube-client.js';
import { createLogger } from '../../../src/log.js';
import { createMetrics } from '../../../src/metrics.js';

interface Call {
  path: string;
  body: { spec: Record<string, unknown> };
}

/**
 * Our KubeClient as the API server answers reviews: `users` maps a token to its user name (any
 * other token is not authenticated), `readers` are the users allowed `get` on /metrics. With
 * `held`, every review waits until `release()`; with `failing`, each answers 500.
 */
class ReviewingClient implements KubeClient {
  readonly calls: Call[] = [];
  private readonly waiting: (() => void)[] = [];
  held = false;
  failing = false;
  constructor(
    readonly users: Map<string, string> = new Map(),
    readonly readers: Set<string> = new Set(),
  ) {}

  async request<T>(_method: string, path: string, options?: CallOptions): Promise<T> {
    const call = { path, body: options?.body as Call['body'] };
    this.calls.push(call);
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    if (this.failing) throw Object.assign(new Error(`request to ${path} failed: ${JSON.stringify(call.body)}`), { code: 500, body: { reason: 'InternalError', message: 'etcd is down' } });
    if (path.endsWith('/tokenreviews')) {
      const username = this.users.get(String(call.body.spec.token));
      return { status: username === undefined ? { authenticated: false } : { authenticated: true, user: { username, groups: ['system:authenticated'] } } } as T;
    }
    return { status: { allowed: this.readers.has(String(call.body.spec.user)) } } as T;
  }

  release(): void {
    this.held = false;
    for (const resume of this.waiting.splice(0)) resume();
  }

  tokenReviews(): number {
    return this.calls.filter((call) => call.path.endsWith('/tokenreviews')).length;
  }

  watch(): never {
    throw new Error('no watches here');
  }

  keepOpen(): void {
    // No connections.
  }

  connectionsOpened(): number {
    return 0;
  }

  close(): void {}
}

const GENEROUS: ScrapeLimits = { ratePerSecond: 1000, burst: 1000, concurrency: 1000 };

function setUp(options: { limits?: Partial<ScrapeLimits>; ttlMs?: number } = {}) {
  const client = new ReviewingClient(new Map([['prometheus-token', 'prometheus'], ['tenant-token', 'alice']]), new Set(['prometheus']));
  const metrics = createMetrics();
  const logs: string[] = [];
  const log = createLogger({ level: 'info', destination: new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(chunk.toString('utf8')), done()) }) });
  // Not 0: the caches take a start time of 0 for "never set".
  let nowMs = 1_000_000;
  const access = createScrapeAccess(createScrapeReviewer(client, { path: '/metrics', metrics }), {
    ttlMs: options.ttlMs ?? 10_000,
    limits: { ...GENEROUS, ...options.limits },
    log,
    metrics,
    now: () => nowMs,
  });
  const scrape = (token: string | undefined): Promise<ScrapeVerdict> => access.check(token === undefined ? undefined : `Bearer ${token}`);
  const flood = (count: number, from = 0): Promise<ScrapeVerdict[]> => Promise.all(Array.from({ length: count }, (_, i) => scrape(`random-${from + i}`)));
  const counted = async (metric: 'scrapeReviews' | 'scrapeReviewsRefused'): Promise<Record<string, number>> =>
    Object.fromEntries((await metrics[metric].get()).values.map((v) => [String(Object.values(v.labels)[0]), v.value]));
  return { client, metrics, logs, access, scrape, flood, counted, advance: (ms: number) => (nowMs += ms) };
}

const statuses = (verdicts: ScrapeVerdict[]): Record<number, number> =>
  verdicts.reduce<Record<number, number>>((count, v) => ({ ...count, [v.status]: (count[v.status] ?? 0) + 1 }), {});

describe('scrape access: who may read /metrics', () => {
  it.each([
    { what: 'no authorization header: 401, nothing asked', authorization: undefined, status: 401, asked: [] },
    { what: 'not a bearer token: 401, nothing asked', authorization: 'Basic YTpi', status: 401, asked: [] },
    { what: 'a token the API server does not accept: 401', authorization: 'Bearer forged', status: 401, asked: ['tokenreviews'] },
    { what: 'a user without get on /metrics: 403', authorization: 'Bearer tenant-token', status: 403, asked: ['tokenreviews', 'subjectaccessreviews'] },
    { what: 'a user who may get /metrics: 200', authorization: 'bearer prometheus-token', status: 200, asked: ['tokenreviews', 'subjectaccessreviews'] },
  ])('$what', async ({ authorization, status, asked }) => {
    const { client, access } = setUp();
    expect(await access.check(authorization)).toEqual({ status });
    expect(client.calls.map((call) => call.path.split('/').at(-1))).toEqual(asked);
  });

  it('asks whether the token’s user may get the non-resource URL /metrics', async () => {
    const { client, scrape } = setUp();
    await scrape('prometheus-token');
    expect(client.calls[0]?.body.spec).toEqual({ token: 'prometheus-token' });
    expect(client.calls[1]?.body.spec).toMatchObject({ user: 'prometheus', groups: ['system:authenticated'], nonResourceAttributes: { path: '/metrics', verb: 'get' } });
  });

  it.each([
    { what: 'allowed', token: 'prometheus-token', ttlMs: 10_000, after: 9_999, asked: 1 },
    { what: 'forbidden', token: 'tenant-token', ttlMs: 10_000, after: 9_999, asked: 1 },
    { what: 'rejected (a rejected token stays rejected briefly)', token: 'forged', ttlMs: 10_000, after: 9_999, asked: 1 },
    { what: 'allowed, past the TTL', token: 'prometheus-token', ttlMs: 10_000, after: 10_001, asked: 2 },
    { what: 'rejected, past the TTL', token: 'forged', ttlMs: 10_000, after: 10_001, asked: 2 },
    { what: 'anything, with a TTL of 0', token: 'forged', ttlMs: 0, after: 0, asked: 2 },
  ])('remembers an answer per token: $what', async ({ token, ttlMs, after, asked }) => {
    const { client, scrape, advance } = setUp({ ttlMs });
    const first = await scrape(token);
    advance(after);
    expect(await scrape(token)).toEqual(first);
    expect(client.tokenReviews()).toBe(asked);
  });

  it('answers 503 when the API server cannot be asked, remembers nothing, and logs no token', async () => {
    const { client, scrape, logs, counted } = setUp();
    client.failing = true;
    expect(await scrape('prometheus-token')).toEqual({ status: 503, retryAfterSeconds: 1 });
    client.failing = false;
    expect(await scrape('prometheus-token')).toEqual({ status: 200 });
    expect(client.tokenReviews()).toBe(2);
    expect(await counted('scrapeReviews')).toEqual({ failed: 1, allowed: 1 });
    expect(logs.join('')).toContain('etcd is down');
    expect(logs.join('')).not.toContain('prometheus-token');
  });
});

describe('scrape access under a flood of random tokens', () => {
  it.each([
    { limits: { ratePerSecond: 5, burst: 10 }, flood: 1000, reviewed: 10, retryAfterSeconds: 1 },
    { limits: { ratePerSecond: 1, burst: 3 }, flood: 50, reviewed: 3, retryAfterSeconds: 1 },
    { limits: { ratePerSecond: 1000, burst: 1000 }, flood: 500, reviewed: 500, retryAfterSeconds: undefined },
  ])('reviews at most the burst at once ($limits.burst of $flood), and refuses the rest with 429 without asking', async ({ limits, flood: count, reviewed, retryAfterSeconds }) => {
    const { client, flood, counted } = setUp({ limits });
    const verdicts = await flood(count);
    expect(client.tokenReviews()).toBe(reviewed);
    expect(statuses(verdicts)).toEqual({ 401: reviewed, ...(count > reviewed ? { 429: count - reviewed } : {}) });
    expect(verdicts.find((v) => v.status === 429)).toEqual(retryAfterSeconds === undefined ? undefined : { status: 429, retryAfterSeconds });
    expect(await counted('scrapeReviewsRefused')).toEqual(count > reviewed ? { rate: count - reviewed } : {});
  });

  it('reviews no more than burst + rate × time over a long flood', async () => {
    const { client, flood, advance } = setUp({ limits: { ratePerSecond: 5, burst: 10 } });
    for (let second = 0; second < 45; second++) {
      await flood(1100, second * 1100);
      advance(1000);
    }
    // 45 s at 1,100 random tokens a second: 49,500 scrapes, 10 + 5 × 44 reviews.
    expect(client.tokenReviews()).toBe(230);
  });

  it.each([
    { concurrency: 1, burst: 100, flood: 20, inFlight: 1 },
    { concurrency: 4, burst: 100, flood: 20, inFlight: 4 },
    { concurrency: 4, burst: 2, flood: 20, inFlight: 2 },
  ])('holds at most $concurrency reviews in flight (burst $burst)', async ({ concurrency, burst, flood: count, inFlight }) => {
    const { client, flood, counted, scrape, advance } = setUp({ limits: { concurrency, burst } });
    client.held = true;
    const verdicts = flood(count);
    await new Promise((resolve) => setImmediate(resolve));
    expect(client.tokenReviews()).toBe(inFlight);
    client.release();
    expect(statuses(await verdicts)).toEqual({ 401: inFlight, 429: count - inFlight });
    const refused = await counted('scrapeReviewsRefused');
    expect((refused.concurrency ?? 0) + (refused.rate ?? 0)).toBe(count - inFlight);
    // Once they have answered, another review may start.
    advance(1000);
    expect(await scrape('forged-later')).toEqual({ status: 401 });
  });

  it('merges scrapes with one token under review into one review, even at the limit', async () => {
    const { client, scrape } = setUp({ limits: { concurrency: 1, burst: 1 } });
    client.held = true;
    const verdicts = Promise.all(Array.from({ length: 10 }, () => scrape('prometheus-token')));
    await new Promise((resolve) => setImmediate(resolve));
    client.release();
    expect(statuses(await verdicts)).toEqual({ 200: 10 });
    expect(client.tokenReviews()).toBe(1);
  });

  it('keeps a scraper’s answer through a flood of rejected tokens: they are remembered apart', async () => {
    const { client, scrape, flood } = setUp({ limits: { burst: 20_000, concurrency: 20_000 } });
    expect(await scrape('prometheus-token')).toEqual({ status: 200 });
    // More rejected tokens than either cache keeps.
    for (let i = 0; i < 12; i++) await flood(1000, i * 1000);
    expect(client.tokenReviews()).toBe(1 + 12_000);
    expect(await scrape('prometheus-token')).toEqual({ status: 200 });
    expect(client.tokenReviews()).toBe(1 + 12_000);
  });

  it('re-reviews a scraper allowed before outside the limits: a flood does not lock it out when its answer expires', async () => {
    const { client, scrape, flood, advance, counted } = setUp({ limits: { ratePerSecond: 1, burst: 2 } });
    expect(await scrape('prometheus-token')).toEqual({ status: 200 });
    advance(10_001);
    const verdicts = await flood(100);
    expect(statuses(verdicts)).toEqual({ 401: 2, 429: 98 });
    expect(await scrape('prometheus-token')).toEqual({ status: 200 });
    expect(client.tokenReviews()).toBe(1 + 2 + 1);
    expect(await counted('scrapeReviews')).toEqual({ allowed: 2, unauthenticated: 2 });
  });

  it('takes the lane back from a token no longer allowed', async () => {
    const { client, scrape, flood, advance } = setUp({ limits: { ratePerSecond: 1, burst: 1 } });
    expect(await scrape('prometheus-token')).toEqual({ status: 200 });
    client.readers.delete('prometheus');
    advance(10_001);
    expect(await scrape('prometheus-token')).toEqual({ status: 403 });
    advance(10_001);
    await flood(5);
    expect(await scrape('prometheus-token')).toEqual({ status: 429, retryAfterSeconds: 1 });
  });

  it('counts each review among the API requests, by resource', async () => {
    const { scrape, metrics } = setUp();
    await scrape('prometheus-token');
    await scrape('forged');
    const requests = Object.fromEntries((await metrics.apiRequests.get()).values.map((v) => [v.labels.resource, v.value]));
    expect(requests).toEqual({ tokenreviews: 2, subjectaccessreviews: 1 });
  });
});
