// The plan of a distribution being admitted, made from the caches alone (no API request): the
// reconciler's own planner over the namespaces and the copies of ours the caches hold, deciding
// without rendering copies, counted per type of action.
import { kindKeyOf } from '../domain/kinds.js';
import { knownConflicts, previewTallySteps } from '../domain/plan.js';
import type { Steps } from '../domain/steps.js';
import type { PlanTally } from '../domain/plan-preview.js';
import type { Clock } from '../domain/clock.js';
import type { ResolvedDistribution, Resource, ResourceDistribution } from '../domain/types.js';
import type { Caches } from '../k8s/caches.js';
import { resolveDistribution } from './distributable.js';
import { targetNamespaces } from './target-namespaces.js';

/**
 * The conflicts the stored distribution's status reports, while they concern the copies this one
 * writes (same kind and name): a conflict over another name says nothing of this one's.
 */
function conflictsOverTheSameCopies(rd: ResourceDistribution, resolved: ResolvedDistribution, caches: Caches): ReadonlySet<string> {
  const stored = caches.distributions.get(rd.metadata.name) ?? rd;
  const was = stored === rd ? { state: 'ready' as const, rd: resolved } : resolveDistribution(stored, caches);
  if (was.state !== 'ready') return new Set();
  const [before, now] = [was.rd.spec.resource, resolved.spec.resource];
  const same = kindKeyOf(before.apiVersion, before.kind) === kindKeyOf(now.apiVersion, now.kind) && before.metadata.name === now.metadata.name;
  return same ? knownConflicts(stored.status) : new Set();
}

/** In steps: over 10,000 namespaces the plan takes milliseconds, which admission spreads over turns of the event loop. */
export type PlanPreviewer = (rd: ResourceDistribution) => Steps<PlanTally | undefined>;

/** Undefined while it cannot be told from the caches: not synced, the kind not watched yet, or the source not read yet. */
export function createPlanPreviewer(deps: { caches: Caches; clock: Clock; forbiddenNamespaces: readonly string[] }): PlanPreviewer {
  const { caches } = deps;
  return function* (rd) {
    if (!caches.synced()) return undefined;
    const resolution = resolveDistribution(rd, caches);
    if (resolution.state !== 'ready') return undefined;
    const resolved = resolution.rd;
    const kind = kindKeyOf(resolved.spec.resource.apiVersion, resolved.spec.resource.kind);
    // A kind no distribution copies yet is not watched: no copy of ours can be there but orphans.
    if (caches.copies.followed().includes(kind) && !caches.copies.synced(kind)) return undefined;
    const name = resolved.spec.resource.metadata.name;
    const existing = new Map<string, Resource>();
    for (const copy of caches.copies.byDistribution(rd.metadata.name)) {
      const sameKind = kindKeyOf(copy.apiVersion, copy.kind) === kind && copy.metadata.name === name;
      if (sameKind && copy.metadata.namespace !== undefined) existing.set(copy.metadata.namespace, copy);
    }
    const namespaces = targetNamespaces(resolved, caches, deps.forbiddenNamespaces);
    const conflicts = conflictsOverTheSameCopies(rd, resolved, caches);
    return yield* previewTallySteps({ distribution: resolved, namespaces, existing, forbidden: deps.forbiddenNamespaces, now: deps.clock(), knownConflicts: conflicts });
  };
}
