// The namespaces a tool would copy into, in the terms a distribution's targets can say: every
// namespace, names, name globs, one label selector, minus names and globs. Built from the tools'
// namespace lists, which are regular expressions matched against the whole name.
import { globMatcher } from '../domain/glob.js';
import type { LabelSelector, Targets } from '../domain/types.js';
import { type Finding, unconverted } from './findings.js';

export interface NamespaceSet {
  all: boolean;
  names: string[];
  /** Globs, `*` for any characters. */
  patterns: string[];
  selector?: LabelSelector;
  excludedNames: string[];
  excludedPatterns: string[];
}

export function emptySet(): NamespaceSet {
  return { all: false, names: [], patterns: [], excludedNames: [], excludedPatterns: [] };
}

export function allNamespaces(): NamespaceSet {
  return { ...emptySet(), all: true };
}

export function isEmptySet(set: NamespaceSet): boolean {
  return !set.all && set.names.length === 0 && set.patterns.length === 0 && set.selector === undefined;
}

/** A namespace name: what a regular expression without operators is. */
const NAME_PART = /^[a-z0-9-]*$/;

/**
 * One entry of a tool's namespace list (a regular expression the whole name must match) as a
 * name or a glob: a name, or names joined by `.*` (`team-.*`, `.*-prod`, `.*`). Any other
 * operator (`[0-9]`, `+`, `?`, `|`, `\d`, a lone `.`, `*` after a character) matches a set no
 * glob matches: undefined.
 */
export function globOfRegex(entry: string): { name: string } | { pattern: string } | undefined {
  let text = entry.trim();
  if (text.startsWith('^')) text = text.slice(1);
  if (text.endsWith('$') && !text.endsWith('\\$')) text = text.slice(0, -1);
  const parts = text.split('.*');
  if (!parts.every((part) => NAME_PART.test(part))) return undefined;
  if (parts.length === 1) return text === '' ? undefined : { name: text };
  return { pattern: parts.join('*') };
}

const WHY_NOT = 'is a regular expression no name pattern matches exactly (only names, and names joined by `.*`, convert)';

/** A comma-separated list of regular expressions (replicator's and reflector's lists), as names and globs. */
export function setOfRegexList(list: string, subject: string, annotation: string, findings: Finding[]): NamespaceSet {
  const set = emptySet();
  for (const entry of list.split(',').map((part) => part.trim()).filter((part) => part !== '')) {
    const glob = globOfRegex(entry);
    if (glob === undefined) findings.push(unconverted(subject, `${annotation} entry "${entry}" ${WHY_NOT}; it is left out`));
    else if ('name' in glob) set.names.push(glob.name);
    else if (glob.pattern === '*') set.all = true;
    else set.patterns.push(glob.pattern);
  }
  return set;
}

/**
 * Whether an entry of a comma-separated list of regular expressions matches `namespace`, as
 * `matches` (the tool's own way) says. An entry that does not compile matches nothing, as in
 * both tools; an empty one matches no namespace name.
 */
export function someRegexMatches(list: string, namespace: string, matches: (regex: string, namespace: string) => boolean): boolean {
  const entries = list.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  return entries.some((entry) => {
    // What a name or a glob says is matched as a glob, in linear time; no other entry is run unless its cost is bounded.
    const glob = globOfRegex(entry);
    if (glob !== undefined) return 'name' in glob ? glob.name === namespace : globMatcher(glob.pattern)(namespace);
    if (!boundedRegex(entry) || namespace.length > MAX_NAMESPACE_LENGTH) return false;
    try {
      return matches(entry, namespace);
    } catch {
      return false;
    }
  });
}

const MAX_NAMESPACE_LENGTH = 63;
/** Groups, alternation and backreferences are what let a backtracking match explode. */
const UNBOUNDED_SYNTAX = /[()|]|\\[1-9]/;

/**
 * Whether a regular expression from the input costs bounded time against a namespace name: no
 * groups, alternation or backreferences, and at most two quantifiers, so that a match of a
 * 63-character name takes at most about 63³ steps (one of many stars would take 63^stars).
 * The others are not run: the mirror they would allow is reported as not allowed.
 */
export function boundedRegex(entry: string): boolean {
  if (entry.length > 253 || UNBOUNDED_SYNTAX.test(entry)) return false;
  const quantifiers = entry.replace(/\\./g, '').match(/[*+?{]/g) ?? [];
  return quantifiers.length <= 2;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

function sameSelector(a: LabelSelector | undefined, b: LabelSelector | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function hasExclusions(set: NamespaceSet): boolean {
  return set.excludedNames.length > 0 || set.excludedPatterns.length > 0;
}

/**
 * Namespaces in either set; undefined when both have a different label selector (a distribution
 * has one), or one has exclusions (they would take namespaces from the other too).
 */
export function union(a: NamespaceSet, b: NamespaceSet): NamespaceSet | undefined {
  if (a.selector !== undefined && b.selector !== undefined && !sameSelector(a.selector, b.selector)) return undefined;
  if ((hasExclusions(a) || hasExclusions(b)) && JSON.stringify(a) !== JSON.stringify(b)) return undefined;
  return {
    all: a.all || b.all,
    names: unique([...a.names, ...b.names]),
    patterns: unique([...a.patterns, ...b.patterns]),
    selector: a.selector ?? b.selector,
    excludedNames: unique([...a.excludedNames, ...b.excludedNames]),
    excludedPatterns: unique([...a.excludedPatterns, ...b.excludedPatterns]),
  };
}

function namesMatching(names: readonly string[], set: NamespaceSet): string[] {
  return names.filter((name) => set.names.includes(name) || set.patterns.some((pattern) => globMatcher(pattern)(name)));
}

/**
 * Namespaces in both sets, where targets can say it: one of them is every namespace, they are
 * the same, or neither has a selector and the names of one are tested against the other
 * (a glob against a glob: only the globs they share). Undefined otherwise.
 */
export function intersection(a: NamespaceSet, b: NamespaceSet): NamespaceSet | undefined {
  if (a.all && a.selector === undefined) return b;
  if (b.all && b.selector === undefined) return a;
  if (JSON.stringify(a) === JSON.stringify(b)) return a;
  if (a.selector !== undefined || b.selector !== undefined) return undefined;
  const sharedPatterns = a.patterns.filter((pattern) => b.patterns.includes(pattern));
  const onlyInOne = a.patterns.length + b.patterns.length - 2 * sharedPatterns.length;
  const names = unique([...namesMatching(a.names, b), ...namesMatching(b.names, a)]);
  // Two different globs overlap in namespaces neither can list alone.
  if (onlyInOne > 0 && !(a.patterns.length === 0 || b.patterns.length === 0)) return undefined;
  return { ...emptySet(), names, patterns: sharedPatterns };
}

function entries(names: readonly string[], patterns: readonly string[]): { name?: string; pattern?: string }[] {
  return [...names.map((name) => ({ name })), ...patterns.map((pattern) => ({ pattern }))];
}

export function targetsOf(set: NamespaceSet): Targets {
  const targets: Targets = {};
  if (set.all) targets.allNamespaces = true;
  if (!set.all && (set.names.length > 0 || set.patterns.length > 0)) targets.includedNamespaces = { list: entries(set.names, set.patterns) };
  if (set.selector !== undefined && !set.all) targets.namespaceLabelSelector = set.selector;
  if (set.excludedNames.length > 0 || set.excludedPatterns.length > 0) targets.excludedNamespaces = { list: entries(set.excludedNames, set.excludedPatterns) };
  return targets;
}
