// The plan of a distribution being admitted, made from the caches alone (no API request): the
// reconciler's own planner over the namespaces and the copies of ours the caches hold, deciding
// without rendering copies, counted per type of action.
import { kindKeyOf } from '../domain/kinds.js';
import { previewTally } from '../domain/plan.js';
import type { PlanTally } from '../domain/plan-preview.js';
import type { Clock } from '../domain/clock.js';
import type { Resource, ResourceDistribution } from '../domain/types.js';
import type { Caches } from '../k8s/caches.js';
import { resolveDistribution } from './distributable.js';
import { targetNamespaces } from './target-namespaces.js';

export type PlanPreviewer = (rd: ResourceDistribution) => PlanTally | undefined;

/** Undefined while it cannot be told from the caches: not synced, the kind not watched yet, or the source not read yet. */
export function createPlanPreviewer(deps: { caches: Caches; clock: Clock; forbiddenNamespaces: readonly string[] }): PlanPreviewer {
  const { caches } = deps;
  return (rd) => {
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
    return previewTally({ distribution: resolved, namespaces, existing, forbidden: deps.forbiddenNamespaces, now: deps.clock() });
  };
}
