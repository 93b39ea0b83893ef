// What a pass wrote, counted for its one log line: a template change over 10,000 namespaces is one
// line saying so, not 10,000 (each copy's write is logged at debug).
import type { ActionType, Outcome } from './types.js';

export interface WriteSummary {
  created?: number;
  updated?: number;
  recreated?: number;
  deleted?: number;
  released?: number;
  /** Writes attempted that failed (refusals of the recorded author's rights included). */
  failed?: number;
}

const COUNTED: Partial<Record<ActionType, Exclude<keyof WriteSummary, 'failed'>>> = {
  create: 'created',
  update: 'updated',
  recreate: 'recreated',
  delete: 'deleted',
  release: 'released',
};

/** The writes among `outcomes`, by what they did (fields that would be 0 are left out); undefined when there were none. */
export function summarizeWrites(outcomes: readonly Outcome[]): WriteSummary | undefined {
  const summary: WriteSummary = {};
  let writes = 0;
  for (const outcome of outcomes) {
    const field = outcome.ok ? COUNTED[outcome.action.type] : COUNTED[outcome.action.type] && 'failed';
    if (field === undefined) continue;
    summary[field] = (summary[field] ?? 0) + 1;
    writes += 1;
  }
  return writes === 0 ? undefined : summary;
}
