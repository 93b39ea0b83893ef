// A template nested thousands of levels deep, stored before admission bounded the depth (or while
// the webhook was off): the reconciler gives up on it once, instead of overflowing the stack on
// every pass ("Maximum call stack size exceeded", retried forever).
import { afterEach, describe, expect, it } from 'vitest';
import { distribution } from '../builders.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!condition()) throw new Error('condition not reached');
}

describe('a template nested too deeply to copy', () => {
  // The fake cluster clones what it stores (which overflows past a few thousand levels): deep
  // enough to be refused, shallow enough to be stored.
  it.each([100, 1_000])('%i levels: the pass ends without a retry and writes nothing', async (levels) => {
    h = await startHarness();
    h.cluster.putNamespace('ns-a');
    const rd = distribution('deep').configMap('settings', { a: 'b' }).included('ns-a').build();
    rd.spec.resource.metadata.managedFields = [{ manager: 'kubectl', fieldsV1: nested(levels) }];
    h.cluster.putDistribution(rd);
    await until(() => h.catalog.list().length > 0);
    expect(await h.reconciler.reconcile('deep')).toBe('done');
    expect(h.cluster.object('ConfigMap', 'ns-a', 'settings')).toBeUndefined();
  });
});
