// Ready and Stalled: the two conditions that tools read, after the failure conditions (whose order
// and meaning stay Kruise's). kstatus, the status reader of Flux and kpt, takes Stalled=True as
// Failed, Ready=False as InProgress and Ready=True as Current once observedGeneration matches;
// Argo CD's health check (integrations/argocd/health.lua) reads the same fields. Pure.
import { READY_CONDITION, STALLED_CONDITION, type Condition, type ConditionType, type FailureConditionType } from './types.js';

/** Ready True; Stalled False while nothing fails. */
export const READY_REASON = 'Synced';
/** Ready False with no failure condition to name (not expected: every target not in sync has one). */
export const NOT_READY_REASON = 'NotSynced';
/** Stalled False while what fails is retried (API errors that may pass: 409, 429, 5xx, lost connections). */
export const RETRYING_REASON = 'Retrying';
export const NOT_STALLED_REASON = 'Succeeded';

export interface ReadinessInput {
  /** The failure conditions, in their order. */
  conditions: readonly Condition[];
  /** The failure conditions whose failures wait on someone: no retry of ours mends them. */
  waiting: ReadonlySet<FailureConditionType>;
  desired: number;
  failed: number;
  /** lastTransitionTime for a condition of this type and status (kept while the status is kept). */
  since: (type: ConditionType, status: Condition['status']) => string;
}

function said(conditions: readonly Condition[]): string {
  return conditions.map((condition) => `${condition.type}: ${condition.message ?? condition.reason}`).join('; ');
}

function ready(input: ReadinessInput, failing: readonly Condition[]): Condition {
  const { desired, failed, since } = input;
  if (failed === 0 && failing.length === 0) {
    return { type: READY_CONDITION, status: 'True', reason: READY_REASON, message: `${desired} of ${desired} targets hold a correct copy`, lastTransitionTime: since(READY_CONDITION, 'True') };
  }
  const counted = `${failed} of ${desired} targets without a correct copy`;
  const message = failing.length === 0 ? counted : `${counted}; ${said(failing)}`;
  return { type: READY_CONDITION, status: 'False', reason: failing[0]?.reason ?? NOT_READY_REASON, message, lastTransitionTime: since(READY_CONDITION, 'False') };
}

function stalled(input: ReadinessInput, failing: readonly Condition[], isReady: boolean): Condition {
  const { waiting, since } = input;
  const stuck = failing.filter((condition) => waiting.has(condition.type as FailureConditionType));
  if (stuck.length > 0) {
    const message = `waits on a change to the cluster or the distribution; ${said(stuck)}`;
    return { type: STALLED_CONDITION, status: 'True', reason: stuck[0]?.reason ?? NOT_READY_REASON, message, lastTransitionTime: since(STALLED_CONDITION, 'True') };
  }
  const lastTransitionTime = since(STALLED_CONDITION, 'False');
  if (isReady) return { type: STALLED_CONDITION, status: 'False', reason: NOT_STALLED_REASON, lastTransitionTime };
  return { type: STALLED_CONDITION, status: 'False', reason: RETRYING_REASON, message: 'what failed is retried', lastTransitionTime };
}

/**
 * Ready: True when no target is without a correct copy and no failure condition is True (a copy
 * that could not be deleted where the distribution no longer targets counts too); False with the
 * first True condition's reason and every True condition's message otherwise. Stalled: True when
 * one of the True conditions waits on someone (a conflict, a missing namespace or source, an
 * author without access, a write the API server refused); False while every failure is retried.
 * The status is computed from the generation it reports, so Ready speaks of that generation.
 */
export function readinessConditions(input: ReadinessInput): [Condition, Condition] {
  const failing = input.conditions.filter((condition) => condition.status === 'True');
  const readyCondition = ready(input, failing);
  return [readyCondition, stalled(input, failing, readyCondition.status === 'True')];
}
