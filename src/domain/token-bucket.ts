// A token bucket, as a value: `burst` tokens at most, refilled at `ratePerSecond`. Pure: the time
// is passed in, the new bucket handed back; whoever holds it decides where it lives.

export interface BucketLimits {
  ratePerSecond: number;
  burst: number;
}

export interface TokenBucket {
  tokens: number;
  /** Monotonic milliseconds of the last refill. */
  atMs: number;
}

export type Take = { taken: true; bucket: TokenBucket } | { taken: false; bucket: TokenBucket; retryAfterMs: number };

export function fullBucket(limits: BucketLimits, nowMs: number): TokenBucket {
  return { tokens: limits.burst, atMs: nowMs };
}

/** The bucket refilled up to `nowMs`; a clock that went back refills nothing (and takes nothing away). */
export function refill(bucket: TokenBucket, limits: BucketLimits, nowMs: number): TokenBucket {
  const elapsedMs = Math.max(0, nowMs - bucket.atMs);
  return { tokens: Math.min(limits.burst, bucket.tokens + (elapsedMs * limits.ratePerSecond) / 1000), atMs: Math.max(nowMs, bucket.atMs) };
}

/** Takes one token if there is one; otherwise says how long until there will be. */
export function takeToken(bucket: TokenBucket, limits: BucketLimits, nowMs: number): Take {
  const filled = refill(bucket, limits, nowMs);
  if (filled.tokens >= 1) return { taken: true, bucket: { ...filled, tokens: filled.tokens - 1 } };
  const retryAfterMs = limits.ratePerSecond > 0 ? Math.ceil(((1 - filled.tokens) * 1000) / limits.ratePerSecond) : Number.POSITIVE_INFINITY;
  return { taken: false, bucket: filled, retryAfterMs };
}
