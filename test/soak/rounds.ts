// The soak itself: rounds of a few operations at a bounded rate, a fault in about half of them
// started at a random operation and running alongside the rest, then a quiet period in which the
// checker must find the cluster as the README promises.
import { setTimeout as sleep } from 'node:timers/promises';
import { checkLeaks } from './check-leaks.js';
import { checkPods, type PodAdmission } from './check-pods.js';
import { checkRefusals } from './check-refusals.js';
import { chooseFault, runFault, type FaultContext, type FaultRun } from './faults.js';
import type { Ledger } from './ledger.js';
import type { Model } from './model.js';
import { applyToModel, valuesOf } from './model-update.js';
import { chooseOperation, type Operation } from './operations.js';
import type { Prng } from './prng.js';
import { quietPeriod } from './quiet-period.js';
import { readSnapshot } from './snapshot.js';
import type { Outcome } from './soak-kube.js';
import type { Convergence, RunTally } from './report.js';
import type { SoakWorld } from './setup.js';
import { violation } from './violation.js';
import { checkWebhookErrors, webhookErrors, type WebhookSample } from './webhook-metrics.js';

const OPERATION_INTERVAL_MS = 300;
const CONVERGE_TIMEOUT_MS = 60_000;

export interface SoakState {
  world: SoakWorld;
  faults: FaultContext;
  model: Model;
  prng: Prng;
  ledger: Ledger;
  step: number;
  round: number;
  /** Per replica process, the last API request counts its /metrics gave. */
  requests: Map<string, Record<string, number>>;
  /**
   * This round's reads of the API server's failed calls to our webhooks (at its start, when its
   * fault starts and is over, when its operations are done, after its quiet period); the last one
   * starts the next round's.
   */
  webhookSamples: WebhookSample[];
  /** The reads of those, one at a time (a fault's end may come during an operation's). */
  sampling: Promise<void>;
  log: (line: string) => void;
  /** One JSON line per operation, with its outcome (ops.jsonl beside the replicas' logs). */
  journal: (line: string) => void;
  /** This round's admitted pods, with the cluster as it was when each was written. */
  pods: PodAdmission[];
  /** Summed over the run, for the report. */
  tally: RunTally;
}


/** An admitted pod and the cluster at its revision, read at once (before a compaction can take it). */
async function notePod(state: SoakState, step: number, operation: Operation, outcome: Outcome): Promise<void> {
  if (outcome.result !== 'ok' || !outcome.pod) return;
  const plan = operation.op === 'pod-create' || operation.op === 'namespace-create' ? operation.pod : undefined;
  if (!plan) return;
  if ('failed' in outcome.pod) {
    state.tally.podsRefused += 1;
    state.log(`step ${step} pod ${plan.namespace}/${plan.name} failed: ${outcome.pod.failed}`);
    return;
  }
  const { resourceVersion } = outcome.pod;
  const at = Date.now();
  const atAdmission = await readSnapshot(state.world.kube.core, state.world.kube.custom, resourceVersion).catch(() => undefined);
  state.pods.push({ step, at, plan, resourceVersion, ...(atAdmission ? { atAdmission } : {}) });
}

/**
 * Reads the API server's count of failed calls to our webhooks, when it answers. One read at a
 * time, in order, so that each sample's counts are at least those of the one before (unless the
 * API server restarted).
 */
export function sampleWebhooks(state: SoakState): Promise<void> {
  state.sampling = state.sampling.then(async () => {
    const metrics = await state.world.kube.apiserverMetrics().catch(() => undefined);
    if (metrics !== undefined) state.webhookSamples.push({ at: Date.now(), errors: webhookErrors(metrics) });
  });
  return state.sampling;
}

async function operations(state: SoakState, count: number, faultAt: number | undefined): Promise<FaultRun | undefined> {
  let fault: Promise<FaultRun> | undefined;
  for (let i = 0; i < count; i++) {
    // Drawn in the same order whatever happens, so that a seed replays the same sequence.
    if (i === faultAt) {
      const kind = chooseFault(state.prng);
      await sampleWebhooks(state);
      fault = runFault(kind, state.faults).then(async (run) => {
        await sampleWebhooks(state);
        return run;
      });
      // Awaited once the operations are done; until then a failure must not count as unhandled.
      fault.catch(() => undefined);
    }
    state.step += 1;
    const operation = chooseOperation(state.model, state.prng);
    state.ledger.intend(operation, state.model);
    applyToModel(state.model, operation);
    state.ledger.values.push(...valuesOf(operation));
    const startedAt = Date.now();
    const outcome = await state.world.kube.apply(operation);
    state.ledger.record(state.step, operation, outcome, { startedAt, endedAt: Date.now() });
    await notePod(state, state.step, operation, outcome);
    state.journal(JSON.stringify({ round: state.round, step: state.step, at: new Date().toISOString(), ...operation, outcome }));
    if (outcome.result === 'failed') state.log(`step ${state.step} ${operation.op} failed: ${outcome.message}`);
    await sleep(OPERATION_INTERVAL_MS);
  }
  return fault;
}

async function scrapeRequests(state: SoakState): Promise<void> {
  for (const [process, counts] of await state.world.replicas.apiRequests()) state.requests.set(process, counts);
}

/** Leaks in the log lines printed since the last check and in every Event; exits the soak did not cause. */
async function sideChecks(state: SoakState, events: readonly { reason: string; message: string; involved: string }[]): Promise<void> {
  const sources = await state.world.replicas.newLogLines();
  sources.push({ where: 'Events', lines: events.map((e) => `${e.involved} ${e.reason} ${e.message}`) });
  const found = checkLeaks(state.ledger.values, sources);
  const exits = await state.world.replicas.unexpectedExits().catch(() => []);
  state.ledger.report([...found, ...exits], state.round, state.step);
}

/** The API server's failed calls to our webhooks over each stretch of the round, against its fault. */
function judgeWebhookErrors(state: SoakState, fault: FaultRun | undefined): void {
  const samples = state.webhookSamples;
  for (let i = 1; i < samples.length; i++) {
    const [before, after] = [samples[i - 1], samples[i]];
    if (!before || !after) continue;
    const found = checkWebhookErrors(before, after, fault ? [fault] : []);
    state.tally.webhookErrorsTolerated += found.tolerated;
    state.tally.webhookStretches += 1;
    state.ledger.report(found.violations, state.round, state.step);
  }
  state.webhookSamples = samples.slice(-1);
}

/** Once the round's fault is over: its refused admissions and its pods, against that fault. */
function judgeRound(state: SoakState, fault: FaultRun | undefined): void {
  const faults = fault ? [fault] : [];
  const refusals = checkRefusals(state.ledger.refusals, faults);
  const pods = checkPods(state.pods, faults, state.ledger.expectations().ownNamespace);
  state.pods = [];
  state.tally.refusalsTolerated += refusals.tolerated;
  state.tally.podsChecked += pods.checked;
  state.tally.podReferences += pods.references;
  state.tally.podsExempt += pods.exempt;
  state.ledger.report([...refusals.violations, ...pods.violations], state.round, state.step);
}

export async function runRound(state: SoakState): Promise<Convergence> {
  state.round += 1;
  const count = state.prng.int(3, 10);
  const faulty = state.prng.chance(0.5);
  const faultAt = faulty ? state.prng.int(0, count - 1) : undefined;
  let fault: FaultRun | undefined;
  try {
    fault = await operations(state, count, faultAt);
  } catch (error) {
    state.ledger.report([violation('fault-not-recovered', `round ${state.round}`, error instanceof Error ? error.message : String(error))], state.round, state.step);
  }
  await state.world.replicas.heal();
  judgeRound(state, fault);
  await sampleWebhooks(state);
  const quiet = await quietPeriod(state.world.kube, () => state.ledger.expectations(), CONVERGE_TIMEOUT_MS);
  if (!quiet.converged) {
    state.log(`round ${state.round} (step ${state.step}): not converged after ${CONVERGE_TIMEOUT_MS / 1000} s: ${quiet.violations.map((v) => `${v.rule} ${v.subject}: ${v.detail}`).join(' | ')}`);
    state.ledger.report(quiet.violations, state.round, state.step);
  }
  await sideChecks(state, quiet.snapshot?.events ?? []);
  await sampleWebhooks(state);
  judgeWebhookErrors(state, fault);
  state.ledger.endRound();
  await scrapeRequests(state);
  state.log(`round ${state.round}: ${count} operations (to step ${state.step})${fault ? `, ${fault.kind} of ${fault.target}` : ''}; ${quiet.converged ? `converged in ${quiet.ms} ms` : 'NOT converged'}`);
  return { round: state.round, step: state.step, ...(fault ? { fault } : {}), converged: quiet.converged, coverage: quiet.coverage, ...(quiet.converged ? { quietToConvergedMs: quiet.ms } : {}) };
}
