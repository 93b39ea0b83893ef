import { setImmediate as realTurn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue, type ProcessResult } from '../../../src/reconcile/queue.js';
import { silentLog } from './harness.js';

interface Pending {
  name: string;
  finish(result?: ProcessResult | Error): void;
}

/** Reconciles start one per turn of the event loop (real, whatever the fake timers): enough turns for every free worker's. */
async function turn(): Promise<void> {
  for (let i = 0; i < 6; i++) await realTurn();
}

/** A queue whose reconciles stay in flight until the test finishes them. */
function controlledQueue(concurrency = 2, groupOf?: (name: string) => string, isHeavy?: (name: string) => boolean) {
  const pending: Pending[] = [];
  const started: string[] = [];
  const signals: AbortSignal[] = [];
  const depths: number[] = [];
  const queue = new WorkQueue({
    concurrency,
    log: silentLog,
    backoffInitialMs: 100,
    backoffMaxMs: 1_000,
    onDepth: (depth) => depths.push(depth),
    ...(groupOf ? { groupOf } : {}),
    ...(isHeavy ? { isHeavy } : {}),
    process: (name, signal) =>
      new Promise<ProcessResult>((resolve, reject) => {
        started.push(name);
        signals.push(signal);
        pending.push({
          name,
          finish: (result = 'done') => (result instanceof Error ? reject(result) : resolve(result)),
        });
      }),
  });
  const finish = async (name: string, result?: ProcessResult | Error) => {
    const index = pending.findIndex((p) => p.name === name);
    const [entry] = pending.splice(index, 1);
    entry!.finish(result);
    await vi.advanceTimersByTimeAsync(0);
    await turn();
  };
  return { queue, pending, started, depths, signals, finish };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('de-duplicates names that wait', async () => {
    const { queue, started } = controlledQueue(1);
    queue.start();
    queue.addAll(['a', 'b', 'b', 'c', 'b']);
    await turn();
    expect(started).toEqual(['a']);
    expect(queue.depth).toBe(2);
  });

  it('runs at most `concurrency` reconciles at once', async () => {
    const { queue, started, finish } = controlledQueue(2);
    queue.start();
    queue.addAll(['a', 'b', 'c', 'd']);
    await turn();
    expect(started).toEqual(['a', 'b']);
    await finish('a');
    expect(started).toEqual(['a', 'b', 'c']);
  });

  it('never runs one name twice at once, and runs it again after when re-added meanwhile', async () => {
    const { queue, started, finish } = controlledQueue(4);
    queue.start();
    queue.add('a');
    queue.add('a');
    queue.add('a');
    await turn();
    expect(started).toEqual(['a']);
    await finish('a');
    expect(started).toEqual(['a', 'a']);
    await finish('a');
    expect(started).toEqual(['a', 'a']);
  });

  it.each<[string, ProcessResult | Error]>([
    ['asks for a retry', 'retry'],
    ['throws', new Error('boom')],
  ])('backs off exponentially when a reconcile %s, and resets on success', async (_, failure) => {
    const { queue, started, finish } = controlledQueue();
    queue.start();
    queue.add('a');
    await turn();
    const delays: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      await finish('a', failure);
      const before = started.length;
      let waited = 0;
      while (started.length === before) {
        await vi.advanceTimersByTimeAsync(10);
        waited += 10;
      }
      delays.push(waited);
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000]);
    await finish('a', 'done');
    queue.add('a');
    await turn();
    await finish('a', failure);
    await vi.advanceTimersByTimeAsync(100);
    expect(started.length).toBe(8);
  });

  it('runs a name whose work goes on again after the names waiting, without backoff, and counts no failure', async () => {
    const { queue, started, finish } = controlledQueue(1);
    queue.start();
    queue.addAll(['a', 'b', 'c']);
    await turn();
    await finish('a', 'retry');
    await vi.advanceTimersByTimeAsync(100);
    await finish('b');
    await finish('c');
    expect(started).toEqual(['a', 'b', 'c', 'a']);
    queue.add('d');
    await turn();
    await finish('a', 'continue');
    await finish('d');
    expect(started).toEqual(['a', 'b', 'c', 'a', 'd', 'a']);
    await finish('a', 'retry');
    // The continue reset the failures: the first backoff again.
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual(['a', 'b', 'c', 'a', 'd', 'a', 'a']);
  });

  it('runs a name at once when it is added during its backoff', async () => {
    const { queue, started, finish } = controlledQueue();
    queue.start();
    queue.add('a');
    await turn();
    await finish('a', 'retry');
    queue.add('a');
    await turn();
    expect(started).toEqual(['a', 'a']);
  });

  it('reports its depth and resolves idle() when drained', async () => {
    const { queue, depths, finish } = controlledQueue(1);
    queue.start();
    queue.addAll(['a', 'b']);
    await turn();
    let idle = false;
    void queue.idle().then(() => (idle = true));
    await finish('a');
    expect(idle).toBe(false);
    await finish('b');
    expect(idle).toBe(true);
    expect(depths.at(-1)).toBe(0);
    expect(Math.max(...depths)).toBe(1);
  });

  it('stops taking work, drops what waits, and waits for what is in flight', async () => {
    const { queue, started, finish } = controlledQueue(1);
    queue.start();
    queue.addAll(['a', 'b']);
    await turn();
    let stopped = false;
    void queue.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    await finish('a', 'retry');
    expect(stopped).toBe(true);
    queue.add('c');
    await turn();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(started).toEqual(['a']);
  });

  it('tells the reconciles in flight to stop writing when it stops, and gives fresh work a fresh signal', async () => {
    const { queue, signals, finish } = controlledQueue(1);
    queue.start();
    queue.add('a');
    await turn();
    const stopped = queue.stop();
    expect(signals[0]?.aborted).toBe(true);
    await finish('a', 'retry');
    await stopped;

    queue.start();
    queue.add('b');
    await turn();
    expect(signals[1]?.aborted).toBe(false);
  });

  it('leaves no timer behind once stopped', async () => {
    const { queue, finish } = controlledQueue(1);
    queue.start();
    queue.add('a');
    await turn();
    await finish('a', 'retry');
    expect(vi.getTimerCount()).toBe(1);
    await queue.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('WorkQueue and the event loop', () => {
  it.each([
    ['gives way to the event loop before each reconcile: what arrives meanwhile is not held up by a run of them', 1],
    ['starts one reconcile per turn of the event loop, however many workers are free', 4],
  ])('%s (%i workers)', async (_, concurrency) => {
    vi.useRealTimers();
    const order: string[] = [];
    const queue = new WorkQueue({
      concurrency,
      log: silentLog,
      process: (name) => {
        order.push(name);
        return Promise.resolve('done');
      },
    });
    queue.start();
    queue.addAll(['a', 'b', 'c']);
    setImmediate(() => order.push('a socket read'));
    await queue.idle();
    expect(order).toEqual(['a', 'a socket read', 'b', 'c']);
  });
});

describe('WorkQueue fairness', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('takes waiting names in turn per group: a thousand of one ObjectSync do not hold up another distribution', async () => {
    const { queue, started, finish } = controlledQueue(1, (name) => (name.startsWith('os-') ? 'platform/big' : name));
    queue.start();
    queue.addAll(Array.from({ length: 1000 }, (_, i) => `os-${i}`));
    queue.add('admin-settings');
    queue.add('os-1000');
    await turn();
    expect(started).toEqual(['os-0']);
    await finish('os-0');
    await finish('os-1');
    // One turn each: the other group comes before the 998 names still waiting in the big one.
    expect(started).toEqual(['os-0', 'os-1', 'admin-settings']);
    await finish('admin-settings');
    expect(started.at(-1)).toBe('os-2');
    expect(queue.depth).toBe(998);
    const stopped = queue.stop();
    await finish('os-2');
    await stopped;
  });

  it('keeps one worker from heavy names: a small change starts at once while large ones are rewritten', async () => {
    const heavy = (name: string): boolean => name.startsWith('big-');
    const { queue, started, finish } = controlledQueue(4, undefined, heavy);
    queue.start();
    queue.addAll(['big-0', 'big-1', 'big-2', 'big-3', 'big-4']);
    await turn();
    expect(started).toEqual(['big-0', 'big-1', 'big-2']);
    queue.add('admin-settings');
    await turn();
    expect(started.at(-1)).toBe('admin-settings');
    await finish('admin-settings');
    // The free worker is not given to a heavy name...
    expect(started).toHaveLength(4);
    // ...until a heavy one ends.
    await finish('big-0');
    expect(started.at(-1)).toBe('big-3');
    const stopped = queue.stop();
    for (const name of ['big-1', 'big-2', 'big-3']) await finish(name);
    await stopped;
  });

  it('judges each waiting name once, not at every dequeue that passes over it', async () => {
    const asked = new Map<string, number>();
    const heavy = (name: string): boolean => {
      asked.set(name, (asked.get(name) ?? 0) + 1);
      return name.startsWith('big-');
    };
    const { queue, started, finish } = controlledQueue(4, undefined, heavy);
    queue.start();
    queue.addAll(Array.from({ length: 100 }, (_, i) => `big-${i}`));
    await turn();
    for (let i = 0; i < 5; i++) {
      queue.add(`small-${i}`);
      await turn();
      await finish(`small-${i}`);
    }
    expect(started.filter((name) => name.startsWith('small-'))).toHaveLength(5);
    // Once when queued, once more when started: never once per dequeue scanning past them.
    expect(Math.max(...asked.values())).toBeLessThanOrEqual(2);
    const stopped = queue.stop();
    for (const name of ['big-0', 'big-1', 'big-2']) await finish(name);
    await stopped;
  });

  it('runs heavy names all the same with a single worker', async () => {
    const { queue, started, finish } = controlledQueue(1, undefined, () => true);
    queue.start();
    queue.addAll(['big-0', 'big-1']);
    await turn();
    expect(started).toEqual(['big-0']);
    await finish('big-0');
    expect(started).toEqual(['big-0', 'big-1']);
    const stopped = queue.stop();
    await finish('big-1');
    await stopped;
  });
});
