import { forbiddenFor } from '../domain/targets.js';
import { ALWAYS_EXCLUDED_NAMESPACES, KIND_PLURALS, type DistributedResource, type ResourceDistribution } from '../domain/types.js';

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
  resource: DistributedResource;
  verbs: readonly string[];
  namespaces: readonly string[] | 'all';
  /** A distribution copying a source: the author must be allowed to read it. */
  source?: { resource: DistributedResource; namespace: string; name: string };
}

function pluralOf(kind: string | undefined): DistributedResource {
  return kind === 'Secret' ? KIND_PLURALS.Secret : KIND_PLURALS.ConfigMap;
}

function names(list: { list?: { name?: unknown }[] } | undefined): string[] {
  return (list?.list ?? []).map((item) => item.name).filter((name): name is string => typeof name === 'string');
}

function hasSelector(selector: ResourceDistribution['spec']['targets']['namespaceLabelSelector']): boolean {
  return Object.keys(selector?.matchLabels ?? {}).length > 0 || (selector?.matchExpressions ?? []).length > 0;
}

/** Pure: the access a valid distribution requires of its author. */
export function requiredAccess(distribution: ResourceDistribution, forbidden: readonly string[] = []): RequiredAccess {
  const { source } = distribution.spec;
  const resource = pluralOf(source?.kind ?? distribution.spec.resource?.kind);
  const verbs = distribution.spec.writePolicy === 'overwrite' ? OVERWRITE_VERBS : WRITE_VERBS;
  const read = source === undefined ? {} : { source: { resource, namespace: source.namespace, name: source.name } };
  const targets = distribution.spec.targets;
  if (targets.allNamespaces === true || hasSelector(targets.namespaceLabelSelector)) return { resource, verbs, namespaces: 'all', ...read };
  const skipped = new Set([...names(targets.excludedNamespaces), ...ALWAYS_EXCLUDED_NAMESPACES, ...forbiddenFor(distribution, forbidden)]);
  const namespaces = [...new Set(names(targets.includedNamespaces))].filter((ns) => !skipped.has(ns)).sort();
  return { resource, verbs, namespaces, ...read };
}
