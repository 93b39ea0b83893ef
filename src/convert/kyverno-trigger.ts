// Which namespaces a Kyverno generate rule fires for: its `match` and `exclude` filters over
// Namespace objects, read into the namespaces a distribution targets. Kyverno's name filters
// (`names`, `name`, and `namespaces`, which for a Namespace is its own name) take `*` and `?`;
// a filter's fields all hold (AND), `any` filters add up (OR).
import type { LabelSelector, LabelSelectorRequirement } from '../domain/types.js';
import { allNamespaces, emptySet, type NamespaceSet, union } from './namespace-set.js';

type Filter = Record<string, unknown>;

interface Filters {
  filters: Filter[];
  /** `all`: every filter must hold. */
  every: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function filtersOf(block: unknown): Filters | string {
  if (!isObject(block)) return { filters: [], every: false };
  const any = Array.isArray(block.any) ? block.any.filter(isObject) : [];
  const all = Array.isArray(block.all) ? block.all.filter(isObject) : [];
  const legacy = isObject(block.resources) ? [block] : [];
  if (all.length > 1) return '`all` with several filters (each must hold) has no equivalent';
  return { filters: [...any, ...all, ...legacy], every: all.length > 0 };
}

const NAMESPACE_KINDS = ['Namespace', 'v1/Namespace', '*/Namespace'];
const WHO = ['subjects', 'roles', 'clusterRoles'];

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function namesOf(resources: Filter): string[] {
  const name = typeof resources.name === 'string' ? [resources.name] : [];
  return [...listOf(resources.names), ...listOf(resources.namespaces), ...name].filter((value): value is string => typeof value === 'string');
}

/** Why a filter has no equivalent, whatever its names and selector say. */
function filterProblem(filter: Filter, resources: Filter, what: string): string | undefined {
  const who = WHO.find((key) => filter[key] !== undefined);
  if (who !== undefined) return `${what} filters on who makes the request (${who}), which a distribution does not know`;
  const kinds = listOf(resources.kinds);
  const other = kinds.find((kind) => typeof kind !== 'string' || !NAMESPACE_KINDS.includes(kind));
  // An exclude filter without kinds applies to whatever the match selects.
  if (other !== undefined || (kinds.length === 0 && what === 'match')) return `${what} fires on ${JSON.stringify(other ?? 'no kind')}, not on new namespaces`;
  const unsupported = ['namespaceSelector', 'annotations'].find((key) => resources[key] !== undefined);
  if (unsupported !== undefined) return `${what} filters by resources.${unsupported}, which is not converted`;
  const operations = resources.operations === undefined ? ['CREATE'] : listOf(resources.operations);
  if (!operations.includes('CREATE')) return `${what} fires on ${operations.join(', ')} only, not on creation`;
  return undefined;
}

/** One filter as a set of namespaces, or why it has no equivalent. */
function filterSet(filter: Filter, what: string): NamespaceSet | string {
  const resources = isObject(filter.resources) ? filter.resources : {};
  const problem = filterProblem(filter, resources, what);
  if (problem !== undefined) return problem;
  const names = namesOf(resources);
  const selector = isObject(resources.selector) ? (resources.selector as LabelSelector) : undefined;
  if (names.some((name) => name.includes('?'))) return `${what} has a name with ?, which no name pattern can say`;
  if (names.length > 0 && selector !== undefined) return `${what} requires a name and labels together, which targets cannot say (they add up)`;
  if (selector !== undefined) return { ...emptySet(), selector };
  if (names.length === 0) return allNamespaces();
  if (names.includes('*')) return allNamespaces();
  return { ...emptySet(), names: names.filter((name) => !name.includes('*')), patterns: names.filter((name) => name.includes('*')) };
}

/** The namespaces `match` selects. */
export function matchSet(match: unknown): NamespaceSet | string {
  const read = filtersOf(match);
  if (typeof read === 'string') return `match: ${read}`;
  if (read.filters.length === 0) return 'match selects nothing';
  let set: NamespaceSet | undefined = emptySet();
  for (const filter of read.filters) {
    const one = filterSet(filter, 'match');
    if (typeof one === 'string') return one;
    set = union(set, one);
    if (set === undefined) return 'match selects by several label selectors, and a distribution has one';
  }
  return set;
}

const NEGATED: Record<LabelSelectorRequirement['operator'], LabelSelectorRequirement['operator']> = { In: 'NotIn', NotIn: 'In', Exists: 'DoesNotExist', DoesNotExist: 'Exists' };

/** The one requirement a selector holds, negated; undefined when it holds more (NOT of AND is OR). */
function negation(selector: LabelSelector): LabelSelectorRequirement | undefined {
  const labels = Object.entries(selector.matchLabels ?? {});
  const expressions = selector.matchExpressions ?? [];
  if (labels.length + expressions.length !== 1) return undefined;
  const [label] = labels;
  if (label !== undefined) return { key: label[0], operator: 'NotIn', values: [label[1]] };
  const [expression] = expressions;
  if (expression === undefined) return undefined;
  return { key: expression.key, operator: NEGATED[expression.operator], ...(expression.values === undefined ? {} : { values: expression.values }) };
}

/** `set` without the namespaces one exclude filter takes out. */
function excludeOne(set: NamespaceSet, filter: Filter): NamespaceSet | string {
  const excluded = filterSet(filter, 'exclude');
  if (typeof excluded === 'string') return excluded;
  if (excluded.all) return 'exclude takes out every namespace';
  if (excluded.selector === undefined) return { ...set, excludedNames: [...set.excludedNames, ...excluded.names], excludedPatterns: [...set.excludedPatterns, ...excluded.patterns] };
  const requirement = negation(excluded.selector);
  if (requirement === undefined) return 'exclude by a selector of several labels has no equivalent (a namespace is left out when it has them all)';
  if (set.names.length > 0 || set.patterns.length > 0) return 'exclude by labels takes out listed names too, which targets cannot say';
  const expressions = [...(set.selector?.matchExpressions ?? []), requirement];
  return { ...set, all: false, selector: { ...set.selector, matchExpressions: expressions } };
}

/** `set` without what `exclude` takes out. */
export function excludeSet(set: NamespaceSet, exclude: unknown): NamespaceSet | string {
  const read = filtersOf(exclude);
  if (typeof read === 'string') return `exclude: ${read}`;
  if (read.every && read.filters.length > 0) return excludeOne(set, read.filters[0] ?? {});
  let result: NamespaceSet | string = set;
  for (const filter of read.filters) {
    result = excludeOne(result, filter);
    if (typeof result === 'string') return result;
  }
  return result;
}
