// reconcile(name): level-triggered and idempotent. Reads the world from the caches, plans with the
// pure domain, applies the plan through the shared copy writer (every namespace attempted, bounded
// parallelism), and writes status only when it changed. A pass over copies that are all in sync
// makes no request at all. When only some namespaces changed since a pass that still holds, the
// pass plans those alone (pass-scopes, last-passes). Its parts, each in a module of its own:
// reading what stands in each target (existing-copies), applying actions (action-applier),
// deletes beyond the plan (copy-removal), status and Events (status-reporter), whether a recorded
// author may still write a first copy where the plan makes one (author-targets). A full pass over
// many namespaces that could stand on the last one (a sweep, mostly) is made in slices, one per
// turn of the name in the queue, so that a namespace that changes meanwhile waits for one slice,
// not for the whole pass (see pass-scopes.ts); one that cannot (the template changed) is planned a
// slice at a time with a turn of the event loop between, each slice written while the next is
// planned (plan-in-turns).
import type { Clock } from '../domain/clock.js';
import { kindKeyOf, type KindKey } from '../domain/kinds.js';
import { templateHash } from '../domain/hash.js';
import { planDistribution, planNamespace, writesCopy } from '../domain/plan.js';
import { summarizeWrites } from '../domain/write-summary.js';
import { forbiddenFor, listedTargets, patternIndexSteps, targetsInSteps } from '../domain/targets.js';
import type { Action, NamespaceInfo, Outcome, ResolvedDistribution, Resource, ResourceDistribution, SourceRef } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { TerminalError } from '../k8s/errors.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import { sourceObject, type AuthorGate } from './author-gate.js';
import { gatedWrites } from './author-targets.js';
import { createActionApplier, needsRetry, type ApplyAll, type ApplyAsPlanned, type Planned } from './action-applier.js';
import { createCopyRemoval, type CopyRemoval } from './copy-removal.js';
import type { CopyWriter, WriteOutcome } from './copy-writer.js';
import type { DistributionCatalog } from './distribution-catalog.js';
import { resolveDistribution } from './distributable.js';
import type { StoredForms } from './stored-forms.js';
import { CopyStates } from './copy-states.js';
import { createExistingCopiesReader, type ExistingCopiesReader } from './existing-copies.js';
import { LastPasses } from './last-passes.js';
import { inTurns, planSlices } from './plan-in-turns.js';
import { PolicyRetries } from './policy-retries.js';
import type { PassScope, PassScopes, SlicedPass } from './pass-scopes.js';
import type { ProcessResult } from './queue.js';
import { createStatusReporter, type StatusReporter } from './status-reporter.js';
import { targetNamespaces } from './target-namespaces.js';
import { CacheBehind, TermConfirmations, type Confirmation } from './term-confirmations.js';

export interface ReconcilerDeps {
  api: ClusterApi;
  caches: Pick<Caches, 'namespaces' | 'copies' | 'sources' | 'kinds'>;
  /** The distributions, of either API. */
  catalog: DistributionCatalog;
  writer: CopyWriter;
  events: EventRecorder;
  clock: Clock;
  log: Logger;
  metrics: Pick<Metrics, 'reconcileDuration' | 'reconcileTotal' | 'copies'>;
  applyParallelism: number;
  forbiddenNamespaces: readonly string[];
  /** What each pass must look at (every target unless only some namespaces changed). */
  scopes: PassScopes;
  /** A full pass over more namespaces than this that could stand on the last one is made in slices of this many. */
  sliceSize?: number;
  /** Whether authors may still read their sources and write first copies (none: copies are written on the controller's rights alone). */
  authors?: AuthorGate;
  /** What the API server stores of templates of other kinds (none: their copies are compared by the template's fields). */
  storedForms?: StoredForms;
}

/** A few milliseconds of planning at most, between two chances for the event loop to go on. */
const SLICE_SIZE = 256;

export interface Reconciler {
  /** `signal` aborted: leadership was lost; start no further write (the queue retries later). */
  reconcile(name: string, signal?: AbortSignal): Promise<ProcessResult>;
}

const NOT_ABORTED = new AbortController().signal;

/** What one pass works with: the deps and the parts built once per reconciler. */
interface Parts {
  deps: ReconcilerDeps;
  sliceSize: number;
  reader: ExistingCopiesReader;
  applyAll: ApplyAll;
  applyAsPlanned: ApplyAsPlanned;
  parallelism: number;
  removal: CopyRemoval;
  reporter: StatusReporter;
  copyStates: CopyStates;
  lastPasses: LastPasses;
  policyRetries: PolicyRetries;
  confirmations: TermConfirmations;
}

function buildParts(deps: ReconcilerDeps): Parts {
  const { api, caches, writer, log, clock } = deps;
  const parallelism = Math.max(1, deps.applyParallelism);
  const { applyAll, applyAsPlanned } = createActionApplier(writer, parallelism);
  return {
    deps,
    sliceSize: Math.max(1, deps.sliceSize ?? SLICE_SIZE),
    reader: createExistingCopiesReader({ api, caches, parallelism, forbiddenNamespaces: deps.forbiddenNamespaces }),
    applyAll,
    applyAsPlanned,
    parallelism,
    removal: createCopyRemoval({ caches, catalog: deps.catalog, applyAll, log }),
    reporter: createStatusReporter({ catalog: deps.catalog, events: deps.events, clock, log }),
    copyStates: new CopyStates(deps.metrics.copies),
    lastPasses: new LastPasses(),
    policyRetries: new PolicyRetries(),
    confirmations: new TermConfirmations({ api, kinds: caches.kinds, catalog: deps.catalog, log }),
  };
}

/**
 * Creates planned without a read that met an object already there: read those namespaces and
 * plan them again (a conflict, an adoption, our copy without its label), within the same pass.
 */
async function createThenRead(
  parts: Parts,
  pass: { rd: ResolvedDistribution; kind: KindKey; unread: ReadonlySet<string>; now: Date; signal: AbortSignal },
  outcomes: WriteOutcome[],
): Promise<WriteOutcome[]> {
  const { rd, kind, unread, now, signal } = pass;
  const raced = new Set(outcomes.filter((o) => o.stale && o.action.type === 'create' && unread.has(o.action.namespace)).map((o) => o.action.namespace));
  if (raced.size === 0 || signal.aborted) return outcomes;
  const { existing, failures } = await parts.reader.reread(rd, kind, [...raced]);
  const hash = templateHash(rd.spec.resource);
  const replanned = [...raced].map((namespace) => ({ action: planNamespace(rd, namespace, existing.get(namespace), now, hash), kind }));
  const second = await parts.applyAll(await gatedWrites(parts.deps.authors?.targets, rd, replanned, (namespace) => existing.get(namespace)), signal, failures);
  return [...outcomes.filter((o) => !(o.action.type === 'create' && raced.has(o.action.namespace))), ...second];
}

/** The namespaces of a pass within some: those of them the cache holds. */
function namespacesWithin(within: ReadonlySet<string>, caches: ReconcilerDeps['caches']): NamespaceInfo[] {
  return [...within].flatMap((name) => caches.namespaces.get(name)?.info ?? []);
}

/** Every namespace a full pass plans: those that exist and it may target or holds copies in, and listed ones missing. */
function everyNamespace(rd: ResolvedDistribution, deps: ReconcilerDeps): string[] {
  const { caches, forbiddenNamespaces } = deps;
  const names = targetNamespaces(rd, caches, forbiddenNamespaces).map((ns) => ns.name);
  for (const name of listedTargets(rd.spec.targets, forbiddenFor(rd, forbiddenNamespaces))) if (caches.namespaces.get(name) === undefined) names.push(name);
  return names;
}

/** What a pass goes over: every target (`within` undefined), the namespaces noted, or the next slice of a sliced full pass. */
interface Extent {
  within?: ReadonlySet<string>;
  sliced?: SlicedPass;
}

function nextSlice(sliced: SlicedPass, size: number): Set<string> {
  const slice = sliced.namespaces.slice(sliced.done, sliced.done + size);
  sliced.done += slice.length;
  return new Set(slice);
}

function extentOf(parts: Parts, rd: ResolvedDistribution, hash: string, scope: PassScope): Extent {
  const { scopes } = parts.deps;
  const name = rd.metadata.name;
  // A full pass; a sliced one going on ends with it (see instrumented).
  if (!parts.lastPasses.holds(rd, hash)) return {};
  let sliced = scopes.slicedPass(name);
  if (scope === 'all') {
    const namespaces = everyNamespace(rd, parts.deps);
    if (namespaces.length <= parts.sliceSize) return {};
    sliced = scopes.beginSliced(name, namespaces);
  }
  const within = scope !== 'all' && scope.size > 0 ? scope : sliced === undefined ? undefined : nextSlice(sliced, parts.sliceSize);
  for (const namespace of within ?? []) sliced?.visited.add(namespace);
  return { within, sliced };
}

/**
 * The plan's slices as the applier takes them, then the strays. The catalog holds the distribution
 * (an ObjectSync's finalizer) before the first slice that writes a copy goes out.
 */
async function* heldWhileWriting(
  parts: Parts,
  pass: { rd: ResolvedDistribution; kind: KindKey; existing: ReadonlyMap<string, Resource>; confirmation: Confirmation },
  slices: AsyncIterable<Action[]> | Iterable<Action[]>,
  strays: Planned[],
): AsyncGenerator<Planned[]> {
  const { rd, kind, existing, confirmation } = pass;
  let held = false;
  for await (const actions of slices) {
    if (!held && actions.some(writesCopy)) {
      await confirmation.check();
      await parts.deps.catalog.hold(rd);
      held = true;
    }
    // A first copy in a namespace is written only if the recorded author may still create it there.
    yield await gatedWrites(parts.deps.authors?.targets, rd, actions.map((action) => ({ action, kind })), (namespace) => existing.get(namespace));
  }
  if (strays.length > 0) {
    await confirmation.check();
    yield strays;
  }
}

async function reconcileDistribution(parts: Parts, rd: ResolvedDistribution, signal: AbortSignal, scope: PassScope, confirmation: Confirmation): Promise<ProcessResult> {
  const { caches, clock, forbiddenNamespaces } = parts.deps;
  const kind = kindKeyOf(rd.spec.resource.apiVersion, rd.spec.resource.kind);
  await parts.reporter.checkInjection(rd);
  // Its copies are not known yet (the kind's watch has just started): planning now would read every namespace.
  if (!caches.copies.synced(kind)) return 'retry';
  const hash = templateHash(rd.spec.resource);
  // A few namespaces changed since a pass that still holds, or a slice of a full pass: plan those alone.
  const { within, sliced } = extentOf(parts, rd, hash, scope);
  const namespaces = within === undefined ? targetNamespaces(rd, caches, forbiddenNamespaces) : namespacesWithin(within, caches);
  const { existing, failures, unread, ownCopies } = await parts.reader.read(rd, kind, namespaces, within);
  const compared = (await parts.deps.storedForms?.attach(rd, hash, namespaces)) ?? rd;
  const now = clock();
  const input = { distribution: compared, namespaces, existing, forbidden: forbiddenNamespaces, now };
  // A full pass is planned as many namespaces at a time as it has writes in flight, each slice
  // written while the next is planned: writing starts after a few renders, not after the whole plan.
  const slices = within === undefined ? planSlices(input, parts.parallelism) : [planDistribution({ ...input, within })];
  // Strays (copies under an earlier template's kind or name) come from a spec change, which brings a full pass.
  const strays = within === undefined ? parts.removal.strayDeletes(rd, ownCopies) : [];
  const applied = await parts.applyAsPlanned(heldWhileWriting(parts, { rd, kind, existing, confirmation }, slices, strays), signal, failures);
  const outcomes = await createThenRead(parts, { rd, kind, unread, now, signal }, applied);
  // No status from a pass cut short: the new leader writes it from a complete one.
  if (signal.aborted) return 'retry';
  await reportWrites(parts, rd, outcomes);
  return finishPass(parts, { rd, hash, within, sliced }, outcomes);
}

/**
 * What the pass wrote, in one line (each write is logged at debug only). syncPolicy CreateOnce: each
 * copy left to a namespace no longer targeted is said once, when it is released (it is then no
 * copy of ours).
 */
async function reportWrites(parts: Parts, rd: ResourceDistribution, outcomes: readonly WriteOutcome[]): Promise<void> {
  const written = summarizeWrites(outcomes);
  if (written !== undefined) parts.deps.log.info({ name: rd.metadata.name, ...written }, 'copies written');
  for (const { action, ok } of outcomes) {
    if (!ok || action.type !== 'release') continue;
    const { kind, metadata } = action.object;
    const message = `${kind} ${action.namespace}/${metadata.name ?? ''} released rather than deleted, as its namespace may have changed it: left in place without the distribution's markers and owner reference, it is now the namespace's own object`;
    await parts.deps.events.normal(rd, 'CopyReleased', message);
  }
}

/** What a pass found is recorded, and the status written from every target's (a slice that found all as before changes none). */
async function finishPass(parts: Parts, pass: Extent & { rd: ResolvedDistribution; hash: string }, outcomes: readonly WriteOutcome[]): Promise<ProcessResult> {
  const { rd, hash, within, sliced } = pass;
  const changed = parts.lastPasses.record(rd, hash, outcomes, within);
  const ended = sliced !== undefined && sliced.done >= sliced.namespaces.length;
  if (ended) parts.lastPasses.retain(rd.metadata.name, sliced.visited);
  // A lost race is no failure to report: the status waits for the retry, which reads afresh.
  if (outcomes.some((outcome) => outcome.stale)) return 'retry';
  // A pass within some namespaces that found them as before gives the status the last pass gave
  // (and wrote): computing it again would go over every target for nothing.
  if (changed || ended) {
    const everyTarget = parts.lastPasses.found(rd.metadata.name);
    parts.copyStates.record(rd.metadata.name, everyTarget);
    await parts.reporter.writeStatus(rd, everyTarget, rd.spec.source ? { found: true } : undefined);
  }
  // A write a policy refused is tried again a few times: the policy may be lifted meanwhile.
  const policyRetry = parts.policyRetries.retry(rd.metadata.name, outcomes);
  if (needsRetry(outcomes) || policyRetry) return 'retry';
  return sliced !== undefined && !ended ? 'continue' : 'done';
}

/** Why nothing of the source is written: it is missing, or its recorded author may not read it (the message says so). */
type Held = { missing: true; ownCopy: boolean } | { missing: false; message: string };

/**
 * The source is gone, or its author may not read it. A ResourceDistribution's copies stay as they
 * are where it targets (nothing is written there) and the status says so, counting every target
 * as not in sync; copies where it no longer targets are deleted, as with a source; those of a
 * namespaced origin (an ObjectSync) are all deleted when the source is. A new source (or a new
 * version of it) brings its watch event.
 */
async function reportHeldSource(parts: Parts, rd: ResourceDistribution, ref: SourceRef, held: Held, signal: AbortSignal, confirmation: Confirmation): Promise<ProcessResult> {
  await confirmation.check();
  const namespaces = targetNamespaces(rd, parts.deps.caches, parts.deps.forbiddenNamespaces);
  const { targeted, missing } = await inTurns(targetsInSteps(rd.spec.targets, namespaces, forbiddenFor(rd, parts.deps.forbiddenNamespaces)));
  const { kind, namespace, name } = ref;
  if (held.missing && rd.origin !== undefined) {
    const { result, outcomes } = await parts.removal.removeCopies(rd, signal);
    if (result === 'retry') return result;
    const message = `source ${kind} ${namespace}/${name} not found: its copies are deleted`;
    await parts.reporter.writeStatus(rd, { outcomes }, { found: false, desired: targeted.length + missing.length, message });
    return 'done';
  }
  // Those in namespaces no longer targeted go as always: a delete needs no source.
  const outcomes = await parts.applyAll(parts.removal.untargetedDeletes(rd, new Set([...targeted, ...missing])), signal);
  if (signal.aborted) return 'retry';
  await reportWrites(parts, rd, outcomes);
  // Listed namespaces that do not exist are reported whether or not the source does.
  const absent: Outcome[] = missing.map((ns) => ({ action: { type: 'namespace-missing', namespace: ns }, ok: true }));
  const desired = targeted.length + missing.length;
  const source = held.missing
    ? { found: false as const, desired, message: held.ownCopy ? ownCopyMessage(ref, ownCopyFate(ref, outcomes)) : missingSourceMessage(rd, ref) }
    : { found: true as const, denied: { desired, message: held.message } };
  await parts.reporter.writeStatus(rd, { outcomes: [...absent, ...outcomes] }, source);
  return needsRetry(outcomes) ? 'retry' : 'done';
}

/**
 * spec.source moved into a namespace holding this distribution's copy: there is no source, only
 * that copy, which is deleted (the source's namespace is never a target). Said as it happened.
 */
function ownCopyMessage(ref: SourceRef, fate: string): string {
  const { kind, namespace, name } = ref;
  return `source ${kind} ${namespace}/${name} not found: what stood there was this distribution's copy (spec.source moved into a target namespace), which ${fate} as the source's namespace is never a target; the copies in the target namespaces are kept as they are`;
}

function ownCopyFate(ref: SourceRef, outcomes: readonly WriteOutcome[]): string {
  const removal = outcomes.find((outcome) => outcome.action.type === 'delete' && outcome.action.namespace === ref.namespace);
  return removal === undefined ? 'is to be deleted' : removal.ok ? 'was deleted' : 'could not be deleted (see DeleteResourceFailed)';
}

/** While the source stays missing, the pass after that deletion keeps saying what happened to the copy there. */
function missingSourceMessage(rd: ResourceDistribution, ref: SourceRef): string {
  const deleted = ownCopyMessage(ref, 'was deleted');
  const previous = rd.status?.conditions.find((condition) => condition.type === 'SourceNotFound')?.message;
  return previous === deleted ? deleted : `source ${ref.kind} ${ref.namespace}/${ref.name} not found: the copies are kept as they are`;
}

/**
 * What the distribution would copy is never copied (a source that is a Secret of a forbidden type,
 * a template stored while admission was off): the status says so, with an Event, while it stays
 * so, counting every target as not in sync. Copies stay as they are where it targets; those where
 * it no longer targets go, as with a missing source. A change of the distribution or of its
 * source brings the next pass.
 */
async function reportUndistributable(parts: Parts, rd: ResourceDistribution, message: string, signal: AbortSignal, confirmation: Confirmation): Promise<ProcessResult> {
  await confirmation.check();
  const { caches, forbiddenNamespaces, log } = parts.deps;
  log.warn({ name: rd.metadata.name, reason: message }, 'nothing distributable');
  const source = rd.spec?.source === undefined ? undefined : { found: true as const };
  if (typeof rd.spec?.targets !== 'object') {
    await parts.reporter.writeStatus(rd, { outcomes: [] }, source, { desired: 0, message });
    return 'done';
  }
  const namespaces = targetNamespaces(rd, caches, forbiddenNamespaces);
  const { targeted, missing } = await inTurns(targetsInSteps(rd.spec.targets, namespaces, forbiddenFor(rd, forbiddenNamespaces)));
  const outcomes = await parts.applyAll(parts.removal.untargetedDeletes(rd, new Set([...targeted, ...missing])), signal);
  if (signal.aborted) return 'retry';
  await reportWrites(parts, rd, outcomes);
  const absent: Outcome[] = missing.map((ns) => ({ action: { type: 'namespace-missing', namespace: ns }, ok: true }));
  await parts.reporter.writeStatus(rd, { outcomes: [...absent, ...outcomes] }, source, { desired: targeted.length + missing.length, message });
  return needsRetry(outcomes) ? 'retry' : 'done';
}

/** Why the author recorded on `rd` may not have its source copied now; undefined when nothing stands in the way. */
async function authorDenial(parts: Parts, rd: ResourceDistribution, source: Resource | undefined): Promise<string | undefined> {
  const gate = parts.deps.authors;
  if (gate === undefined || source === undefined) return undefined;
  const verdict = await gate.check(rd, source);
  return verdict.allowed ? undefined : verdict.message;
}

/** The distribution is not in the cache: drop what was remembered of it, and remove its orphans. */
function forgetAndRemoveOrphans(parts: Parts, name: string, signal: AbortSignal): Promise<ProcessResult> {
  parts.copyStates.forget(name);
  parts.lastPasses.forget(name);
  parts.policyRetries.forget(name);
  parts.confirmations.forget(name);
  parts.reader.forget(name);
  parts.deps.catalog.forget(name);
  parts.deps.authors?.forget(name);
  return parts.removal.removeOrphans(name, signal);
}

async function reconcileOnce(parts: Parts, name: string, signal: AbortSignal, scope: PassScope): Promise<ProcessResult> {
  const seen = parts.deps.catalog.get(name);
  // 10,000 patterns take milliseconds to index: in turns of the event loop, once per distribution object.
  if (seen) await inTurns(patternIndexSteps(seen.spec.targets));
  // Read again after those turns: the distribution may have changed meanwhile.
  const rd = parts.deps.catalog.get(name);
  if (!rd) return forgetAndRemoveOrphans(parts, name, signal);
  // Being deleted: the garbage collector removes the copies of what owns them; those of a
  // namespaced origin are ours to remove before it goes, unless it was deleted to keep them.
  if (rd.metadata.deletionTimestamp) {
    if (rd.origin === undefined) return 'done';
    return rd.origin.keepsCopies ? parts.removal.orphanCopies(rd, signal) : (await parts.removal.removeCopies(rd, signal)).result;
  }
  // Read at the same moment: the author is asked about the very source version the copies are made of.
  const source = sourceObject(rd, parts.deps.caches.sources);
  // The first pass after taking the lead writes only from what the API server holds now (see term-confirmations).
  const confirmation = parts.confirmations.begin(rd, source, signal);
  const resolved = resolveDistribution(rd, parts.deps.caches);
  switch (resolved.state) {
    case 'ready': {
      const denied = await authorDenial(parts, rd, source);
      if (denied === undefined) return reconcileDistribution(parts, resolved.rd, signal, scope, confirmation);
      parts.lastPasses.forget(name);
      return reportHeldSource(parts, rd, rd.spec.source as SourceRef, { missing: false, message: denied }, signal, confirmation);
    }
    case 'pending':
      return 'retry';
    case 'source-missing':
      parts.lastPasses.forget(name);
      return reportHeldSource(parts, rd, resolved.ref, { missing: true, ownCopy: resolved.ownCopy === true }, signal, confirmation);
    case 'invalid':
      parts.lastPasses.forget(name);
      return reportUndistributable(parts, rd, resolved.message, signal, confirmation);
  }
}

/** Times and counts every pass; a terminal error ends the retries until the distribution changes. */
async function instrumented(parts: Parts, name: string, signal: AbortSignal): Promise<ProcessResult> {
  const { metrics, log, scopes } = parts.deps;
  const stopTimer = metrics.reconcileDuration.startTimer();
  try {
    const result = await reconcileOnce(parts, name, signal, scopes.take(name));
    if (result === 'retry') scopes.widen(name);
    // A sliced pass goes on only while its turns say so (the distribution may be gone, or its source).
    else if (result === 'done') scopes.endSliced(name);
    const label = result === 'done' ? 'success' : result === 'continue' ? 'slice' : 'requeue';
    stopTimer({ result: label });
    metrics.reconcileTotal.inc({ result: label });
    return result;
  } catch (error) {
    scopes.widen(name);
    // Said when it was found (term-confirmations): the pass wrote nothing and waits for the watch.
    if (error instanceof CacheBehind) {
      stopTimer({ result: 'requeue' });
      metrics.reconcileTotal.inc({ result: 'requeue' });
      return 'retry';
    }
    stopTimer({ result: 'error' });
    metrics.reconcileTotal.inc({ result: 'error' });
    if (error instanceof TerminalError) {
      log.warn({ name, err: error.message }, 'reconcile gave up until the distribution changes');
      return 'done';
    }
    throw error;
  }
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const parts = buildParts(deps);
  return { reconcile: (name, signal = NOT_ABORTED) => instrumented(parts, name, signal) };
}
