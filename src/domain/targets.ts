// The one target-namespace rule (DESIGN.md "Target namespaces"), used by admission, the
// reconciler and the namespace generator alike.
import { compileGlobSet, type GlobSet } from './glob.js';
import { runSteps, type Steps } from './steps.js';
import {
  ALWAYS_EXCLUDED_NAMESPACES,
  type LabelSelector,
  type LabelSelectorRequirement,
  type NamespaceInfo,
  type NamespaceNameList,
  type ResourceDistribution,
  type Targets,
} from './types.js';

/**
 * The namespaces a distribution never writes to: the operator's forbidden ones, and the namespace
 * of its source (a copy there would be the source itself).
 */
export function forbiddenFor(rd: Pick<ResourceDistribution, 'spec'>, forbidden: readonly string[] = []): readonly string[] {
  const { source, rename } = rd.spec;
  // A renamed copy there is another object (an ObjectSync destination may ask for it).
  if (source === undefined || (rename !== undefined && rename !== source.name)) return forbidden;
  return [...forbidden, source.namespace];
}

/** A label selector made ready to test many namespaces: every value list becomes a set once. */
type CompiledSelector = (labels: Record<string, string>) => boolean;

function compileRequirement(requirement: LabelSelectorRequirement): CompiledSelector {
  const { key } = requirement;
  const values = new Set(requirement.values ?? []);
  switch (requirement.operator) {
    case 'In':
      return (labels) => Object.hasOwn(labels, key) && labels[key] !== undefined && values.has(labels[key]);
    case 'NotIn':
      // As in Kubernetes: a namespace without the key is "not in" any set of values.
      return (labels) => !Object.hasOwn(labels, key) || labels[key] === undefined || !values.has(labels[key]);
    case 'Exists':
      return (labels) => Object.hasOwn(labels, key);
    case 'DoesNotExist':
      return (labels) => !Object.hasOwn(labels, key);
    default:
      // An operator admission would have rejected: select nothing rather than guess.
      return () => false;
  }
}

/** Undefined or empty selector -> matches nothing (unlike Kubernetes). */
function compileSelector(selector: LabelSelector | undefined): CompiledSelector {
  if (!isNonEmptySelector(selector)) return () => false;
  const matchLabels = Object.entries(selector.matchLabels ?? {});
  const expressions = (selector.matchExpressions ?? []).map(compileRequirement);
  return (labels) =>
    matchLabels.every(([key, value]) => Object.hasOwn(labels, key) && labels[key] === value) && expressions.every((matches) => matches(labels));
}

/** Undefined or empty selector -> false: an empty selector matches nothing (unlike Kubernetes). */
export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  return compileSelector(selector)(labels);
}

export function isNonEmptySelector(selector: LabelSelector | undefined): selector is LabelSelector {
  if (selector === undefined) return false;
  return Object.keys(selector.matchLabels ?? {}).length > 0 || (selector.matchExpressions ?? []).length > 0;
}

/** The names of a list, in its order (a list may hold 10,000: one pass, one array). */
function names(list: NamespaceNameList | undefined): string[] {
  const found: string[] = [];
  for (const entry of list?.list ?? []) {
    const name = entry.name;
    if (typeof name === 'string') found.push(name);
  }
  return found;
}

/** The name patterns of a list (an addition to the API: `{pattern: "team-*"}`); admission reads it before it knows the list is well formed. */
export function patterns(list: NamespaceNameList | undefined): string[] {
  const found: string[] = [];
  const entries: unknown = list?.list;
  if (!Array.isArray(entries)) return found;
  for (const entry of entries as unknown[]) {
    const pattern = (entry as { pattern?: unknown } | null | undefined)?.pattern;
    if (typeof pattern === 'string') found.push(pattern);
  }
  return found;
}

/** Per list object, as `patterned` below: admission's rules, its access check, its plan preview and the rule compiled for a pass share one set. */
const patternSets = new WeakMap<NamespaceNameList, GlobSet>();

/**
 * A distribution's name patterns indexed one list a step (see patternSet): a pass, a namespace or a
 * pod tested against it then finds them made.
 */
export function* patternIndexSteps(targets: Targets): Steps<void> {
  for (const list of [targets.includedNamespaces, targets.excludedNamespaces]) {
    if (!hasPattern(list)) continue;
    patternSet(list);
    yield;
  }
}

/** A list's name patterns made ready to test many names, once per list object (10,000 patterns take milliseconds to index). */
export function patternSet(list: NamespaceNameList | undefined): GlobSet {
  if (list === undefined || typeof list !== 'object' || list === null) return compileGlobSet([]);
  let set = patternSets.get(list);
  if (set === undefined) patternSets.set(list, (set = compileGlobSet(patterns(list))));
  return set;
}

/** Per list object (replaced when a distribution changes, never changed in place): a list may hold 10,000 names. */
const patterned = new WeakMap<NamespaceNameList, boolean>();

/** Whether a list holds a name pattern (it reaches namespaces created later, as a selector does). */
export function hasPattern(list: NamespaceNameList | undefined): boolean {
  if (list === undefined) return false;
  let known = patterned.get(list);
  if (known === undefined) {
    known = (list.list ?? []).some((entry) => typeof entry.pattern === 'string');
    patterned.set(list, known);
  }
  return known;
}

/** Whether a rule targets by name alone: no allNamespaces, selector or pattern (its targets are its listed names that exist). */
export function isNamesOnly(targets: Targets): boolean {
  return targets.allNamespaces !== true && !hasPattern(targets.includedNamespaces) && !isNonEmptySelector(targets.namespaceLabelSelector);
}

/** Whether every name comes after the one before it: sorted, each once. */
export function isStrictlySorted(names: readonly string[]): boolean {
  for (let i = 1; i < names.length; i++) if (!((names[i - 1] as string) < (names[i] as string))) return false;
  return true;
}

/** `names` sorted, each once; the array itself when it already is (a list is usually written in order). */
function sortedOnce(names: string[]): string[] {
  return isStrictlySorted(names) ? names : [...new Set(names)].sort();
}

/** The names of sorted `from` that sorted `taken` does not hold, in one pass over both. */
export function sortedWithout(from: readonly string[], taken: readonly string[]): string[] {
  const rest: string[] = [];
  let j = 0;
  for (const name of from) {
    while (j < taken.length && (taken[j] as string) < name) j++;
    if (taken[j] !== name) rest.push(name);
  }
  return rest;
}

/**
 * The target rule made ready to test many namespaces: name lists become sets and the selector a
 * function, once, so that a pass over N namespaces costs O(N + list sizes), never their product.
 */
interface TargetRule {
  isExcluded: (name: string) => boolean;
  isTargeted: (ns: NamespaceInfo) => boolean;
  /** The included names not excluded, sorted: made on first use, then kept with the rule. */
  listed: () => readonly string[];
  /** listed, in steps: made once, kept with the rule. */
  listedSteps: () => Steps<readonly string[]>;
  /** Names alone (no allNamespaces, selector or pattern): its targets are the listed names that are live. */
  namesOnly: boolean;
}

/** Names tested against the exclusions in one step (a list may hold 10,000). */
const NAMES_PER_STEP = 2_000;

/** The names not excluded, sorted, each once (kept in `names` itself, which is made for it); in steps. */
function* listedOf(names: string[], isExcluded: (name: string) => boolean): Steps<string[]> {
  let kept = 0;
  for (let i = 0; i < names.length; i++) {
    if (i > 0 && i % NAMES_PER_STEP === 0) yield;
    const name = names[i] as string;
    if (!isExcluded(name)) names[kept++] = name;
  }
  names.length = kept;
  yield;
  return sortedOnce(names);
}

function listsName(list: NamespaceNameList | undefined, name: string): boolean {
  return (list?.list ?? []).some((entry) => entry.name === name);
}

function compileTargets(targets: Targets, forbidden: readonly string[]): TargetRule {
  const system = ALWAYS_EXCLUDED_NAMESPACES.filter((name) => !(targets.systemByName === true && listsName(targets.includedNamespaces, name)));
  const excluded = new Set([...system, ...forbidden, ...names(targets.excludedNamespaces)]);
  const includedPatterns = patternSet(targets.includedNamespaces);
  const excludedPatterns = patternSet(targets.excludedNamespaces);
  const selected = compileSelector(targets.namespaceLabelSelector);
  const all = targets.allNamespaces === true;
  // Made on first use: a list of names alone is planned without it (computeTargets), and it may be 10,000 long.
  let included: ReadonlySet<string> | undefined;
  const isIncluded = (name: string): boolean => (included ??= new Set(names(targets.includedNamespaces))).has(name);
  const openEnded = (name: string, labels: Record<string, string>): boolean => all || selected(labels) || includedPatterns.has(name);
  const anyOf = (ns: NamespaceInfo): boolean => isIncluded(ns.name) || (openEnded(ns.name, ns.labels) && !ALWAYS_EXCLUDED_NAMESPACES.includes(ns.name));
  const isExcluded = (name: string): boolean => excluded.has(name) || excludedPatterns.has(name);
  let listed: readonly string[] | undefined;
  return {
    isExcluded,
    isTargeted: (ns) => !ns.terminating && !isExcluded(ns.name) && anyOf(ns),
    listed: () => (listed ??= runSteps(listedOf(names(targets.includedNamespaces), isExcluded))),
    *listedSteps() {
      return (listed ??= yield* listedOf(names(targets.includedNamespaces), isExcluded));
    },
    namesOnly: isNamesOnly(targets),
  };
}

/**
 * Compiled rules, per targets object: cached distributions are replaced when they change, never
 * changed in place, so a pod or a namespace is tested against each distribution in constant time,
 * however long its name lists (a distribution with 10,000 excluded names costs nothing per pod).
 */
const compiled = new WeakMap<Targets, { forbidden: string; rule: TargetRule }>();

function rulesOf(targets: Targets, forbidden: readonly string[]): TargetRule {
  const key = forbidden.join('\n');
  const known = compiled.get(targets);
  if (known?.forbidden === key) return known.rule;
  const rule = compileTargets(targets, forbidden);
  compiled.set(targets, { forbidden: key, rule });
  return rule;
}

/**
 * The namespaces a rule names and may write to: its included names (not patterns), each once,
 * less those excluded (by name or pattern, the system ones, `forbidden`), sorted. Made once per
 * targets object, as the rule is: admission's access check and its plan preview share it.
 */
export function listedTargets(targets: Targets, forbidden: readonly string[] = []): readonly string[] {
  return rulesOf(targets, forbidden).listed();
}

/** Whether `ns` is an existing target namespace (a terminating one never is: nothing can be created there). */
export function isTargeted(targets: Targets, ns: NamespaceInfo, forbidden: readonly string[] = []): boolean {
  return rulesOf(targets, forbidden).isTargeted(ns);
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
  return runSteps(targetsInSteps(targets, namespaces, forbidden));
}

/** Namespaces tested against a rule in one step: a few patterns tried against each of 10,000 namespaces take tens of ms. */
export const NAMESPACES_PER_STEP = 1_000;

/** computeTargets, pausing after every NAMESPACES_PER_STEP namespaces tested (for admission's plan preview). */
export function* targetsInSteps(
  targets: Targets,
  namespaces: readonly NamespaceInfo[],
  forbidden: readonly string[] = [],
): Steps<{ targeted: string[]; missing: string[] }> {
  const rule = rulesOf(targets, forbidden);
  yield;
  const listed = yield* rule.listedSteps();
  yield;
  const targeted = (rule.namesOnly ? liveAmong(listed, namespaces) : undefined) ?? (yield* targetedAmong(rule, namespaces));
  // A listed name is targeted exactly when its namespace is live: the others are missing.
  return { targeted, missing: sortedWithout(listed, targeted) };
}

function* targetedAmong(rule: TargetRule, namespaces: readonly NamespaceInfo[]): Steps<string[]> {
  const found: string[] = [];
  for (let i = 0; i < namespaces.length; i++) {
    if (i > 0 && i % NAMESPACES_PER_STEP === 0) yield;
    const ns = namespaces[i] as NamespaceInfo;
    if (rule.isTargeted(ns)) found.push(ns.name);
  }
  return sortedOnce(found);
}

/**
 * The targets of a rule of names alone: the listed names live among `namespaces`, merged in one
 * pass when those come sorted, each once (as a list of names written in order brings them);
 * undefined when they do not.
 */
function liveAmong(listed: readonly string[], namespaces: readonly NamespaceInfo[]): string[] | undefined {
  const live: string[] = [];
  let previous: string | undefined;
  let i = 0;
  for (const ns of namespaces) {
    if (previous !== undefined && !(previous < ns.name)) return undefined;
    previous = ns.name;
    while (i < listed.length && (listed[i] as string) < ns.name) i++;
    if (!ns.terminating && listed[i] === ns.name) live.push(ns.name);
  }
  return live;
}

/**
 * Where a rule's targets can be among many namespaces: every namespace, or only those named and
 * those carrying one of some labels (`key=value`). A pass then looks at those few instead of every
 * namespace of the cluster, so that a sweep of D distributions over N namespaces costs their
 * copies, not D × N. Any namespace the rule targets is among them; the rule still decides.
 */
export type TargetCandidates = { every: true } | { every: false; names: readonly string[]; labels: readonly string[] };

/** The `key=value` pairs one of which every namespace the selector matches carries; undefined when there are none such. */
function requiredLabels(selector: LabelSelector): string[] | undefined {
  const [first] = Object.entries(selector.matchLabels ?? {});
  if (first !== undefined) return [`${first[0]}=${first[1]}`];
  const oneOf = (selector.matchExpressions ?? []).find((expression) => expression.operator === 'In');
  return oneOf === undefined ? undefined : (oneOf.values ?? []).map((value) => `${oneOf.key}=${value}`);
}

export function targetCandidates(targets: Targets): TargetCandidates {
  if (targets.allNamespaces === true || hasPattern(targets.includedNamespaces)) return { every: true };
  const selector = targets.namespaceLabelSelector;
  const labels = isNonEmptySelector(selector) ? requiredLabels(selector) : [];
  return labels === undefined ? { every: true } : { every: false, names: names(targets.includedNamespaces), labels };
}

/**
 * targetCandidates as index keys: `*` for every namespace, `name:<namespace>`,
 * `label:<key>=<value>`. A namespace the rule targets carries at least one of them (namespaceKeys).
 */
export function candidateKeys(targets: Targets): string[] {
  const candidates = targetCandidates(targets);
  if (candidates.every) return ['*'];
  return [...candidates.names.map((name) => `name:${name}`), ...candidates.labels.map((pair) => `label:${pair}`)];
}

/** The keys (as candidateKeys gives them) under which a namespace finds the rules that may target it. */
export function namespaceKeys(ns: Pick<NamespaceInfo, 'name' | 'labels'>): string[] {
  return ['*', `name:${ns.name}`, ...labelPairs(ns.labels).map((pair) => `label:${pair}`)];
}

/** The label index key of a namespace's labels, as targetCandidates names them. */
export function labelPairs(labels: Record<string, string>): string[] {
  return Object.entries(labels).map(([key, value]) => `${key}=${value}`);
}
