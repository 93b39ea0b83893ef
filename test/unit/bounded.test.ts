// Bounded parallelism: the limiter under every pass's writes, and the plan applied a slice at a
// time while the next slice is made.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLimiter, mapBoundedBatches } from '../../src/bounded.js';

/** A call that records how many run at once and in which order they started. */
function recorder() {
  const state = { running: 0, most: 0, started: [] as number[], ended: 0 };
  const call = async (item: number): Promise<number> => {
    state.started.push(item);
    state.running += 1;
    state.most = Math.max(state.most, state.running);
    await nextTurn();
    state.running -= 1;
    state.ended += 1;
    return item * 10;
  };
  return { state, call };
}

async function* batchesOf(batches: number[][], onAsked?: (index: number) => void): AsyncGenerator<number[]> {
  for (const [index, batch] of batches.entries()) {
    onAsked?.(index);
    if (index > 0) await nextTurn();
    yield batch;
  }
}

describe('createLimiter', () => {
  it.each<[string, number, number]>([
    ['one at a time', 1, 50],
    ['three at a time', 3, 50],
    ['more slots than calls', 100, 5],
    ['a long queue, one at a time', 1, 10_000],
  ])('%s: never more than the limit, started in order, every result returned', async (_, limit, calls) => {
    const { state, call } = recorder();
    const run = createLimiter(limit);
    const items = Array.from({ length: calls }, (__, i) => i);
    const results = await Promise.all(items.map((item) => run(() => call(item))));
    expect(results).toEqual(items.map((item) => item * 10));
    expect(state.most).toBe(Math.min(limit, calls));
    expect(state.started).toEqual(items);
  });

  it('frees the slot of a call that fails', async () => {
    const run = createLimiter(1);
    await expect(run(() => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(run(() => Promise.resolve('next'))).resolves.toBe('next');
  });
});

describe('mapBoundedBatches', () => {
  it.each<[string, number[][], number]>([
    ['one batch', [[1, 2, 3, 4, 5]], 2],
    ['a small first batch, then larger ones', [[1], [2, 3, 4, 5], [6, 7, 8, 9, 10]], 3],
    ['an empty batch between', [[1, 2], [], [3]], 2],
    ['no batch at all', [], 4],
  ])('%s: results in input order, never more than the limit in flight', async (_, batches, limit) => {
    const { state, call } = recorder();
    const results = await mapBoundedBatches(batchesOf(batches), limit, call);
    expect(results).toEqual(batches.flat().map((item) => item * 10));
    expect(state.most).toBeLessThanOrEqual(limit);
  });

  it("starts a batch's calls before the next batch is made", async () => {
    const { state, call } = recorder();
    const startedWhenAsked: number[] = [];
    await mapBoundedBatches(batchesOf([[1, 2], [3, 4], [5]], () => startedWhenAsked.push(state.started.length)), 4, call);
    expect(startedWhenAsked).toEqual([0, 2, 4]);
  });

  it('asks for the next batch only once fewer calls than the limit wait for a slot: batches are made just ahead of their calls', async () => {
    const { state, call } = recorder();
    const batches = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15], [16]];
    const waitingWhenAsked: number[] = [];
    const submitted = (index: number): number => batches.slice(0, index).flat().length;
    await mapBoundedBatches(batchesOf(batches, (index) => waitingWhenAsked.push(submitted(index) - state.ended - state.running)), 2, call);
    expect(waitingWhenAsked.slice(1).every((waiting) => waiting < 2)).toBe(true);
    expect(waitingWhenAsked[1]).toBeGreaterThanOrEqual(0);
  });

  it('a call that fails while the next batch is made rejects the whole, once every batch is applied', async () => {
    const { state, call } = recorder();
    const failing = (item: number): Promise<number> => (item === 1 ? Promise.reject(new Error('write refused')) : call(item));
    await expect(mapBoundedBatches(batchesOf([[1, 2], [3], [4]]), 2, failing)).rejects.toThrow('write refused');
    expect(state.started).toEqual([2, 3, 4]);
  });

  it('a batch that cannot be made rejects the whole once the calls already started have ended', async () => {
    const { state, call } = recorder();
    async function* broken(): AsyncGenerator<number[]> {
      yield [1, 2, 3];
      await nextTurn();
      throw new Error('plan failed');
    }
    await expect(mapBoundedBatches(broken(), 2, call)).rejects.toThrow('plan failed');
    expect(state.ended).toBe(3);
  });
});
