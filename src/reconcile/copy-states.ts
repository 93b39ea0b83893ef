// The copies gauge: target namespaces by the state of their copy, summed over distributions.
import type { PassOutcomes } from '../domain/status.js';
import type { Outcome } from '../domain/types.js';
import type { Metrics } from '../metrics.js';

export type CopyState = 'in-sync' | 'conflict' | 'namespace-missing' | 'failed';
const STATES: readonly CopyState[] = ['in-sync', 'conflict', 'namespace-missing', 'failed'];

function stateOf(outcome: Outcome): CopyState | undefined {
  const { type } = outcome.action;
  if (type === 'delete' || type === 'release') return undefined;
  if (!outcome.ok) return 'failed';
  if (type === 'conflict') return 'conflict';
  if (type === 'namespace-missing') return 'namespace-missing';
  return 'in-sync';
}

export class CopyStates {
  private readonly byDistribution = new Map<string, Record<CopyState, number>>();
  /** The sums over every distribution, kept as each changes: a pass publishes in constant time, not in the number of distributions. */
  private readonly totals: Record<CopyState, number> = { 'in-sync': 0, conflict: 0, 'namespace-missing': 0, failed: 0 };

  constructor(private readonly gauge: Metrics['copies']) {}

  record(name: string, found: PassOutcomes): void {
    const counts: Record<CopyState, number> = { 'in-sync': found.inSync?.size ?? 0, conflict: 0, 'namespace-missing': 0, failed: 0 };
    for (const outcome of found.outcomes) {
      const state = stateOf(outcome);
      if (state) counts[state] += 1;
    }
    this.replace(name, counts);
  }

  forget(name: string): void {
    if (this.byDistribution.has(name)) this.replace(name, undefined);
  }

  private replace(name: string, counts: Record<CopyState, number> | undefined): void {
    const old = this.byDistribution.get(name);
    if (counts === undefined) this.byDistribution.delete(name);
    else this.byDistribution.set(name, counts);
    for (const state of STATES) {
      this.totals[state] += (counts?.[state] ?? 0) - (old?.[state] ?? 0);
      this.gauge.set({ state }, this.totals[state]);
    }
  }
}
