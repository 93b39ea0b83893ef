import { isDeepStrictEqual } from 'node:util';
import { forbiddenFor, hasPattern, listedTargets } from '../domain/targets.js';
import { CORE_REGISTRY, type KindRegistry } from '../domain/kinds.js';
import type { ResourceDistribution } from '../domain/types.js';

/** Verbs a user needs on the distributed kind in every namespace the distribution writes to. */
const WRITE_VERBS = ['create', 'update'] as const;
/**
 * writePolicy overwrite also deletes: it recreates a foreign object whose change an update cannot
 * make (a Secret's type, an immutable object), so the author must be allowed to delete there too.
 */
const OVERWRITE_VERBS = ['create', 'update', 'delete'] as const;

/**
 * What the author of a distribution must be allowed to do for us to write its copies on their
 * behalf: the kind's resource, and either a list of namespaces or every namespace ('all') when
 * the targets are open-ended (allNamespaces, a label selector).
 */
export interface RequiredAccess {
  /** The API group and resource of the distributed kind. */
  group: string;
  resource: string;
  verbs: readonly string[];
  namespaces: readonly string[] | 'all';
  /** A distribution copying a source: the author must be allowed to read it. */
  source?: { namespace: string; name: string };
  /**
   * A RoleBinding grants its role in every target: the author must be allowed to bind that role
   * there (what the API server asks of anyone creating the binding who does not hold the role).
   */
  bind?: { resource: 'roles' | 'clusterroles'; name: string };
  /** An update: where it stops writing, the copies there are deleted; the author must be allowed that. */
  stops?: readonly StoppedTargets[];
}

/** For a message: `create, update configmaps in 10000 namespaces` (or `cluster-wide`). */
export function describeAccess(access: RequiredAccess): string {
  const where = access.namespaces === 'all' ? 'cluster-wide' : `in ${access.namespaces.length} namespace${access.namespaces.length === 1 ? '' : 's'}`;
  return `${access.verbs.join(', ')} ${access.resource} ${where}`;
}

/** Namespaces (or every namespace: 'all') where a change deletes the copies of a kind. */
export interface StoppedTargets {
  group: string;
  resource: string;
  namespaces: readonly string[] | 'all';
  /**
   * `source-moved`: the targets are as they were, but the source moved into these namespaces; the
   * source's namespace is never a target, so the copy there is deleted (the source takes its place).
   */
  because?: 'source-moved';
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function bindAccess(distribution: ResourceDistribution): Pick<RequiredAccess, 'bind'> {
  const resource = distribution.spec.resource;
  if (resource?.kind !== 'RoleBinding' || !resource.apiVersion.startsWith(`${RBAC_GROUP}/`)) return {};
  const roleRef = resource.roleRef as { kind?: unknown; name?: unknown } | undefined;
  if (typeof roleRef?.name !== 'string') return {};
  return { bind: { resource: roleRef.kind === 'ClusterRole' ? 'clusterroles' : 'roles', name: roleRef.name } };
}

function sourceAccess(distribution: ResourceDistribution): Pick<RequiredAccess, 'source'> {
  const { source } = distribution.spec;
  return source === undefined ? {} : { source: { namespace: source.namespace, name: source.name } };
}

function hasSelector(selector: ResourceDistribution['spec']['targets']['namespaceLabelSelector']): boolean {
  return Object.keys(selector?.matchLabels ?? {}).length > 0 || (selector?.matchExpressions ?? []).length > 0;
}

/** Admission validated the kind before asking: it is one of the registry's. */
function kindResource(distribution: ResourceDistribution, kinds: KindRegistry): { group: string; resource: string } {
  const named = distribution.spec.source ?? distribution.spec.resource;
  const kind = kinds.find(named?.apiVersion, named?.kind);
  return { group: kind?.group ?? '', resource: kind?.plural ?? '' };
}

/** Pure: the access a valid distribution requires of its author. */
export function requiredAccess(distribution: ResourceDistribution, forbidden: readonly string[] = [], kinds: KindRegistry = CORE_REGISTRY): RequiredAccess {
  const { group, resource } = kindResource(distribution, kinds);
  const verbs = distribution.spec.writePolicy === 'overwrite' ? OVERWRITE_VERBS : WRITE_VERBS;
  const read = { ...sourceAccess(distribution), ...bindAccess(distribution) };
  const targets = distribution.spec.targets;
  // A name pattern reaches namespaces created later, as a selector does.
  const openEnded = targets.allNamespaces === true || hasSelector(targets.namespaceLabelSelector) || hasPattern(targets.includedNamespaces);
  if (openEnded) return { group, resource, verbs, namespaces: 'all', ...read };
  return { group, resource, verbs, namespaces: listedTargets(targets, forbiddenFor(distribution, forbidden)), ...read };
}

/**
 * Pure: where an update of `old` into `next` (undefined: `old` is gone, as an ObjectSync's
 * destination that was removed) stops writing, so that the copies `old` made there are deleted.
 * Open-ended targets (allNamespaces, a selector) cannot be compared namespace by namespace: a change
 * of them counts as stopping everywhere, and a list replaced by open-ended targets as stopping in
 * every namespace it listed.
 */
export function stoppedTargets(
  old: ResourceDistribution,
  next: ResourceDistribution | undefined,
  forbidden: readonly string[] = [],
  kinds: KindRegistry = CORE_REGISTRY,
): StoppedTargets | undefined {
  const before = requiredAccess(old, forbidden, kinds);
  const kind = { group: before.group, resource: before.resource };
  const after = keptAccess(before, next, forbidden, kinds);
  if (after !== undefined && isDeepStrictEqual(old.spec.targets, next?.spec.targets)) return sourceMovedInto(old, next, before, forbidden);
  if (before.namespaces === 'all') return { ...kind, namespaces: 'all' };
  const kept = new Set(after === undefined || after.namespaces === 'all' ? [] : after.namespaces);
  const dropped = before.namespaces.filter((namespace) => !kept.has(namespace));
  return dropped.length === 0 ? undefined : { ...kind, namespaces: dropped };
}

/** The access of `next` when it writes the same kind as `before` did (else none of the old copies stays). */
function keptAccess(before: RequiredAccess, next: ResourceDistribution | undefined, forbidden: readonly string[], kinds: KindRegistry): RequiredAccess | undefined {
  const after = next === undefined ? undefined : requiredAccess(next, forbidden, kinds);
  return after?.group === before.group && after.resource === before.resource ? after : undefined;
}

/**
 * Pure: the same targets, but the source moved into a namespace `old` wrote to. Its copy there is
 * deleted, as the source's namespace is never a target: the author must be allowed to delete there
 * (whether open-ended targets matched that namespace depends on the cluster: it is asked anyway).
 */
function sourceMovedInto(old: ResourceDistribution, next: ResourceDistribution | undefined, before: RequiredAccess, forbidden: readonly string[]): StoppedTargets | undefined {
  if (next === undefined) return undefined;
  const excludedBefore = new Set(forbiddenFor(old, forbidden));
  const newlyExcluded = forbiddenFor(next, forbidden).filter((namespace) => !excludedBefore.has(namespace));
  const targeted = before.namespaces === 'all' ? newlyExcluded : newlyExcluded.filter((namespace) => before.namespaces.includes(namespace));
  return targeted.length === 0 ? undefined : { group: before.group, resource: before.resource, namespaces: targeted, because: 'source-moved' };
}
