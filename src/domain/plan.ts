// The plan: what to do in every namespace, decided purely from caches' contents.
import { classifyExisting, isControlledBy, isControlledByOtherDistribution, isOursInSync, mergeCopy, needsRecreate, renderCopy } from './copy.js';
import { claimedCopy, createOnceDecision, createsOnce, leaveNamespace } from './create-once.js';
import { hashResource } from './hash.js';
import { reportedConflict } from './status.js';
import { runSteps, type Steps } from './steps.js';
import { computeTargets, forbiddenFor, NAMESPACES_PER_STEP, targetsInSteps } from './targets.js';
import { mergeTallies, tallyAction, type PlanTally } from './plan-preview.js';
import type { Action, ActionType, ConflictReason, DistributionStatus, NamespaceInfo, PlannedAction, ResolvedDistribution, Resource, ResourceDistribution } from './types.js';

/**
 * Under writePolicy overwrite we take over what is not ours, except Secrets of a forbidden type
 * and another distribution's copies (two distributions overwriting each other would never settle).
 */
function mayOverwrite(rd: ResourceDistribution, existing: Resource, reason: ConflictReason): boolean {
  return reason !== 'forbidden-type' && reason !== 'strict-blocked' && !isControlledByOtherDistribution(rd, existing);
}

function writeOver(namespace: string, desired: Resource, existing: Resource): Action {
  const merged = mergeCopy(desired, existing);
  if (!needsRecreate(desired, existing)) return { type: 'update', namespace, object: merged };
  delete merged.metadata.resourceVersion;
  return { type: 'recreate', namespace, object: merged, existingUid: existing.metadata.uid ?? '' };
}

/** What to do in one target namespace, before any copy is rendered. */
type Decision =
  | { type: 'create' }
  | { type: 'in-sync' }
  | { type: 'conflict'; reason: ConflictReason }
  | { type: 'write-over'; existing: Resource }
  /** syncPolicy CreateOnce: our copy, not under this distribution's controller reference: ownership restored, content kept. */
  | { type: 'claim'; existing: Resource };

// Shared: a preview decides for every target namespace, 10,000 of them maybe.
const CREATE: Decision = { type: 'create' };
const IN_SYNC: Decision = { type: 'in-sync' };

function decide(rd: ResolvedDistribution, existing: Resource | undefined, hash: string): Decision {
  if (existing === undefined) return CREATE;
  if (createsOnce(rd)) {
    const once = createOnceDecision(rd, existing);
    if (once === 'present') return IN_SYNC;
    if (once === 'claim') return { type: 'claim', existing };
  }
  if (isOursInSync(rd, existing, hash)) return IN_SYNC;
  const classification = classifyExisting(rd, existing);
  if (classification.kind === 'conflict') {
    const overwrite = rd.spec.writePolicy === 'overwrite' && mayOverwrite(rd, existing, classification.reason);
    if (!overwrite) return { type: 'conflict', reason: classification.reason };
  }
  return { type: 'write-over', existing };
}

/**
 * The decision for one existing target namespace. Adoption is an in-place update under every
 * writePolicy. `hash` as for renderCopy. The desired copy is rendered only when something is written.
 */
export function planNamespace(
  rd: ResolvedDistribution,
  namespace: string,
  existing: Resource | undefined,
  now: Date,
  hash: string = hashResource(rd.spec.resource),
): Action {
  const decision = decide(rd, existing, hash);
  switch (decision.type) {
    case 'create':
      return { type: 'create', namespace, object: renderCopy(rd, namespace, now, hash) };
    case 'in-sync':
      return { type: 'in-sync', namespace };
    case 'conflict':
      return { type: 'conflict', namespace, reason: decision.reason };
    case 'write-over':
      return writeOver(namespace, renderCopy(rd, namespace, now, hash), decision.existing);
    case 'claim':
      return { type: 'update', namespace, object: claimedCopy(rd, decision.existing) };
  }
}

const WRITES: ReadonlySet<Action['type']> = new Set(['create', 'update', 'recreate']);

/** Whether the action writes a copy (a delete removes one). */
export function writesCopy(action: Action): boolean {
  return WRITES.has(action.type);
}

/**
 * Writes outside the reconciler's passes (the namespace generator, the pod materialiser) see one
 * namespace, not every target, so under writePolicy strict they cannot tell whether a conflict
 * elsewhere forbids the write. They write only once a status for the current spec says no target
 * conflicts; until then, or while one does, the reconciler alone decides.
 */
export function writesHeldBack(rd: ResourceDistribution): boolean {
  if (rd.spec.writePolicy !== 'strict') return false;
  const status = rd.status;
  if (status === undefined || status.observedGeneration !== rd.metadata.generation) return true;
  return reportedConflict(status) !== undefined;
}

/**
 * writePolicy strict: all or nothing. While any target has a conflict, every write into a target
 * becomes a `strict-blocked` conflict. Copies already in sync stay so, and deletes of our own
 * copies from namespaces no longer targeted still happen: they overwrite nobody's object.
 */
function applyStrict<T extends PlannedAction>(actions: T[]): (T | Action)[] {
  if (!actions.some((action) => action.type === 'conflict')) return actions;
  return actions.map((action) =>
    WRITES.has(action.type) ? { type: 'conflict', namespace: action.namespace, reason: 'strict-blocked' } : action,
  );
}

/**
 * Our copies in namespaces that exist and are no longer targeted, if this distribution (by uid)
 * controls them (see isControlledBy). A namespace the caller does not
 * know yet (its watch event has not arrived, while a generator already wrote its copy) or one that
 * is terminating is left alone: deleting there would throw away a fresh copy or do nothing useful.
 */
function deletes(
  rd: ResolvedDistribution,
  existing: ReadonlyMap<string, Resource>,
  targets: ReadonlySet<string>,
  namespaces: readonly NamespaceInfo[],
): Action[] {
  const live = new Set(namespaces.filter((ns) => !ns.terminating).map((ns) => ns.name));
  const hash = createsOnce(rd) ? hashResource(rd.spec.resource) : undefined;
  const actions: Action[] = [];
  for (const [namespace, object] of existing) {
    if (targets.has(namespace) || !live.has(namespace) || classifyExisting(rd, object).kind !== 'ours' || !isControlledBy(rd, object)) continue;
    // CreateOnce: the namespace may have made the copy its own; only an untouched one is deleted.
    if (hash !== undefined) {
      actions.push(leaveNamespace(rd, object, hash));
      continue;
    }
    const name = object.metadata.name ?? rd.spec.resource.metadata.name ?? '';
    actions.push({ type: 'delete', namespace, name, uid: object.metadata.uid ?? '' });
  }
  return actions;
}

interface PlanInput {
  distribution: ResolvedDistribution;
  namespaces: readonly NamespaceInfo[];
  existing: ReadonlyMap<string, Resource>;
  forbidden?: readonly string[];
  now: Date;
  /**
   * Plan these namespaces only (`namespaces` and `existing` then hold no others): the result is
   * the part of the whole plan that concerns them.
   */
  within?: ReadonlySet<string>;
  /**
   * For a preview: namespaces where the status already reports a conflict over these copies. The
   * caches hold only copies of ours, so a preview would otherwise plan a create over what the
   * reconciler has found to be someone else's object.
   */
  knownConflicts?: ReadonlySet<string>;
}

/** The plan, with `perTarget` deciding each targeted namespace. */
function planWith<T extends PlannedAction>(input: PlanInput, perTarget: (namespace: string, existing: Resource | undefined, hash: string) => T): (T | Action)[] {
  const { distribution: rd, existing } = input;
  const { targeted, missing } = computeTargets(rd.spec.targets, input.namespaces, forbiddenFor(rd, input.forbidden));
  const hash = hashResource(rd.spec.resource);
  const targetActions = targeted.map((namespace) => perTarget(namespace, existing.get(namespace), hash));
  const { within } = input;
  const missingActions: Action[] = (within === undefined ? missing : missing.filter((namespace) => within.has(namespace))).map((namespace) => ({ type: 'namespace-missing', namespace }));
  // Most plans have no copy to delete: no sets of the (maybe 10,000) namespaces for them.
  const deleteActions = existing.size === 0 ? [] : deletes(rd, existing, new Set([...targeted, ...missing]), input.namespaces);
  const actions = [...(rd.spec.writePolicy === 'strict' ? applyStrict(targetActions) : targetActions), ...missingActions, ...deleteActions];
  // `targeted` comes sorted: only actions of the other kinds need merging in.
  if (missingActions.length === 0 && deleteActions.length === 0) return actions;
  return actions.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
}

/**
 * One action per target namespace (namespace-missing for missing ones), plus a delete for each of
 * our copies in a namespace no longer targeted. `existing` maps namespace -> the same-named object
 * of the template's kind there. Sorted by namespace.
 */
export function planDistribution(input: PlanInput): Action[] {
  return planWith(input, (namespace, existing, hash) => planNamespace(input.distribution, namespace, existing, input.now, hash));
}

/**
 * The same decisions as planDistribution, without rendering a single copy: what admission says a
 * distribution will do must not cost a copy of the template per target namespace (1 MiB × 10,000).
 * A copy written over is an update here, whether or not it must be recreated.
 */
export function previewDistribution(input: PlanInput): PlannedAction[] {
  return planWith(input, (namespace, existing, hash) => ({ type: previewType(decide(input.distribution, existing, hash)), namespace }));
}

function previewType(decision: Decision): ActionType {
  return decision.type === 'write-over' || decision.type === 'claim' ? 'update' : decision.type;
}

/**
 * previewDistribution counted: per type of action, how many and the first namespaces by name,
 * without an action (nor a sorted list of them) per namespace.
 */
export function previewTally(input: PlanInput): PlanTally {
  return runSteps(previewTallySteps(input));
}

/** previewTally, pausing every NAMESPACES_PER_STEP namespaces (admission gives the event loop turns in between). */
export function* previewTallySteps(input: PlanInput): Steps<PlanTally> {
  const { distribution: rd, existing } = input;
  const { targeted, missing } = yield* targetsInSteps(rd.spec.targets, input.namespaces, forbiddenFor(rd, input.forbidden));
  const hash = hashResource(rd.spec.resource);
  const tally: PlanTally = {};
  for (let i = 0; i < targeted.length; i++) {
    if (i > 0 && i % NAMESPACES_PER_STEP === 0) yield;
    const namespace = targeted[i] as string;
    const type = previewType(decide(rd, existing.get(namespace), hash));
    tallyAction(tally, type === 'create' && input.knownConflicts?.has(namespace) === true ? 'conflict' : type, namespace);
  }
  for (const namespace of missing) tallyAction(tally, 'namespace-missing', namespace);
  if (existing.size > 0) {
    yield;
    for (const action of deletes(rd, existing, new Set([...targeted, ...missing]), input.namespaces)) tallyAction(tally, action.type, action.namespace);
  }
  return rd.spec.writePolicy === 'strict' ? strictTally(tally) : tally;
}

/** The namespaces where a status reports a conflict (at most the first MAX_FAILED_NAMESPACES by name: the rest are not known). */
export function knownConflicts(status: DistributionStatus | undefined): ReadonlySet<string> {
  return new Set(reportedConflict(status)?.failedNamespace ?? []);
}

/** applyStrict, counted: while a target conflicts, every write counts as a conflict. */
function strictTally(tally: PlanTally): PlanTally {
  if (tally.conflict === undefined) return tally;
  const { create, update, recreate, conflict, ...others } = tally;
  const blocked = mergeTallies([conflict, create, update, recreate]);
  return blocked === undefined ? others : { ...others, conflict: blocked };
}
