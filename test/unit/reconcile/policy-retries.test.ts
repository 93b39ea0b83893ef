import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../../src/domain/types.js';
import { PolicyRetries } from '../../../src/reconcile/policy-retries.js';

const refused: Outcome = { action: { type: 'in-sync', namespace: 'a' }, ok: false, verb: 'create', message: 'denied', transient: false, policy: true };
const invalid: Outcome = { action: { type: 'in-sync', namespace: 'a' }, ok: false, verb: 'create', message: 'invalid', transient: false };
const fine: Outcome = { action: { type: 'in-sync', namespace: 'a' }, ok: true };

describe('PolicyRetries', () => {
  it('retries a refused write a bounded number of times in a row', () => {
    const retries = new PolicyRetries(3);
    expect([1, 2, 3, 4].map(() => retries.retry('rd', [refused]))).toEqual([true, true, true, false]);
  });

  it('starts the count afresh after a pass without a refusal, and counts each distribution apart', () => {
    const retries = new PolicyRetries(1);
    expect(retries.retry('rd', [refused])).toBe(true);
    expect(retries.retry('other', [refused])).toBe(true);
    expect(retries.retry('rd', [fine])).toBe(false);
    expect(retries.retry('rd', [refused])).toBe(true);
  });

  it('never retries other final failures', () => {
    expect(new PolicyRetries().retry('rd', [invalid, fine])).toBe(false);
  });
});
