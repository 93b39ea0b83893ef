// The copies gauge: target namespaces by the state of their copy, summed over distributions.
import type { Outcome } from '../domain/types.js';
import type { Metrics } from '../metrics.js';

export type CopyState = 'in-sync' | 'conflict' | 'namespace-missing' | 'failed';
const STATES: readonly CopyState[] = ['in-sync', 'conflict', 'namespace-missing', 'failed'];

function stateOf(outcome: Outcome): CopyState | undefined {
  const { type } = outcome.action;
  if (type === 'delete') return undefined;
  if (!outcome.ok) return 'failed';
  if (type === 'conflict') return 'conflict';
  if (type === 'namespace-missing') return 'namespace-missing';
  return 'in-sync';
}

export class CopyStates {
  private readonly byDistribution = new Map<string, Record<CopyState, number>>();

  constructor(private readonly gauge: Metrics['copies']) {}

  record(name: string, outcomes: readonly Outcome[]): void {
    const counts: Record<CopyState, number> = { 'in-sync': 0, conflict: 0, 'namespace-missing': 0, failed: 0 };
    for (const outcome of outcomes) {
      const state = stateOf(outcome);
      if (state) counts[state] += 1;
    }
    this.byDistribution.set(name, counts);
    this.publish();
  }

  forget(name: string): void {
    if (this.byDistribution.delete(name)) this.publish();
  }

  private publish(): void {
    for (const state of STATES) {
      let total = 0;
      for (const counts of this.byDistribution.values()) total += counts[state];
      this.gauge.set({ state }, total);
    }
  }
}
