// The status: counts, the six conditions (and SourceNotFound, AuthorAccessDenied), then Ready and
// Stalled, from what applying the plan produced.
import { canonicalJson } from './hash.js';
import { readinessConditions } from './readiness.js';
import { toRfc3339 } from './timestamp.js';
import {
  CONDITION_TYPES,
  type Action,
  type Condition,
  type ConditionType,
  type ConflictReason,
  type DistributionStatus,
  type FailedVerb,
  type FailureConditionType,
  type Outcome,
  type ResourceDistribution,
  SOURCE_CONDITION,
  AUTHOR_CONDITION,
  NOT_DISTRIBUTABLE_CONDITION,
  ANNOTATION_ADOPT,
} from './types.js';

/** Nothing of the source is written: how many targets it has, and why (the condition's message). */
export interface HeldCopies {
  desired: number;
  message: string;
}

/**
 * For a distribution with spec.source: whether the source was found; if not, what to report. A
 * source found that its recorded author may not read (`denied`) is held like a missing one.
 */
export type SourceStatus = { found: true; denied?: HeldCopies } | ({ found: false } & HeldCopies);

/** Kept while the condition keeps its status; now when it flips (or is new). */
function transitionTime(type: ConditionType, status: Condition['status'], previous: DistributionStatus | undefined, now: Date): string {
  const before = previous?.conditions.find((c) => c.type === type);
  return before !== undefined && before.status === status ? before.lastTransitionTime : toRfc3339(now);
}

function sourceCondition(source: SourceStatus, previous: DistributionStatus | undefined, now: Date): Condition {
  const status = source.found ? 'False' : 'True';
  const lastTransitionTime = transitionTime(SOURCE_CONDITION, status, previous, now);
  if (source.found) return { type: SOURCE_CONDITION, status, reason: SUCCEEDED_REASON, lastTransitionTime };
  return { type: SOURCE_CONDITION, status, reason: CONDITION_REASONS[SOURCE_CONDITION], message: source.message, lastTransitionTime };
}

/**
 * Present only while it is True: otherwise a distribution keeps its six conditions (seven with
 * spec.source), whose order tools may rely on.
 */
function heldCondition(type: typeof AUTHOR_CONDITION | typeof NOT_DISTRIBUTABLE_CONDITION, held: HeldCopies, previous: DistributionStatus | undefined, now: Date): Condition {
  const lastTransitionTime = transitionTime(type, 'True', previous, now);
  return { type, status: 'True', reason: CONDITION_REASONS[type], message: held.message, lastTransitionTime };
}

/**
 * AuthorAccessDenied, when it holds: for the source (nothing is written), or else for the targets
 * the author may not write in (named in failedNamespace).
 */
function authorConditions(source: SourceStatus | undefined, deniedTargets: readonly Failure[], distribution: ResourceDistribution, now: Date): Condition[] {
  if (source?.found === true && source.denied !== undefined) return [heldCondition(AUTHOR_CONDITION, source.denied, distribution.status, now)];
  if (source?.found === false || deniedTargets.length === 0) return [];
  return [buildCondition(AUTHOR_CONDITION, deniedTargets, distribution, now)];
}

/** Reasons of a True condition: CamelCase identifiers, as Kubernetes conventions ask. */
export const CONDITION_REASONS: Record<FailureConditionType, string> = {
  GetResourceFailed: 'GetFailed',
  CreateResourceFailed: 'CreateFailed',
  UpdateResourceFailed: 'UpdateFailed',
  DeleteResourceFailed: 'DeleteFailed',
  ConflictOccurred: 'ResourceConflict',
  // OpenKruise writes the sentence "namespace not found" as the reason; we keep it as the message.
  NamespaceNotExists: 'NamespaceNotFound',
  SourceNotFound: 'SourceNotFound',
  AuthorAccessDenied: 'AuthorLacksAccess',
  NotDistributable: 'NotDistributable',
};
export const SUCCEEDED_REASON = 'Succeeded';

const VERB_CONDITION: Record<FailedVerb, FailureConditionType> = {
  get: 'GetResourceFailed',
  create: 'CreateResourceFailed',
  update: 'UpdateResourceFailed',
  delete: 'DeleteResourceFailed',
};

/** Messages stay short however many namespaces fail. */
const MAX_LISTED = 10;
/**
 * failedNamespace lists at most this many (the first by name; the message gives the total): with
 * 10,000 missing namespaces the full list would push a large distribution past the size etcd
 * accepts, and then no status could be written at all.
 */
export const MAX_FAILED_NAMESPACES = 100;

interface Failure {
  namespace: string;
  detail: string;
  /** No retry of ours mends it (a conflict, a missing namespace, a write the API server refused): it makes the distribution Stalled. */
  waits: boolean;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function listBriefly(items: readonly string[], separator = '; '): string {
  const shown = items.slice(0, MAX_LISTED).join(separator);
  return items.length > MAX_LISTED ? `${shown}${separator}and ${items.length - MAX_LISTED} more` : shown;
}

function conditionFailure(outcome: Outcome): [FailureConditionType, Failure] | undefined {
  const { action } = outcome;
  // A denied author, a write the API server refused, a conflict, a missing namespace: each waits on someone.
  if (!outcome.ok) return [outcome.denied ? AUTHOR_CONDITION : VERB_CONDITION[outcome.verb], { namespace: action.namespace, detail: outcome.message, waits: outcome.denied === true || !outcome.transient }];
  if (action.type === 'conflict') return ['ConflictOccurred', { namespace: action.namespace, detail: action.reason, waits: true }];
  if (action.type === 'namespace-missing') return ['NamespaceNotExists', { namespace: action.namespace, detail: '', waits: true }];
  return undefined;
}

/**
 * How to hand a foreign object over, in the terms of the API the distribution came from: an
 * ObjectSync is consented to by `<namespace>/<name>` and has no writePolicy. The annotation alone
 * brings the object to it at once (objects under a distributed name are watched).
 */
export function adoptionAdvice(rd: Pick<ResourceDistribution, 'metadata' | 'origin'>): string {
  if (rd.origin !== undefined) return `annotate it ${ANNOTATION_ADOPT}=${rd.origin.namespace}/${rd.origin.name} to hand it over to ObjectSync ${rd.origin.namespace}/${rd.origin.name}`;
  return `annotate it ${ANNOTATION_ADOPT}=${rd.metadata.name} to hand it over, or use writePolicy overwrite`;
}

/** What each conflict reason means, in the words of the condition's message. */
function conflictMeaning(reason: ConflictReason, rd: Pick<ResourceDistribution, 'metadata' | 'origin'>): string {
  switch (reason) {
    case 'foreign-object':
      return `an object someone else made; ${adoptionAdvice(rd)}`;
    case 'from-changed':
      return 'its kruise.io/resourcedistribution.resource.from annotation names another distribution';
    case 'owned-by-other':
      return 'its controller reference names another owner';
    case 'forbidden-type':
      return 'a Secret of a type never written over';
    case 'strict-blocked':
      return 'not written: writePolicy strict holds every write while another target conflicts';
  }
}

const CONFLICT_REASONS: readonly string[] = ['foreign-object', 'from-changed', 'owned-by-other', 'forbidden-type', 'strict-blocked'];

function conflictReason(reason: string, rd: Pick<ResourceDistribution, 'metadata' | 'origin'>): string {
  return CONFLICT_REASONS.includes(reason) ? `${reason} (${conflictMeaning(reason as ConflictReason, rd)})` : reason;
}

function message(type: ConditionType, failures: readonly Failure[], rd: Pick<ResourceDistribution, 'metadata' | 'origin'>): string {
  const sorted = [...failures].sort((a, b) => compare(a.namespace, b.namespace));
  if (type === 'NamespaceNotExists') return `namespace not found: ${listBriefly(sorted.map((f) => f.namespace), ', ')}`;
  if (type === 'ConflictOccurred') {
    const byReason = new Map<string, string[]>();
    for (const f of sorted) byReason.set(f.detail, [...(byReason.get(f.detail) ?? []), f.namespace]);
    const reasons = [...byReason].sort(([a], [b]) => compare(a, b));
    return reasons.map(([reason, namespaces]) => `${conflictReason(reason, rd)}: ${listBriefly(namespaces, ', ')}`).join('; ');
  }
  if (type === AUTHOR_CONDITION) return authorMessage(sorted);
  return listBriefly(sorted.map((f) => `${f.namespace}: ${f.detail}`));
}

/** Targets the author may not write, grouped by what they may not do: `author "a" may not create secrets in namespace b, c: ...`. */
function authorMessage(sorted: readonly Failure[]): string {
  const byDenial = new Map<string, string[]>();
  for (const f of sorted) byDenial.set(f.detail, [...(byDenial.get(f.detail) ?? []), f.namespace]);
  const denials = [...byDenial].sort(([a], [b]) => compare(a, b));
  const lines = denials.map(([denial, namespaces]) => `${denial} in namespace${namespaces.length === 1 ? '' : 's'} ${listBriefly(namespaces, ', ')}`);
  return `${lines.join('; ')}: no copy is written there until the author may`;
}

function buildCondition(
  type: FailureConditionType,
  failures: readonly Failure[],
  distribution: ResourceDistribution,
  now: Date,
): Condition {
  const previous = distribution.status;
  const status = failures.length > 0 ? 'True' : 'False';
  const lastTransitionTime = transitionTime(type, status, previous, now);
  if (status === 'False') return { type, status, reason: SUCCEEDED_REASON, lastTransitionTime };
  const failedNamespace = [...new Set(failures.map((f) => f.namespace))].sort().slice(0, MAX_FAILED_NAMESPACES);
  return { type, status, reason: CONDITION_REASONS[type], message: message(type, failures, distribution), lastTransitionTime, failedNamespace };
}

function succeededIn(outcome: Outcome): boolean {
  const { type } = outcome.action;
  return outcome.ok && (type === 'in-sync' || type === 'create' || type === 'update' || type === 'recreate');
}

/**
 * What the passes over a distribution found: an outcome per target (and per failed delete), or,
 * for the many targets in sync, their names alone in `inSync`: a status over 10,000 targets is
 * then computed from the few other outcomes, without an object per namespace.
 */
export interface PassOutcomes {
  outcomes: readonly Outcome[];
  /** Namespaces whose copy is in sync, besides (and not among the targets of) `outcomes`. */
  inSync?: ReadonlySet<string>;
}

/** Actions on copies in namespaces no longer targeted: they count in no total (a failed one still reports its condition). */
const LEAVING: ReadonlySet<Action['type']> = new Set(['delete', 'release']);

/** The conditions failures are tallied for: the six, and targets the author may not write in. */
const TALLIED: readonly FailureConditionType[] = [...CONDITION_TYPES, AUTHOR_CONDITION];

/** The number of target namespaces, how many of them are in sync, and the failures by condition. */
function tally(found: PassOutcomes): { targets: number; inSync: number; failures: Map<FailureConditionType, Failure[]> } {
  const named = found.inSync ?? new Set<string>();
  const targets = new Set<string>();
  // Few or none: a steady pass over 10,000 targets builds no second set of them.
  const failing = new Set<string>();
  const failures = new Map<FailureConditionType, Failure[]>(TALLIED.map((type) => [type, []]));
  for (const outcome of found.outcomes) {
    const namespace = outcome.action.namespace;
    if (!LEAVING.has(outcome.action.type) && !named.has(namespace)) targets.add(namespace);
    if (succeededIn(outcome)) continue;
    failing.add(namespace);
    const failure = conditionFailure(outcome);
    if (failure !== undefined) failures.get(failure[0])?.push(failure[1]);
  }
  const count = targets.size + named.size;
  let inSync = count;
  for (const namespace of failing) if (targets.has(namespace) || named.has(namespace)) inSync -= 1;
  return { targets: count, inSync, failures };
}

/** The failure conditions that wait on someone: a missing, unreadable or undistributable source, and those with a failure no retry mends. */
function waitingConditions(failures: ReadonlyMap<FailureConditionType, readonly Failure[]>, source: SourceStatus | undefined, undistributable: HeldCopies | undefined): Set<FailureConditionType> {
  const waiting = new Set<FailureConditionType>();
  for (const [type, found] of failures) if (found.some((failure) => failure.waits)) waiting.add(type);
  if (source !== undefined) waiting.add(SOURCE_CONDITION).add(AUTHOR_CONDITION);
  if (undistributable !== undefined) waiting.add(NOT_DISTRIBUTABLE_CONDITION);
  return waiting;
}

/** After the six: the source's, and those present only while something holds copies back. */
function heldConditions(input: { distribution: ResourceDistribution; now: Date; source?: SourceStatus; undistributable?: HeldCopies; deniedTargets: readonly Failure[] }): Condition[] {
  const { distribution, now, source, undistributable } = input;
  const conditions: Condition[] = [];
  if (source) conditions.push(sourceCondition(source, distribution.status, now));
  conditions.push(...authorConditions(source, input.deniedTargets, distribution, now));
  if (undistributable !== undefined) conditions.push(heldCondition(NOT_DISTRIBUTABLE_CONDITION, undistributable, distribution.status, now));
  return conditions;
}

/**
 * desired = target namespaces (existing and missing); succeeded = those whose copy is in sync or
 * was written; failed = desired - succeeded. Deletes from namespaces no longer targeted count in
 * no total but still report DeleteResourceFailed. lastTransitionTime moves only when that
 * condition's status flips. Ready and Stalled come last (see readiness.ts).
 */
export function computeStatus(
  input: PassOutcomes & {
    distribution: ResourceDistribution;
    now: Date;
    source?: SourceStatus;
    /** What it would copy is never copied (nothing is written; every target counts as not in sync), and why. */
    undistributable?: HeldCopies;
  },
): DistributionStatus {
  const { distribution, now, source } = input;
  const { targets, inSync, failures } = tally(input);
  // With its source missing or denied, nothing is written, and no target holds what the source would give.
  const held = input.undistributable ?? (source?.found === false ? source : source?.denied);
  const desired = held === undefined ? targets : held.desired;
  const succeeded = held === undefined ? inSync : 0;
  const conditions = [
    ...CONDITION_TYPES.map((type) => buildCondition(type, failures.get(type) ?? [], distribution, now)),
    ...heldConditions({ ...input, deniedTargets: failures.get(AUTHOR_CONDITION) ?? [] }),
  ];
  const since = (type: ConditionType, status: Condition['status']): string => transitionTime(type, status, distribution.status, now);
  const failed = desired - succeeded;
  conditions.push(...readinessConditions({ conditions, waiting: waitingConditions(failures, source, input.undistributable), desired, failed, since }));
  const status: DistributionStatus = { desired, succeeded, failed, conditions };
  const generation = distribution.metadata.generation;
  if (generation !== undefined) status.observedGeneration = generation;
  return status;
}

/** Whether writing `b` would change anything (key order and absent-vs-undefined do not count). */
export function statusEquals(a: DistributionStatus | undefined, b: DistributionStatus): boolean {
  return a !== undefined && canonicalJson(a) === canonicalJson(b);
}

/** The ConflictOccurred condition when the status reports a conflict (its failedNamespace lists where). */
export function reportedConflict(status: DistributionStatus | undefined): Condition | undefined {
  return status?.conditions.find((condition) => condition.type === 'ConflictOccurred' && condition.status === 'True');
}
