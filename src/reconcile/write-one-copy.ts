// One distribution's copy in one namespace, written now: what the namespace generator and the pod
// materializer do, outside the reconciler's passes. A lost race (the leader's reconcile, reacting to
// the same new namespace, usually writes first) is no failure: read what the other writer left and
// plan again, which normally finds the copy in sync and writes nothing.
import type { Clock } from '../domain/clock.js';
import { kindKeyOf } from '../domain/kinds.js';
import { planNamespace } from '../domain/plan.js';
import type { NamespaceInfo, ResolvedDistribution, Resource } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { describeApiError } from '../k8s/errors.js';
import type { Planned } from './action-applier.js';
import { gatedWrites, type TargetCheck } from './author-targets.js';
import type { CopyWriter } from './copy-writer.js';

/** Writes that may lose a race in a row before the copy is left to the reconciler. */
const RACE_ATTEMPTS = 3;

/**
 * `written`: a create, update or recreate went through; `unchanged`: nothing to write (in sync, a
 * conflict left alone); `denied`: the recorded author may not write the first copy there (the
 * reconciler reports it).
 */
export type OneCopyResult = 'written' | 'unchanged' | 'lost' | 'failed' | 'denied';

export interface OneCopyDeps {
  api: Pick<ClusterApi, 'getCopy'>;
  caches: Pick<Caches, 'copies'>;
  writer: CopyWriter;
  clock: Clock;
  log: Logger;
  /** Whether the recorded author may write a first copy (none: every copy is written). */
  authors?: { targets: TargetCheck };
}

const WRITES = new Set(['create', 'update', 'recreate']);

/** Why a first copy is not written: its recorded author may not (or could not be asked); undefined when it may be. */
async function refusal(deps: OneCopyDeps, rd: ResolvedDistribution, planned: Planned, existing: Resource | undefined): Promise<OneCopyResult | undefined> {
  const [gated] = await gatedWrites(deps.authors?.targets, rd, [planned], () => existing);
  const refused = gated?.refused;
  if (refused === undefined || refused.ok) return undefined;
  deps.log.info({ name: rd.metadata.name, ns: planned.action.namespace, err: refused.message }, 'copy not written: left to the reconciler');
  return refused.denied ? 'denied' : 'failed';
}

export async function writeOneCopy(deps: OneCopyDeps, rd: ResolvedDistribution, ns: NamespaceInfo, stopped: () => boolean = () => false): Promise<OneCopyResult> {
  const kind = kindKeyOf(rd.spec.resource.apiVersion, rd.spec.resource.kind);
  const ref = { kind, namespace: ns.name, name: rd.spec.resource.metadata.name ?? '' };
  const context = { name: rd.metadata.name, ns: ns.name };
  try {
    // No GET first: a namespace that has just appeared holds no object of that name unless
    // someone raced us, and then the create answers AlreadyExists and the loop below reads it.
    let existing = deps.caches.copies.get(ref);
    for (let attempt = 1; ; attempt++) {
      const action = planNamespace(rd, ns.name, existing, deps.clock());
      const refused = await refusal(deps, rd, { action, kind }, existing);
      if (refused !== undefined) return refused;
      const outcome = await deps.writer.apply(action, kind);
      if (outcome.ok) return WRITES.has(action.type) ? 'written' : 'unchanged';
      if (!outcome.stale) {
        deps.log.warn({ ...context, verb: outcome.verb, err: outcome.message }, 'copy write failed');
        return 'failed';
      }
      if (attempt === RACE_ATTEMPTS || stopped()) {
        deps.log.debug({ ...context, attempt }, 'copy write lost its races; the reconciler settles the copy');
        return 'lost';
      }
      // Not the cache: it may not have seen the other writer's object yet.
      existing = await deps.api.getCopy(ref);
    }
  } catch (error) {
    deps.log.warn({ ...context, err: describeApiError(error).message }, 'copy write failed');
    return 'failed';
  }
}
