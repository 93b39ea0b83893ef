/**
 * Runs `fn` over `items` with at most `limit` calls in flight; results in input order. Once
 * `signal` is aborted no further call starts (the results of those never started stay unset).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && signal?.aborted !== true) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/** Runs the functions given to it with at most `limit` of them in flight; the others wait their turn, in order. */
export type Limiter = <R>(fn: () => Promise<R>) => Promise<R>;

export function createLimiter(limit: number): Limiter {
  const max = Math.max(1, limit);
  let running = 0;
  // A queue read from `head`: a pass may queue 10,000 calls, and shifting each out would move the rest.
  let waiting: (() => void)[] = [];
  let head = 0;
  const release = (): void => {
    const next = waiting[head];
    if (next === undefined) {
      running -= 1;
      return;
    }
    head += 1;
    if (head === waiting.length) {
      waiting = [];
      head = 0;
    }
    // The slot passes straight to the next call: `running` stays as it is.
    next();
  };
  return async (fn) => {
    if (running < max) running += 1;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fn();
    } finally {
      release();
    }
  };
}

/**
 * mapBounded over items that come a batch at a time: a batch's calls start (at most `limit` in
 * flight over every batch) while the next batch is being made. The next batch is asked for only
 * once fewer than `limit` calls wait for a slot: batches are made just ahead of their calls, so
 * that what a batch holds (a copy rendered for each namespace) is short-lived, not made for every
 * namespace at once. Results in input order. A batch that cannot be made rejects the whole, once
 * the calls already started have ended.
 */
export async function mapBoundedBatches<T, R>(batches: AsyncIterable<readonly T[]>, limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const max = Math.max(1, limit);
  const run = createLimiter(max);
  const results: Promise<R>[] = [];
  let unsettled = 0;
  let onSettled: (() => void) | undefined;
  const settled = (): void => {
    unsettled -= 1;
    onSettled?.();
  };
  try {
    for await (const batch of batches) {
      for (const item of batch) {
        unsettled += 1;
        const result = run(() => fn(item));
        // A call that fails while the next batch is being made is reported below, not as unhandled.
        result.then(settled, settled);
        results.push(result);
      }
      while (unsettled >= 2 * max) await new Promise<void>((resolve) => (onSettled = resolve));
      onSettled = undefined;
    }
  } catch (error) {
    await Promise.allSettled(results);
    throw error;
  }
  return Promise.all(results);
}
