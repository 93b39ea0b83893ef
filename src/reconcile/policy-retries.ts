// Writes an admission policy refused (a webhook's denial, a ValidatingAdmissionPolicy, a quota):
// final for that request, but lifted by a change nobody tells us of (the policy removed or
// relaxed). A distribution with such a failure is retried with the queue's backoff (0.1 s,
// doubling) a bounded number of times in a row, about seven minutes in all; after that the sweep
// tries again. Any pass without such a failure starts the count afresh.
import type { Outcome } from '../domain/types.js';

/** Retries in a row: 0.1 s doubling 12 times is 409 s of retrying, beyond a 5-minute sweep. */
export const POLICY_RETRIES = 12;

/** What the status message adds to such a failure. */
export const POLICY_RETRY_NOTE = 'refused by an admission policy: retried with backoff, then at each sweep';

export class PolicyRetries {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit: number = POLICY_RETRIES) {}

  /** Whether the pass that had these outcomes is to be retried for a policy's refusal. */
  retry(name: string, outcomes: readonly Outcome[]): boolean {
    if (!outcomes.some((outcome) => !outcome.ok && outcome.policy === true)) {
      this.counts.delete(name);
      return false;
    }
    const count = (this.counts.get(name) ?? 0) + 1;
    this.counts.set(name, count);
    return count <= this.limit;
  }

  forget(name: string): void {
    this.counts.delete(name);
  }
}
