// Who may read /metrics, at a cost a flood cannot multiply. Each distinct bearer token costs a
// TokenReview (and a SubjectAccessReview), and a flood of random tokens defeats any cache: so
// reviews of tokens not seen allowed before are limited in rate and in number in flight, and a
// scrape over either limit is answered 429 without asking the API server (not queued: a queue
// would hold the flood's connections open and answer late for everyone). Answers are remembered
// per token hash (rejected tokens in a cache of their own, so a flood cannot push out the
// scrapers' answers); tokens allowed before are re-reviewed outside the limits, so a flood does
// not lock out Prometheus when its answer expires. The token itself is never kept or logged.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { LRUCache } from 'lru-cache';
import { fullBucket, takeToken, type BucketLimits } from '../domain/token-bucket.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ReviewedVerdict, ScrapeReviewer } from './scrape-review.js';

/**
 * 200: allowed; 401: no token, or one the API server does not accept; 403: a user without `get`
 * on /metrics; 429: over the review limits (nothing asked); 503: the API server could not be
 * asked (not remembered).
 */
export type ScrapeVerdict = { status: ReviewedVerdict } | { status: 429 | 503; retryAfterSeconds: number };

export interface ScrapeAccess {
  check(authorization: string | undefined): Promise<ScrapeVerdict>;
}

export interface ScrapeLimits extends BucketLimits {
  /** Reviews of tokens not allowed before, in flight at once. */
  concurrency: number;
}

export interface ScrapeAccessOptions {
  /** How long an answer is reused, either way (0: never). */
  ttlMs: number;
  limits: ScrapeLimits;
  log: Logger;
  metrics?: Pick<Metrics, 'scrapeReviews' | 'scrapeReviewsRefused'>;
  /** Monotonic milliseconds; injected by tests. */
  now?: () => number;
}

/** Tokens allowed in the last hour skip the limits: a scraper's token outlives its cached answer. */
const KNOWN_TTL_MS = 3_600_000;
const KNOWN_MAX = 256;
const ANSWERS_MAX = 1000;
const REJECTED_MAX = 10_000;

const RESULTS: Record<ReviewedVerdict, string> = { 200: 'allowed', 401: 'unauthenticated', 403: 'forbidden' };

function tokenOf(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
}

export function createScrapeAccess(reviewer: ScrapeReviewer, options: ScrapeAccessOptions): ScrapeAccess {
  const now = options.now ?? ((): number => performance.now());
  const { limits, metrics } = options;
  const lru = <V extends object | boolean>(max: number, ttl: number): LRUCache<string, V> =>
    new LRUCache<string, V>({ max, ttl, perf: { now }, ttlResolution: 0 });
  const ttl = Math.max(1, options.ttlMs);
  const answers = lru<{ status: 200 | 403 }>(ANSWERS_MAX, ttl);
  const rejected = lru<{ status: 401 }>(REJECTED_MAX, ttl);
  const known = lru<boolean>(KNOWN_MAX, KNOWN_TTL_MS);
  const inFlight = new Map<string, Promise<ScrapeVerdict>>();
  let limited = 0;
  let bucket = fullBucket(limits, now());

  /** Whether a review of an unknown token may start now; if not, the 429 to answer. */
  function admit(): ScrapeVerdict | undefined {
    if (limited >= limits.concurrency) {
      metrics?.scrapeReviewsRefused.inc({ reason: 'concurrency' });
      return { status: 429, retryAfterSeconds: 1 };
    }
    const take = takeToken(bucket, limits, now());
    bucket = take.bucket;
    if (take.taken) return undefined;
    metrics?.scrapeReviewsRefused.inc({ reason: 'rate' });
    return { status: 429, retryAfterSeconds: Math.max(1, Math.ceil(take.retryAfterMs / 1000)) };
  }

  async function review(token: string, key: string): Promise<ScrapeVerdict> {
    try {
      const status = await reviewer.review(token);
      metrics?.scrapeReviews.inc({ result: RESULTS[status] });
      if (options.ttlMs > 0) {
        if (status === 401) rejected.set(key, { status });
        else answers.set(key, { status });
      }
      if (status === 200) known.set(key, true);
      else known.delete(key);
      return { status };
    } catch (error) {
      metrics?.scrapeReviews.inc({ result: 'failed' });
      options.log.warn({ err: (error as Error).message }, 'metrics scrape could not be authorized');
      return { status: 503, retryAfterSeconds: 1 };
    }
  }

  /** One review per token at a time: scrapes with a token under review wait for its answer. */
  function start(token: string, key: string): Promise<ScrapeVerdict> {
    const isKnown = known.has(key);
    if (!isKnown) {
      const refused = admit();
      if (refused !== undefined) return Promise.resolve(refused);
      limited += 1;
    }
    const pending = review(token, key).finally(() => {
      inFlight.delete(key);
      if (!isKnown) limited -= 1;
    });
    inFlight.set(key, pending);
    return pending;
  }

  return {
    check(authorization) {
      const token = tokenOf(authorization);
      if (token === undefined) return Promise.resolve({ status: 401 });
      const key = createHash('sha256').update(token).digest('hex');
      const remembered = answers.get(key) ?? rejected.get(key);
      if (remembered !== undefined) return Promise.resolve(remembered);
      return inFlight.get(key) ?? start(token, key);
    },
  };
}
