import { TransientError } from './errors.js';

/** A call that got no answer in time; worth a retry. */
export class DeadlineExceeded extends TransientError {}

/**
 * `work`, or a DeadlineExceeded after `ms`. The work itself goes on; only the caller stops waiting
 * (and whoever shares its promise, such as a cache merging identical calls in flight).
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
