import { forbiddenFor } from '../domain/targets.js';
import { CORE_REGISTRY, type KindRegistry } from '../domain/kinds.js';
import { ALWAYS_EXCLUDED_NAMESPACES, type ResourceDistribution } from '../domain/types.js';

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

function names(list: { list?: { name?: unknown }[] } | undefined): string[] {
  return (list?.list ?? []).map((item) => item.name).filter((name): name is string => typeof name === 'string');
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
  if (targets.allNamespaces === true || hasSelector(targets.namespaceLabelSelector)) return { group, resource, verbs, namespaces: 'all', ...read };
  const system = targets.systemByName === true ? [] : ALWAYS_EXCLUDED_NAMESPACES;
  const skipped = new Set([...names(targets.excludedNamespaces), ...system, ...forbiddenFor(distribution, forbidden)]);
  const namespaces = [...new Set(names(targets.includedNamespaces))].filter((ns) => !skipped.has(ns)).sort();
  return { group, resource, verbs, namespaces, ...read };
}
