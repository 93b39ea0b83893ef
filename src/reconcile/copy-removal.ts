// The reconciler's deletes beyond the plan: copies of a distribution that is gone (orphans), all
// copies of one whose namespaced origin is being deleted, strays of a template that changed kind
// or name, and copies no longer targeted while the source is missing (there is no plan then).
// Deletion is by uid only: a copy merely naming a distribution is not ours to delete.
import { classifyExisting, controllerOf, isControlledBy } from '../domain/copy.js';
import { createsOnce, releasedCopy } from '../domain/create-once.js';
import { kindKeyOf } from '../domain/kinds.js';
import { untiedCopy } from '../domain/object-sync.js';
import { isDistributionRef } from '../domain/ownership.js';
import { ANNOTATION_FROM, ANNOTATION_OBJECT_SYNC, type ResolvedDistribution, type Resource, type ResourceDistribution } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Caches } from '../k8s/caches.js';
import { deleteOf, needsRetry, type ApplyAll, type Planned } from './action-applier.js';
import type { WriteOutcome } from './copy-writer.js';
import type { DistributionCatalog } from './distribution-catalog.js';
import type { ProcessResult } from './queue.js';

export interface CopyRemovalDeps {
  caches: Pick<Caches, 'copies'>;
  catalog: Pick<DistributionCatalog, 'exists' | 'release'>;
  applyAll: ApplyAll;
  log: Logger;
}

export interface CopyRemoval {
  /** The distribution is not in the cache: delete the copies still tied to it, once a live read confirms it is gone. */
  removeOrphans(name: string, signal: AbortSignal): Promise<ProcessResult>;
  /** Its origin was deleted with propagation Orphan: unties every copy it controls (they stay), then lets the origin go. */
  orphanCopies(rd: ResourceDistribution, signal: AbortSignal): Promise<ProcessResult>;
  /** Deletes every copy the distribution controls, then lets its origin go once none is left. */
  removeCopies(rd: ResourceDistribution, signal: AbortSignal): Promise<{ result: ProcessResult; outcomes: WriteOutcome[] }>;
  /**
   * Deletes of copies of another kind or name than the template's that this very distribution
   * controls; `ownCopies`: how many of its cached copies are of the template's kind and name.
   */
  strayDeletes(rd: ResolvedDistribution, ownCopies: number): Planned[];
  /** Deletes of copies this very distribution controls outside `keep` (no template needed: its source may be gone). */
  untargetedDeletes(rd: ResourceDistribution, keep: ReadonlySet<string>): Planned[];
}

const plannedDelete = (copy: Resource): Planned => ({ action: deleteOf(copy), kind: kindKeyOf(copy.apiVersion, copy.kind) });

/**
 * A copy the distribution no longer wants (untargeted while its source is missing, or under an
 * earlier template's kind or name): deleted, or under syncPolicy CreateOnce released, as there is
 * no current template here to tell whether the namespace changed it (see create-once.ts).
 */
function plannedLeave(rd: ResourceDistribution): (copy: Resource) => Planned {
  if (!createsOnce(rd)) return plannedDelete;
  return (copy) => ({ action: { type: 'release', namespace: copy.metadata.namespace ?? '', object: releasedCopy(rd, copy) }, kind: kindKeyOf(copy.apiVersion, copy.kind) });
}

/**
 * Only copies still tied to the distribution: one without a controller reference (or ObjectSync
 * annotation) was orphaned on purpose (deleted with propagation Orphan: the garbage collector
 * removed the reference).
 */
function isTiedTo(name: string, copy: Resource): boolean {
  const controller = controllerOf(copy);
  const tied = controller === undefined ? copy.metadata.annotations?.[ANNOTATION_OBJECT_SYNC] !== undefined : isDistributionRef(controller, name);
  return copy.metadata.annotations?.[ANNOTATION_FROM] === name && tied;
}

export function createCopyRemoval(deps: CopyRemovalDeps): CopyRemoval {
  const { caches, catalog, applyAll, log } = deps;
  return {
    /**
     * The garbage collector removes a deleted distribution's copies, and so do we where it has not
     * (copies orphaned while no controller ran). The distribution cache may lag behind the copy
     * cache (separate watches; another replica's generator writing for a distribution just
     * created), so one live read confirms it is gone before anything is deleted.
     */
    async removeOrphans(name, signal) {
      const orphans = caches.copies.byDistribution(name).filter((copy) => isTiedTo(name, copy));
      if (orphans.length === 0) return 'done';
      if (await catalog.exists(name, orphans)) {
        log.debug({ name }, 'distribution not cached yet; its copies are no orphans');
        return 'retry';
      }
      log.info({ name, orphans: orphans.length }, 'removing copies of a deleted distribution');
      const outcomes = await applyAll(orphans.map(plannedDelete), signal);
      return signal.aborted || needsRetry(outcomes) ? 'retry' : 'done';
    },
    async orphanCopies(rd, signal) {
      const ours = caches.copies.byDistribution(rd.metadata.name).filter((copy) => isControlledBy(rd, copy));
      const untie = (copy: Resource): Planned => ({
        action: { type: 'update', namespace: copy.metadata.namespace ?? '', object: untiedCopy(copy) },
        kind: kindKeyOf(copy.apiVersion, copy.kind),
      });
      if (ours.length > 0) log.info({ name: rd.metadata.name, copies: ours.length }, 'keeping the copies of an ObjectSync deleted with propagation Orphan');
      const outcomes = await applyAll(ours.map(untie), signal);
      if (signal.aborted || needsRetry(outcomes)) return 'retry';
      await catalog.release(rd);
      return 'done';
    },
    /** Its (namespaced) origin is being deleted, or its source is gone and its copies go with it. */
    async removeCopies(rd, signal) {
      const ours = caches.copies.byDistribution(rd.metadata.name).filter((copy) => isControlledBy(rd, copy));
      const outcomes = await applyAll(ours.map(plannedDelete), signal);
      if (signal.aborted || needsRetry(outcomes)) return { result: 'retry', outcomes };
      if (rd.metadata.deletionTimestamp !== undefined) await catalog.release(rd);
      return { result: 'done', outcomes };
    },
    /** A template changed behind admission's back; a copy merely naming it was orphaned or made by another distribution of the same name. */
    strayDeletes(rd, ownCopies) {
      if (caches.copies.countOf(rd.metadata.name) === ownCopies) return [];
      const { apiVersion, kind, metadata } = rd.spec.resource;
      const key = kindKeyOf(apiVersion, kind);
      const stray = (copy: Resource): boolean => kindKeyOf(copy.apiVersion, copy.kind) !== key || copy.metadata.name !== metadata.name;
      return caches.copies
        .byDistribution(rd.metadata.name)
        .filter((copy) => stray(copy) && classifyExisting(rd, copy).kind === 'ours' && isControlledBy(rd, copy))
        .map(plannedLeave(rd));
    },
    untargetedDeletes(rd, keep) {
      return caches.copies
        .byDistribution(rd.metadata.name)
        .filter((copy) => !keep.has(copy.metadata.namespace ?? '') && isControlledBy(rd, copy))
        .map(plannedLeave(rd));
    },
  };
}
