import { setImmediate as loopTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loopSlices, whenReady } from '../../src/loop-slices.js';
import { runSteps, type Steps } from '../../src/domain/steps.js';

/** Steps that each take `costs[i]` ms of a fake clock and return the number of steps taken. */
function* costly(clock: { ms: number }, costs: readonly number[]): Steps<number> {
  for (const [i, cost] of costs.entries()) {
    clock.ms += cost;
    if (i < costs.length - 1) yield;
  }
  return costs.length;
}

describe('loop slices', () => {
  it.each([
    { name: 'work within the slice', costs: [0.5, 0.5, 0.5], sliceMs: 2, turns: 0 },
    { name: 'one step over the slice, then the last', costs: [3, 0.1], sliceMs: 2, turns: 1 },
    { name: 'every step a slice of its own', costs: [2, 2, 2, 2], sliceMs: 2, turns: 3 },
    { name: 'two steps a slice', costs: [1, 1, 1, 1, 1], sliceMs: 2, turns: 2 },
    { name: 'no slice at all: a turn between every two steps', costs: [0, 0, 0], sliceMs: 0, turns: 2 },
  ])('$name: $turns turns of the loop, the same result', async ({ costs, sliceMs, turns }) => {
    const clock = { ms: 0 };
    let turned = 0;
    // Counts how often the loop got a turn while the work was in progress.
    let done = false;
    const counter = async (): Promise<void> => {
      while (!done) {
        await loopTurn();
        if (!done) turned++;
      }
    };
    const counting = counter();
    const result = loopSlices(sliceMs, () => clock.ms).run(costly(clock, costs));
    expect(result instanceof Promise).toBe(turns > 0);
    expect(await result).toBe(runSteps(costly({ ms: 0 }, costs)));
    done = true;
    await counting;
    expect(turned).toBeGreaterThanOrEqual(turns);
  });

  it('goes on at once while the slice lasts, and after a turn once it is used up', async () => {
    const clock = { ms: 0 };
    const slices = loopSlices(2, () => clock.ms);
    expect(slices.then(() => 'now')).toBe('now');
    clock.ms = 2;
    const later = slices.then(() => 'later');
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe('later');
    // A new slice began with the turn.
    expect(slices.then(() => 'now again')).toBe('now again');
  });

  it.each([
    { value: 1, expected: 2, promise: false },
    { value: Promise.resolve(1), expected: 2, promise: true },
  ])('whenReady of $value: synchronous only for a value that is there', async ({ value, expected, promise }) => {
    const next = whenReady(value, (ready) => ready + 1);
    expect(next instanceof Promise).toBe(promise);
    expect(await next).toBe(expected);
  });
});
