import { performance } from 'node:perf_hooks';
import type { KindRegistry } from '../domain/kinds.js';
import type { SchemaValidator } from '../domain/schema.js';
import { describeTally, type PlanTally } from '../domain/plan-preview.js';
import { sourceWarnings, type SourceFound } from '../domain/source.js';
import type { Steps } from '../domain/steps.js';
import { GROUP, KIND, type ResourceDistribution, type SourceRef } from '../domain/types.js';
import { nestingValidation, validationSteps } from '../domain/validate.js';
import type { AccessReviewer } from '../k8s/access-review.js';
import { missingAccess } from './author-access.js';
import { authorVerdict, specChangeSteps } from './author-webhook.js';
import { loopSlices, whenReady, type LoopSlices } from '../loop-slices.js';
import { describeAccess, requiredAccess, stoppedTargets, type RequiredAccess } from './required-access.js';
import { allowed, denied, forbidden, type AdmissionRequest, type Verdict } from './review.js';
import type { Abandonment, Webhook } from './webhook-route.js';

export interface DistributionWebhookDeps {
  schema: SchemaValidator;
  /** From the namespace cache: undefined while it is not synced (no warning then). */
  namespaceExists: (name: string) => boolean | undefined;
  accessReviewer: AccessReviewer;
  forbiddenNamespaces: readonly string[];
  /** The kinds distributions may copy (default Secret and ConfigMap). */
  kinds?: KindRegistry;
  /** A distribution's source as found, without its data (null: it does not exist; undefined: cannot tell, no warning then). */
  findSource?: (ref: SourceRef) => Promise<SourceFound | undefined>;
  /** What the distribution would do, from the controller's caches (undefined: cannot tell, no plan then), in steps. */
  previewPlan?: (rd: ResourceDistribution) => Steps<PlanTally | undefined>;
  /** The mutating webhook records authors: a new spec without one is refused (default: allowed, as before authors were recorded). */
  recordsAuthors?: boolean;
  /** How long one request may hold the event loop before it gives the loop a turn (default ADMISSION_SLICE_MS). */
  sliceMs?: number;
  /** A monotonic clock in ms, for the slices (default performance.now). */
  now?: () => number;
}

/**
 * A request of 10,000 names and patterns takes tens of milliseconds to decide: in slices of this
 * much, every other webhook call and the reconciler are served in between.
 */
export const ADMISSION_SLICE_MS = 2;

/** The plan as warnings, for an author who is allowed (computed only then: it is theirs to see). */
function planWarnings(deps: DistributionWebhookDeps, rd: ResourceDistribution, slices: LoopSlices): string[] | Promise<string[]> {
  if (deps.previewPlan === undefined) return [];
  return whenReady(slices.run(deps.previewPlan(rd)), (tally) =>
    tally === undefined ? [] : describeTally(tally, { sameNamedUnknown: true, ...(rd.spec.writePolicy === undefined ? {} : { writePolicy: rd.spec.writePolicy }) }),
  );
}

/** A source that does not exist yet, or is never copied, is allowed (it may be created or replaced next), with a warning. */
async function sourceWarningsOf(deps: DistributionWebhookDeps, rd: ResourceDistribution): Promise<string[]> {
  const ref = rd.spec.source;
  if (ref === undefined || deps.findSource === undefined) return [];
  const found = await deps.findSource(ref).catch(() => undefined);
  return found === undefined ? [] : sourceWarnings(ref, found, rd.spec.copyData);
}

/**
 * ResourceDistribution CREATE/UPDATE: the recorded author (see author-webhook), the pure rules of the domain, then whether the author may
 * write the distributed kind in every target namespace, and on UPDATE also delete it wherever the
 * change stops distributing. DELETE is never blocked, nor is an update that leaves the spec as it
 * is (labels, annotations, finalizer removal of an object being deleted): it changes neither what
 * is copied nor where. A denial carries no warnings: they would tell an author who may not write
 * there which namespaces and sources exist.
 *
 * Decides synchronously when every access answer is remembered (see `missingAccess`).
 */
export function distributionWebhook(deps: DistributionWebhookDeps): Webhook {
  const now = deps.now ?? (() => performance.now());
  return (request, abandoned): Verdict | Promise<Verdict> => {
    const slices = loopSlices(deps.sliceMs ?? ADMISSION_SLICE_MS, now);
    return whenReady(slices.run(unreadDecision(deps, request)), (early) => early ?? decideRead(deps, request, abandoned, slices));
  };
}

/** The domain's rules, then the author's access. */
function decideRead(deps: DistributionWebhookDeps, request: AdmissionRequest, abandoned: Abandonment, slices: LoopSlices): Verdict | Promise<Verdict> {
  const validated = slices.run(
    validationSteps({
      object: request.object,
      ...(request.operation === 'UPDATE' ? { oldObject: request.oldObject } : {}),
      schema: deps.schema,
      namespaceExists: deps.namespaceExists,
      kinds: deps.kinds,
      nestingChecked: true,
    }),
  );
  return whenReady(validated, ({ problems, warnings }) =>
    problems.length > 0 ? denied(problems.map((p) => `${p.path}: ${p.message}`)) : slices.then(() => decideAccess(deps, request, abandoned, { warnings, slices })),
  );
}

/** A valid distribution: whether its author may do what it does; the warnings and the plan only for an author who may. */
function decideAccess(
  deps: DistributionWebhookDeps,
  request: AdmissionRequest,
  abandoned: Abandonment,
  { warnings, slices }: { warnings: string[]; slices: LoopSlices },
): Verdict | Promise<Verdict> {
  const rd = request.object as ResourceDistribution;
  const access = accessFor(deps, rd, request.operation === 'UPDATE' ? (request.oldObject as ResourceDistribution) : undefined);
  const refused = slices.then(() => checkAccess(deps, request, access, abandoned));
  // The plan is read from the caches in a slice of its own: it walks the targets.
  const allowedWarnings = (more: string[] = []) => (): string[] | Promise<string[]> =>
    slices.then(() => whenReady(planWarnings(deps, rd, slices), (plan) => [...warnings, ...more, ...plan]));
  if (rd.spec.source !== undefined) {
    // Whether the source exists is told only to an author allowed to read it.
    return Promise.all([refused, sourceWarningsOf(deps, rd)]).then(([lines, more]) => accessVerdict(lines, allowedWarnings(more)));
  }
  return whenReady(refused, (lines) => accessVerdict(lines, allowedWarnings()));
}

/**
 * What is decided before the distribution is read and needs no access review: what we have no say
 * over, a template too deep to read, a forged author, an unchanged spec. In steps: a template of
 * tens of thousands of keys takes milliseconds to measure and to compare.
 */
function* unreadDecision(deps: DistributionWebhookDeps, request: AdmissionRequest): Steps<Verdict | undefined> {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allowed();
  // Only a misconfigured webhook sends anything else: we have no say over it.
  if (request.kind.group !== GROUP || request.kind.kind !== KIND) return allowed();
  // Before the rest: whatever else it holds, a template nested thousands deep is never read (what
  // comes later recurses). One stored before this rule can still be deleted and lose its
  // finalizers: a distribution being deleted is no longer reconciled, whatever its spec.
  const tooDeep = yield* nestingValidation(request.object);
  if (tooDeep.length > 0) return beingDeleted(request.object) ? allowed() : denied(tooDeep.map((p) => `${p.path}: ${p.message}`));
  // Before the rest: an update that leaves the spec needs no review, but may not rename the author.
  const specChanged = yield* specChangeSteps(request);
  const forged = authorVerdict(request, deps.recordsAuthors === true, specChanged);
  if (forged !== undefined) return forged;
  return specChanged ? undefined : allowed();
}

function beingDeleted(object: unknown): boolean {
  return (object as { metadata?: { deletionTimestamp?: unknown } } | null | undefined)?.metadata?.deletionTimestamp !== undefined;
}

/** What the author is refused; while it waits for answers, the abandonment says what it is checking. */
function checkAccess(deps: DistributionWebhookDeps, request: AdmissionRequest, access: RequiredAccess, abandoned: Abandonment): string[] | Promise<string[]> {
  const refused = missingAccess(deps.accessReviewer, request.userInfo, access, abandoned.signal);
  if (!Array.isArray(refused)) abandoned.waitingFor = `checking the author's access (${describeAccess(access)})`;
  return refused;
}

/** What the author must be allowed: the distribution's own access, and on UPDATE the deletions it causes. */
function accessFor(deps: DistributionWebhookDeps, rd: ResourceDistribution, old: ResourceDistribution | undefined): RequiredAccess {
  const access = requiredAccess(rd, deps.forbiddenNamespaces, deps.kinds);
  const stopped = old === undefined ? undefined : stoppedTargets(old, rd, deps.forbiddenNamespaces, deps.kinds);
  return stopped === undefined ? access : { ...access, stops: [stopped] };
}

/** Warnings only for an author who is allowed: they tell which namespaces and sources exist, and what is there. */
function accessVerdict(refused: readonly string[], warnings: () => string[] | Promise<string[]>): Verdict | Promise<Verdict> {
  return refused.length > 0 ? forbidden(refused) : whenReady(warnings(), (lines) => allowed(lines));
}
