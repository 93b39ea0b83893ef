// The one target-namespace rule (DESIGN.md "Target namespaces"), used by admission, the
// reconciler and the namespace generator alike.
import {
  ALWAYS_EXCLUDED_NAMESPACES,
  type LabelSelector,
  type LabelSelectorRequirement,
  type NamespaceInfo,
  type NamespaceNameList,
  type Targets,
} from './types.js';

/** Undefined or empty selector -> false: an empty selector matches nothing (unlike Kubernetes). */
export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!isNonEmptySelector(selector)) return false;
  const matchLabels = Object.entries(selector.matchLabels ?? {});
  const expressions = selector.matchExpressions ?? [];
  return (
    matchLabels.every(([key, value]) => Object.hasOwn(labels, key) && labels[key] === value) &&
    expressions.every((requirement) => matchesRequirement(requirement, labels))
  );
}

export function isNonEmptySelector(selector: LabelSelector | undefined): selector is LabelSelector {
  if (selector === undefined) return false;
  return Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0;
}

function matchesRequirement(requirement: LabelSelectorRequirement, labels: Record<string, string>): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return present && value !== undefined && values.includes(value);
    case 'NotIn':
      // As in Kubernetes: a namespace without the key is "not in" any set of values.
      return !present || value === undefined || !values.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    default:
      // An operator admission would have rejected: select nothing rather than guess.
      return false;
  }
}

function names(list: NamespaceNameList | undefined): string[] {
  return (list?.list ?? []).map((entry) => entry.name).filter((name): name is string => typeof name === 'string');
}

/** A namespace no rule may select: listed as excluded, always excluded, or forbidden by the operator. */
export function isExcluded(targets: Targets, name: string, forbidden: readonly string[] = []): boolean {
  return (
    ALWAYS_EXCLUDED_NAMESPACES.includes(name) || forbidden.includes(name) || names(targets.excludedNamespaces).includes(name)
  );
}

function isSelected(targets: Targets, ns: NamespaceInfo): boolean {
  return (
    targets.allNamespaces === true ||
    names(targets.includedNamespaces).includes(ns.name) ||
    matchesSelector(targets.namespaceLabelSelector, ns.labels)
  );
}

/** Whether `ns` is an existing target namespace (a terminating one never is: nothing can be created there). */
export function isTargeted(targets: Targets, ns: NamespaceInfo, forbidden: readonly string[] = []): boolean {
  return !ns.terminating && !isExcluded(targets, ns.name, forbidden) && isSelected(targets, ns);
}

/**
 * `targeted`: sorted existing, non-terminating target namespaces. `missing`: sorted names included
 * by name that do not exist or are terminating (reported under NamespaceNotExists).
 */
export function computeTargets(
  targets: Targets,
  namespaces: readonly NamespaceInfo[],
  forbidden: readonly string[] = [],
): { targeted: string[]; missing: string[] } {
  const targeted = new Set<string>();
  const live = new Set<string>();
  for (const ns of namespaces) {
    if (ns.terminating) continue;
    live.add(ns.name);
    if (isTargeted(targets, ns, forbidden)) targeted.add(ns.name);
  }
  const missing = new Set(
    names(targets.includedNamespaces).filter((name) => !live.has(name) && !isExcluded(targets, name, forbidden)),
  );
  return { targeted: [...targeted].sort(), missing: [...missing].sort() };
}
