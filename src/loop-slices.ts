import { setImmediate as loopTurn } from 'node:timers/promises';
import type { Steps } from './domain/steps.js';

/**
 * One piece of work's share of the event loop (an admission request, a step of a pass). It runs in
 * slices: once it has held the loop for `sliceMs`, the loop gets a turn (other requests, every
 * webhook and the reconciler go on) before the next slice. Work done within its first slice is
 * done synchronously, as before: only large distributions ever pause.
 */
export interface LoopSlices {
  /** Runs the steps, pausing between two of them when the slice is used up. */
  run<T>(steps: Steps<T>): T | Promise<T>;
  /** Then `next`, after a turn of the loop if the slice is used up. */
  then<T>(next: () => T | Promise<T>): T | Promise<T>;
}

export function loopSlices(sliceMs: number, now: () => number): LoopSlices {
  let sliceStarted = now();
  const pause = (): Promise<void> | undefined => {
    if (now() - sliceStarted < sliceMs) return undefined;
    return loopTurn().then(() => {
      sliceStarted = now();
    });
  };
  const run = <T>(steps: Steps<T>): T | Promise<T> => {
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
      const paused = pause();
      if (paused !== undefined) return paused.then(() => run(steps));
    }
  };
  const then = <T>(next: () => T | Promise<T>): T | Promise<T> => {
    const paused = pause();
    return paused === undefined ? next() : paused.then(next);
  };
  return { run, then };
}

/** `next` of a value that may still be on its way, synchronously when it is not. */
export function whenReady<T, U>(value: T | Promise<T>, next: (ready: T) => U | Promise<U>): U | Promise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
