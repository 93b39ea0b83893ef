import type { Logger } from '../log.js';
import { allowed, type Verdict } from './review.js';

/**
 * Runs the work of a webhook that must never deny (the pod webhooks): its result makes the
 * verdict; a failure, thrown or rejected, is logged and the object allowed as it is. Synchronous
 * when the work is.
 */
export function neverDenies<T>(log: Logger, context: Record<string, unknown>, failure: string, work: () => T | Promise<T>, verdict: (result: T) => Verdict): Verdict | Promise<Verdict> {
  const failed = (error: unknown): Verdict => {
    log.error({ ...context, err: error }, failure);
    return allowed();
  };
  try {
    const result = work();
    return result instanceof Promise ? result.then(verdict, failed) : verdict(result);
  } catch (error) {
    return failed(error);
  }
}
