// Which namespaces a distribution targets, from the README's "Which namespaces are targeted" alone:
// T = ∅; every namespace for allNamespaces; the included names (also those that do not exist) and
// the namespaces matching an included pattern or a non-empty selector; minus the excluded names and
// patterns; minus the system namespaces, the controller's own and a source's own namespace.
import { SYSTEM_NAMESPACES } from './markers.js';
import type { DistributionSnapshot, LabelSelector, NamespaceEntry, NamespaceSnapshot } from './snapshot-types.js';

/** A glob over the whole name, `*` standing for any characters. */
export function globMatches(pattern: string, name: string): boolean {
  const escaped = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`).test(name);
}

function entryMatches(entry: NamespaceEntry, name: string): boolean {
  if (entry.name !== undefined) return entry.name === name;
  return entry.pattern !== undefined && globMatches(entry.pattern, name);
}

function selectorIsEmpty(selector: LabelSelector | undefined): boolean {
  return Object.keys(selector?.matchLabels ?? {}).length === 0 && (selector?.matchExpressions ?? []).length === 0;
}

export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  return (selector.matchExpressions ?? []).every((expression) => {
    const has = Object.hasOwn(labels, expression.key);
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
        return has && values.includes(labels[expression.key] ?? '');
      case 'NotIn':
        return !has || !values.includes(labels[expression.key] ?? '');
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
    }
  });
}

export interface TargetSet {
  /** Every target: existing namespaces and listed names that do not exist (or are terminating). */
  all: Set<string>;
  /** Listed names that do not exist or are terminating: reported under NamespaceNotExists. */
  missing: Set<string>;
}

function candidates(rd: DistributionSnapshot, namespaces: readonly NamespaceSnapshot[]): Set<string> {
  const { targets } = rd.spec;
  const included = targets.includedNamespaces?.list ?? [];
  const selector = targets.namespaceLabelSelector;
  const bySelector = (ns: NamespaceSnapshot): boolean => selector !== undefined && !selectorIsEmpty(selector) && selectorMatches(selector, ns.labels);
  const found = new Set<string>();
  for (const ns of namespaces) {
    if (targets.allNamespaces === true || included.some((entry) => entryMatches(entry, ns.name)) || bySelector(ns)) found.add(ns.name);
  }
  for (const entry of included) if (entry.name !== undefined) found.add(entry.name);
  return found;
}

export function expectedTargets(rd: DistributionSnapshot, namespaces: readonly NamespaceSnapshot[], ownNamespace: string): TargetSet {
  const never = new Set<string>([...SYSTEM_NAMESPACES, ownNamespace]);
  if (rd.spec.source) never.add(rd.spec.source.namespace);
  const excluded = rd.spec.targets.excludedNamespaces?.list ?? [];
  const all = new Set([...candidates(rd, namespaces)].filter((name) => !never.has(name) && !excluded.some((entry) => entryMatches(entry, name))));
  const live = new Set(namespaces.filter((ns) => !ns.terminating).map((ns) => ns.name));
  return { all, missing: new Set([...all].filter((name) => !live.has(name))) };
}
