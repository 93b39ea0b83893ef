// Which copies a pod is about to need that are not there yet: the pure half of "copies before
// pods". A copy is pending when a distribution targets the pod's namespace with a Secret or
// ConfigMap the pod references, and the object there is missing or not in sync with it (and is
// ours to write: a conflict stays a conflict, and writePolicy strict holds it back as the
// reconciler would).
import { templateHash } from './hash.js';
import { groupOf } from './kinds.js';
import { planNamespace, writesHeldBack } from './plan.js';
import type { PodReferences } from './pod-references.js';
import { forbiddenFor, isTargeted } from './targets.js';
import type { NamespaceInfo, ResolvedDistribution, Resource, ResourceDistribution } from './types.js';

const POD_KINDS: readonly string[] = ['Secret', 'ConfigMap'];

/** What a distribution will write, as far as a pod can reference it: a core Secret or ConfigMap, by name. */
function copied(rd: ResourceDistribution): { kind: string; name: string } | undefined {
  const { source, resource, rename } = rd.spec ?? {};
  const named = source ?? resource;
  if (named === undefined || groupOf(named.apiVersion) !== '' || !POD_KINDS.includes(named.kind)) return undefined;
  const name = rename ?? source?.name ?? resource?.metadata?.name;
  return typeof name === 'string' ? { kind: named.kind, name } : undefined;
}

/**
 * The key of what a distribution copies as a pod can name it (`Secret/<name>`, `ConfigMap/<name>`),
 * undefined when no pod can: distributions are indexed by it, so that a pod's admission looks up
 * the few it names instead of scanning every distribution.
 */
export function podCopyKey(rd: ResourceDistribution): string | undefined {
  const copy = copied(rd);
  return copy === undefined ? undefined : `${copy.kind}/${copy.name}`;
}

/** The keys (as podCopyKey gives them) of everything a pod references. */
export function podReferenceKeys(refs: PodReferences): string[] {
  return [...[...refs.secrets].map((name) => `Secret/${name}`), ...[...refs.configMaps].map((name) => `ConfigMap/${name}`)];
}

/** The distributions whose copy a pod with these references would use; cheap, before anything is resolved. */
export function referencedBy(distributions: readonly ResourceDistribution[], refs: PodReferences): ResourceDistribution[] {
  if (refs.secrets.size === 0 && refs.configMaps.size === 0) return [];
  return distributions.filter((rd) => {
    const copy = copied(rd);
    if (copy === undefined || rd.metadata.deletionTimestamp !== undefined) return false;
    return (copy.kind === 'Secret' ? refs.secrets : refs.configMaps).has(copy.name);
  });
}

/** Of those (resolved), the ones targeting `namespace` whose copy there must still be written. */
export function pendingCopies(input: {
  distributions: readonly ResolvedDistribution[];
  namespace: NamespaceInfo;
  existing: (rd: ResolvedDistribution) => Resource | undefined;
  forbidden: readonly string[];
  now: Date;
}): ResolvedDistribution[] {
  const { namespace, now } = input;
  return input.distributions.filter((rd) => {
    if (writesHeldBack(rd) || !isTargeted(rd.spec.targets, namespace, forbiddenFor(rd, input.forbidden))) return false;
    const existing = input.existing(rd);
    if (existing !== undefined && settled.get(rd)?.has(existing) === true) return false;
    const type = planNamespace(rd, namespace.name, existing, now, templateHash(rd.spec.resource)).type;
    const write = type === 'create' || type === 'update' || type === 'recreate';
    if (!write && existing !== undefined) remember(rd, existing);
    return write;
  });
}

/**
 * Copies found needing no write, per resolved distribution. Cached objects are replaced, never
 * changed in place, so the same pair of objects always plans the same: every pod of a namespace
 * whose copies are in place is answered without planning again.
 */
const settled = new WeakMap<ResolvedDistribution, WeakSet<Resource>>();

function remember(rd: ResolvedDistribution, existing: Resource): void {
  let copies = settled.get(rd);
  if (copies === undefined) settled.set(rd, (copies = new WeakSet()));
  copies.add(existing);
}
