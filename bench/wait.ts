import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `done` every `intervalMs` until it holds; throws `what` (plus `progress()`) after `timeoutMs`. */
export async function waitUntil(what: string, done: () => boolean | Promise<boolean>, timeoutMs: number, progress?: () => string, intervalMs = 50): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`${what}: not reached within ${Math.round(timeoutMs / 1000)} s${progress ? ` (${progress()})` : ''}`);
    await sleep(intervalMs);
  }
}
