// reconcile(name): level-triggered and idempotent. Reads the world from the caches, plans with the
// pure domain, applies the plan through the shared copy writer (every namespace attempted, bounded
// parallelism), and writes status only when it changed. A pass over copies that are all in sync
// makes no request at all.
import type { Clock } from '../domain/clock.js';
import { kindKeyOf, type KindKey } from '../domain/kinds.js';
import { classifyExisting, controllerOf, isControlledBy } from '../domain/copy.js';
import { isDistributionRef } from '../domain/ownership.js';
import { hashResource } from '../domain/hash.js';
import { planDistribution, planNamespace } from '../domain/plan.js';
import { computeStatus, statusEquals, type SourceStatus } from '../domain/status.js';
import { computeTargets, forbiddenFor } from '../domain/targets.js';
import {
  ANNOTATION_FROM,
  ANNOTATION_OBJECT_SYNC,
  REGISTRY_SECRET_TYPES,
  type Action,
  type Outcome,
  type ResolvedDistribution,
  type Resource,
  type ResourceDistribution,
  type SourceRef,
} from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { TerminalError, type ApiErrorInfo } from '../k8s/errors.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import { mapBounded } from '../bounded.js';
import type { CopyWriter, WriteOutcome } from './copy-writer.js';
import type { DistributionCatalog } from './distribution-catalog.js';
import { resolveDistribution } from './distributable.js';
import { CopyStates } from './copy-states.js';
import { createExistingCopiesReader } from './existing-copies.js';
import { eventsFor } from './events.js';
import type { ProcessResult } from './queue.js';

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
}

export interface Reconciler {
  /** `signal` aborted: leadership was lost; start no further write (the queue retries later). */
  reconcile(name: string, signal?: AbortSignal): Promise<ProcessResult>;
}

function getFailure(action: Action, info: ApiErrorInfo): Outcome {
  return { action, ok: false, verb: 'get', message: `${info.reason}: ${info.message}`, transient: info.transient };
}

/** An action not attempted because leadership was lost; never reported (no status is written then). */
function skipped(action: Action): WriteOutcome {
  return { action, ok: false, verb: 'get', message: 'not attempted: no longer leader', transient: true };
}

const NOT_ABORTED = new AbortController().signal;

function needsRetry(outcomes: readonly Outcome[]): boolean {
  return outcomes.some((outcome) => !outcome.ok && outcome.transient);
}

interface Planned {
  action: Action;
  kind: KindKey;
}

function deleteOf(copy: Resource): Action {
  const { namespace = '', name = '', uid = '', resourceVersion } = copy.metadata;
  return { type: 'delete', namespace, name, uid, ...(resourceVersion === undefined ? {} : { resourceVersion }) };
}

export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const { api, caches, writer, log, clock } = deps;
  const parallelism = Math.max(1, deps.applyParallelism);
  const copyStates = new CopyStates(deps.metrics.copies);
  const reader = createExistingCopiesReader({ api, caches, parallelism, forbiddenNamespaces: deps.forbiddenNamespaces });

  /**
   * Copies of another kind or name than the template's (a template changed behind admission's
   * back) that this very distribution controls (by uid): a copy merely naming it was orphaned or
   * made by another distribution of the same name, and is not ours to delete.
   */
  function strayDeletes(rd: ResolvedDistribution): Planned[] {
    const { apiVersion, kind, metadata } = rd.spec.resource;
    const key = kindKeyOf(apiVersion, kind);
    return caches.copies
      .byDistribution(rd.metadata.name)
      .filter((copy) => (kindKeyOf(copy.apiVersion, copy.kind) !== key || copy.metadata.name !== metadata.name) && classifyExisting(rd, copy).kind === 'ours' && isControlledBy(rd, copy))
      .map((copy) => ({ kind: kindKeyOf(copy.apiVersion, copy.kind), action: deleteOf(copy) }));
  }

  /** Applies every planned action (none stops the others), unless leadership is lost meanwhile. */
  function applyAll(planned: readonly Planned[], signal: AbortSignal, failures?: ReadonlyMap<string, ApiErrorInfo>): Promise<WriteOutcome[]> {
    return mapBounded(planned, parallelism, ({ action, kind }) => {
      if (signal.aborted) return Promise.resolve(skipped(action));
      const failed = action.type === 'delete' ? undefined : failures?.get(action.namespace);
      return failed ? Promise.resolve(getFailure(action, failed)) : writer.apply(action, kind);
    });
  }

  /**
   * The distribution is not in the cache: the garbage collector removes its copies, and so do we
   * where it has not (copies orphaned while no controller ran). The distribution cache may lag
   * behind the copy cache (separate watches; another replica's generator writing for a distribution
   * just created), so one live read confirms it is gone before anything is deleted.
   */
  async function removeOrphans(name: string, signal: AbortSignal): Promise<ProcessResult> {
    copyStates.forget(name);
    reader.forget(name);
    deps.catalog.forget(name);
    // Only copies still tied to it: one without a controller reference (or ObjectSync annotation)
    // was orphaned on purpose (deleted with propagation Orphan: the garbage collector removed the reference).
    const orphans = caches.copies.byDistribution(name).filter((copy) => {
      const controller = controllerOf(copy);
      const tied = controller === undefined ? copy.metadata.annotations?.[ANNOTATION_OBJECT_SYNC] !== undefined : isDistributionRef(controller, name);
      return copy.metadata.annotations?.[ANNOTATION_FROM] === name && tied;
    });
    if (orphans.length === 0) return 'done';
    if (await deps.catalog.exists(name, orphans)) {
      log.debug({ name }, 'distribution not cached yet; its copies are no orphans');
      return 'retry';
    }
    log.info({ name, orphans: orphans.length }, 'removing copies of a deleted distribution');
    const planned = orphans.map((copy) => ({ action: deleteOf(copy), kind: kindKeyOf(copy.apiVersion, copy.kind) }));
    const outcomes = await applyAll(planned, signal);
    return signal.aborted || needsRetry(outcomes) ? 'retry' : 'done';
  }

  /**
   * Deletes every copy the distribution controls: its (namespaced) origin is being deleted, or its
   * source is gone and its copies go with it. Then lets the origin go once none is left.
   */
  async function removeCopies(rd: ResourceDistribution, signal: AbortSignal): Promise<{ result: ProcessResult; outcomes: WriteOutcome[] }> {
    const ours = caches.copies.byDistribution(rd.metadata.name).filter((copy) => isControlledBy(rd, copy));
    const outcomes = await applyAll(ours.map((copy) => ({ action: deleteOf(copy), kind: kindKeyOf(copy.apiVersion, copy.kind) })), signal);
    if (signal.aborted || needsRetry(outcomes)) return { result: 'retry', outcomes };
    if (rd.metadata.deletionTimestamp !== undefined) await deps.catalog.release(rd);
    return { result: 'done', outcomes };
  }

  async function writeStatus(rd: ResourceDistribution, outcomes: readonly Outcome[], source?: SourceStatus): Promise<void> {
    const status = computeStatus({ distribution: rd, outcomes, now: clock(), ...(source ? { source } : {}) });
    if (statusEquals(rd.status, status)) return;
    if (!(await deps.catalog.writeStatus(rd, status))) return;
    log.info({ name: rd.metadata.name, desired: status.desired, succeeded: status.succeeded, failed: status.failed }, 'status written');
    for (const event of eventsFor(rd.status, status)) await deps.events.warning(rd, event.reason, event.message);
  }

  /**
   * Creates planned without a read that met an object already there: read those namespaces and
   * plan them again (a conflict, an adoption, our copy without its label), within the same pass.
   */
  async function createThenRead(
    rd: ResolvedDistribution,
    kind: KindKey,
    outcomes: WriteOutcome[],
    unread: ReadonlySet<string>,
    now: Date,
    signal: AbortSignal,
  ): Promise<WriteOutcome[]> {
    const raced = new Set(outcomes.filter((o) => o.stale && o.action.type === 'create' && unread.has(o.action.namespace)).map((o) => o.action.namespace));
    if (raced.size === 0 || signal.aborted) return outcomes;
    const { existing, failures } = await reader.reread(rd, kind, [...raced]);
    const hash = hashResource(rd.spec.resource);
    const replanned = [...raced].map((namespace) => ({ action: planNamespace(rd, namespace, existing.get(namespace), now, hash), kind }));
    const second = await applyAll(replanned, signal, failures);
    return [...outcomes.filter((o) => !(o.action.type === 'create' && raced.has(o.action.namespace))), ...second];
  }

  /** Sources whose injection could not be honoured, said once per source content (a Warning Event). */
  const injectionWarned = new Set<string>();

  /** spec.imagePullSecretInjection on a source that turns out not to be a registry Secret: pods get nothing; say so once. */
  async function checkInjection(rd: ResolvedDistribution): Promise<void> {
    const mode = rd.spec.imagePullSecretInjection;
    if (rd.spec.source === undefined || mode === undefined || mode === 'Never') return;
    const { kind, type } = rd.spec.resource;
    if (kind === 'Secret' && REGISTRY_SECRET_TYPES.includes(type ?? '')) return;
    const key = `${rd.metadata.name}/${rd.metadata.generation ?? ''}/${type ?? ''}`;
    if (injectionWarned.has(key)) return;
    injectionWarned.add(key);
    const { namespace, name } = rd.spec.source;
    await deps.events.warning(rd, 'InjectionNotPossible', `spec.imagePullSecretInjection ${mode}: source ${kind} ${namespace}/${name} is not a registry Secret (type ${type ?? 'none'}); no pod gets it named`);
  }

  async function reconcileDistribution(rd: ResolvedDistribution, signal: AbortSignal): Promise<ProcessResult> {
    const kind = kindKeyOf(rd.spec.resource.apiVersion, rd.spec.resource.kind);
    await checkInjection(rd);
    // Its copies are not known yet (the kind's watch has just started): planning now would read every namespace.
    if (!caches.copies.synced(kind)) return 'retry';
    const namespaces = caches.namespaces.list().map((ns) => ns.info);
    const { existing, failures, unread } = await reader.read(rd, kind, namespaces);
    const now = clock();
    const actions = planDistribution({ distribution: rd, namespaces, existing, forbidden: deps.forbiddenNamespaces, now });
    const planned = [...actions.map((action) => ({ action, kind })), ...strayDeletes(rd)];
    if (planned.some(({ action }) => action.type === 'create' || action.type === 'update' || action.type === 'recreate')) await deps.catalog.hold(rd);
    const outcomes = await createThenRead(rd, kind, await applyAll(planned, signal, failures), unread, now, signal);
    // No status from a pass cut short: the new leader writes it from a complete one.
    if (signal.aborted) return 'retry';
    copyStates.record(rd.metadata.name, outcomes);
    // A lost race is no failure to report: the status waits for the retry, which reads afresh.
    if (outcomes.some((outcome) => outcome.stale)) return 'retry';
    await writeStatus(rd, outcomes, rd.spec.source ? { found: true } : undefined);
    return needsRetry(outcomes) ? 'retry' : 'done';
  }

  /**
   * The source is gone: its copies stay as they are (nothing is written or deleted) and the status
   * says so, counting every target as not in sync. A new source brings its watch event.
   */
  /**
   * The source is gone. A ResourceDistribution's copies stay as they are (nothing is written or
   * deleted) and the status says so, counting every target as not in sync; those of a namespaced
   * origin (an ObjectSync) are deleted with it. A new source brings its watch event.
   */
  async function reportMissingSource(rd: ResourceDistribution, ref: SourceRef, signal: AbortSignal): Promise<ProcessResult> {
    const namespaces = caches.namespaces.list().map((ns) => ns.info);
    const { targeted, missing } = computeTargets(rd.spec.targets, namespaces, forbiddenFor(rd, deps.forbiddenNamespaces));
    const { kind, namespace, name } = ref;
    if (rd.origin !== undefined) {
      const { result, outcomes } = await removeCopies(rd, signal);
      if (result === 'retry') return result;
      const message = `source ${kind} ${namespace}/${name} not found: its copies are deleted`;
      await writeStatus(rd, outcomes, { found: false, desired: targeted.length + missing.length, message });
      return 'done';
    }
    const message = `source ${kind} ${namespace}/${name} not found: the copies are kept as they are`;
    await writeStatus(rd, [], { found: false, desired: targeted.length + missing.length, message });
    return 'done';
  }

  async function reconcileOnce(name: string, signal: AbortSignal): Promise<ProcessResult> {
    const rd = deps.catalog.get(name);
    if (!rd) return removeOrphans(name, signal);
    // Being deleted: the garbage collector removes the copies of what owns them; those of a
    // namespaced origin are ours to remove before it goes.
    if (rd.metadata.deletionTimestamp) return rd.origin === undefined ? 'done' : (await removeCopies(rd, signal)).result;
    const resolved = resolveDistribution(rd, caches);
    switch (resolved.state) {
      case 'ready':
        return reconcileDistribution(resolved.rd, signal);
      case 'pending':
        return 'retry';
      case 'source-missing':
        return reportMissingSource(rd, resolved.ref, signal);
      case 'invalid':
        throw new TerminalError(`distribution ${name} has nothing distributable (spec.resource or its source) or no spec.targets`);
    }
  }

  return {
    reconcile: async (name, signal = NOT_ABORTED) => {
      const stopTimer = deps.metrics.reconcileDuration.startTimer();
      try {
        const result = await reconcileOnce(name, signal);
        const label = result === 'done' ? 'success' : 'requeue';
        stopTimer({ result: label });
        deps.metrics.reconcileTotal.inc({ result: label });
        return result;
      } catch (error) {
        stopTimer({ result: 'error' });
        deps.metrics.reconcileTotal.inc({ result: 'error' });
        if (error instanceof TerminalError) {
          log.warn({ name, err: error.message }, 'reconcile gave up until the distribution changes');
          return 'done';
        }
        throw error;
      }
    },
  };
}
