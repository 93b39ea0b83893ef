// The copies gauge: totals over distributions, kept as each distribution's counts change.
import { describe, expect, it } from 'vitest';
import type { Action, Outcome } from '../../../src/domain/types.js';
import { createMetrics } from '../../../src/metrics.js';
import { CopyStates } from '../../../src/reconcile/copy-states.js';

const outcome = (type: Action['type'], ok = true): Outcome => ({ action: { type, namespace: 'ns' } as Action, ok, verb: 'get', message: '', transient: false });

async function gauge(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const { values } = await metrics.copies.get();
  return Object.fromEntries(values.map((value) => [String(value.labels.state), value.value]));
}

describe('CopyStates', () => {
  it.each<[string, [string, Outcome[]][], string[], Record<string, number>]>([
    ['one distribution', [['a', [outcome('in-sync'), outcome('create'), outcome('conflict')]]], [], { 'in-sync': 2, conflict: 1, 'namespace-missing': 0, failed: 0 }],
    ['two distributions add up', [['a', [outcome('in-sync')]], ['b', [outcome('namespace-missing'), outcome('update', false)]]], [], { 'in-sync': 1, conflict: 0, 'namespace-missing': 1, failed: 1 }],
    ['a new pass replaces the last one', [['a', [outcome('in-sync'), outcome('in-sync')]], ['a', [outcome('conflict')]]], [], { 'in-sync': 0, conflict: 1, 'namespace-missing': 0, failed: 0 }],
    ['a forgotten distribution counts no more', [['a', [outcome('in-sync')]], ['b', [outcome('in-sync')]]], ['a', 'never-seen'], { 'in-sync': 1, conflict: 0, 'namespace-missing': 0, failed: 0 }],
    ['deletes count in no state', [['a', [outcome('delete'), outcome('in-sync')]]], [], { 'in-sync': 1, conflict: 0, 'namespace-missing': 0, failed: 0 }],
  ])('%s', async (_, passes, forgotten, expected) => {
    const metrics = createMetrics();
    const states = new CopyStates(metrics.copies);
    for (const [name, outcomes] of passes) states.record(name, { outcomes });
    for (const name of forgotten) states.forget(name);
    expect(await gauge(metrics)).toEqual(expected);
  });
});

describe('CopyStates with the namespaces in sync given by name', () => {
  it('counts each name in sync beside the other outcomes', async () => {
    const metrics = createMetrics();
    const states = new CopyStates(metrics.copies);
    states.record('a', { outcomes: [outcome('conflict'), outcome('delete', false)], inSync: new Set(['ns-1', 'ns-2']) });
    expect(await gauge(metrics)).toEqual({ 'in-sync': 2, conflict: 1, 'namespace-missing': 0, failed: 0 });
  });
});
