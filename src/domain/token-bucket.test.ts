import { describe, expect, it } from 'vitest';
import { fullBucket, takeToken, type BucketLimits, type TokenBucket } from './token-bucket.js';

const LIMITS: BucketLimits = { ratePerSecond: 5, burst: 10 };

describe('takeToken', () => {
  it.each<{ what: string; bucket: TokenBucket; nowMs: number; taken: boolean; tokensLeft: number; retryAfterMs?: number }>([
    { what: 'a full bucket gives one', bucket: { tokens: 10, atMs: 0 }, nowMs: 0, taken: true, tokensLeft: 9 },
    { what: 'an empty bucket gives none, and says when', bucket: { tokens: 0, atMs: 0 }, nowMs: 0, taken: false, tokensLeft: 0, retryAfterMs: 200 },
    { what: 'part of a token is not a token', bucket: { tokens: 0, atMs: 0 }, nowMs: 100, taken: false, tokensLeft: 0.5, retryAfterMs: 100 },
    { what: 'refilled at the rate', bucket: { tokens: 0, atMs: 0 }, nowMs: 200, taken: true, tokensLeft: 0 },
    { what: 'never above the burst, however long idle', bucket: { tokens: 3, atMs: 0 }, nowMs: 3_600_000, taken: true, tokensLeft: 9 },
    { what: 'a clock that went back refills nothing', bucket: { tokens: 0.5, atMs: 1000 }, nowMs: 0, taken: false, tokensLeft: 0.5, retryAfterMs: 100 },
  ])('$what', ({ bucket, nowMs, taken, tokensLeft, retryAfterMs }) => {
    const take = takeToken(bucket, LIMITS, nowMs);
    expect(take.taken).toBe(taken);
    expect(take.bucket.tokens).toBeCloseTo(tokensLeft, 9);
    if (!take.taken) expect(take.retryAfterMs).toBe(retryAfterMs);
  });

  it.each([
    { limits: { ratePerSecond: 5, burst: 10 }, seconds: 10, most: 60 },
    { limits: { ratePerSecond: 1, burst: 1 }, seconds: 30, most: 31 },
    { limits: { ratePerSecond: 100, burst: 5 }, seconds: 2, most: 205 },
  ])('gives at most burst + rate × time to a caller who asks every millisecond ($limits.ratePerSecond/s, burst $limits.burst)', ({ limits, seconds, most }) => {
    let bucket = fullBucket(limits, 0);
    let given = 0;
    for (let nowMs = 0; nowMs <= seconds * 1000; nowMs++) {
      const take = takeToken(bucket, limits, nowMs);
      bucket = take.bucket;
      if (take.taken) given++;
    }
    // Floating point may leave the last token a hair short: never more, at most one fewer.
    expect(given).toBeLessThanOrEqual(most);
    expect(given).toBeGreaterThanOrEqual(most - 1);
  });
});
