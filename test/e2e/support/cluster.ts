import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';

/** Admin access to the control plane started by test/e2e/global-setup.ts. */
export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(inject('kubeconfigPath'));
  return kc;
}

let sequence = 0;

/** A DNS-label name that no other test of this run uses: `<prefix>-<random>`. */
export function uniqueName(prefix: string): string {
  sequence += 1;
  const suffix = `${randomBytes(3).toString('hex')}${sequence.toString(36)}`;
  return `${prefix.toLowerCase().slice(0, 62 - suffix.length)}-${suffix}`;
}

export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Named in the timeout error. */
  what?: string;
}

/**
 * Polls `fn` until it returns something other than undefined. A throw counts as "not yet"; the
 * last one is reported if the time runs out.
 */
export async function waitFor<T>(fn: () => Promise<T | undefined>, opts: WaitForOptions = {}): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 250, what = 'condition' } = opts;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError === undefined ? '' : ` (last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)})`;
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${cause}`);
    }
    await sleep(intervalMs);
  }
}
