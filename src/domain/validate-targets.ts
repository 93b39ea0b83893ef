// Admission rules for spec.targets: namespace names, the included/excluded overlap, the selector.
import { asArray, asRecord, asString, keyPath, quote, type FieldProblem, type UnknownRecord } from './field-problem.js';
import type { GlobSet, StepMeter } from './glob.js';
import { DNS_LABEL_RULE, isDnsLabel, isLabelValue, isQualifiedName, LABEL_VALUE_RULE, QUALIFIED_NAME_RULE } from './k8s-names.js';
import { runSteps, type Steps } from './steps.js';
import { patternSet } from './targets.js';
import { ALWAYS_EXCLUDED_NAMESPACES, type NamespaceNameList } from './types.js';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
/** Beyond this many, missing namespaces are summed up in one warning. */
const MAX_MISSING_WARNINGS = 5;

/**
 * A list's entries as they were read: the name of each valid `name` entry, at its index (undefined
 * for a pattern or an entry with a problem). A list may hold 10,000 names: nothing per entry is
 * made but this array, an entry's field path only when it has a problem.
 */
interface Listed {
  field: string;
  names: (string | undefined)[];
  /** How many valid names there are. */
  count: number;
  /** The valid patterns. */
  patterns: string[];
}

// A namespace name with `*` anywhere; at most a namespace name long.
const NAME_PATTERN = /^[a-z0-9*]([-a-z0-9*]{0,61}[a-z0-9*])?$/;
const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set(ALWAYS_EXCLUDED_NAMESPACES);
const MAX_NAME_LENGTH = 63;
/** A few µs of matching per namespace name at most (bench/hostile-input.ts). */
export const MAX_STEPS_PER_NAME = 1_024;
/** A few ms at most for a distribution's included names against its exclusions (bench/hostile-input.ts). */
export const MAX_STEPS_PER_LIST = 2_000_000;
/** Names tested against the exclusions in one step (a list may hold 10,000). */
const NAMES_PER_STEP = 2_000;

function entryPath(field: string, index: number): string {
  return `spec.targets.${field}.list[${index}]`;
}

/** One entry of a name list: a `name`, or (an addition) a `pattern`; exactly one of them. */
function checkEntry(entry: UnknownRecord | undefined, field: string, index: number, problems: FieldProblem[], patterns: string[]): string | undefined {
  const name = entry?.name;
  const pattern = entry?.pattern;
  if (pattern !== undefined) {
    if (name !== undefined) problems.push({ path: entryPath(field, index), message: 'has both name and pattern: keep one of them' });
    else if (typeof pattern !== 'string' || !NAME_PATTERN.test(pattern)) {
      problems.push({ path: `${entryPath(field, index)}.pattern`, message: `${quote(pattern)} is not a namespace name pattern (lowercase letters, digits, '-' and '*' for any characters, matched against the whole name, e.g. "team-*")` });
    } else patterns.push(pattern);
    return undefined;
  }
  if (typeof name === 'string' && name !== '' && isDnsLabel(name)) return name;
  const path = `${entryPath(field, index)}.name`;
  if (typeof name !== 'string' || name === '') problems.push({ path, message: 'is required: a namespace name (or a pattern such as "team-*")' });
  else problems.push({ path, message: `${quote(name)} is not a valid namespace name (${DNS_LABEL_RULE})` });
  return undefined;
}

function listedNames(targets: UnknownRecord, field: string, problems: FieldProblem[]): Listed {
  const list = asArray(asRecord(targets[field])?.list);
  const names: (string | undefined)[] = [];
  let count = 0;
  const patterns: string[] = [];
  for (let index = 0; index < list.length; index++) {
    const record = asRecord(list[index]);
    const name = checkEntry(record, field, index, problems, patterns);
    if (name !== undefined) count++;
    names.push(name);
  }
  return { field, names, count, patterns };
}

/** The list as the rules compiled for the reconciler read it, so that the patterns indexed here are indexed once (see patternSet). */
function listOf(targets: UnknownRecord, field: string): NamespaceNameList | undefined {
  return targets[field] as NamespaceNameList | undefined;
}

function checkMatchLabels(selector: UnknownRecord): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries(asRecord(selector.matchLabels) ?? {})) {
    const path = keyPath('spec.targets.namespaceLabelSelector.matchLabels', key);
    if (!isQualifiedName(key)) problems.push({ path, message: `${quote(key)} is not a valid label key (${QUALIFIED_NAME_RULE})` });
    if (typeof value !== 'string' || !isLabelValue(value)) {
      problems.push({ path, message: `${quote(value)} is not a valid label value (${LABEL_VALUE_RULE})` });
    }
  }
  return problems;
}

function checkValues(path: string, operator: string, values: unknown[]): FieldProblem[] {
  const needsValues = operator === 'In' || operator === 'NotIn';
  if (needsValues && values.length === 0) return [{ path, message: `must not be empty for operator ${operator}` }];
  if (!needsValues && values.length > 0) return [{ path, message: `must be empty for operator ${operator}` }];
  return values
    .map((value, index) => ({ value, path: `${path}[${index}]` }))
    .filter(({ value }) => typeof value !== 'string' || !isLabelValue(value))
    .map(({ value, path: at }) => ({ path: at, message: `${quote(value)} is not a valid label value (${LABEL_VALUE_RULE})` }));
}

function checkExpression(entry: unknown, index: number): FieldProblem[] {
  const base = `spec.targets.namespaceLabelSelector.matchExpressions[${index}]`;
  const expression = asRecord(entry) ?? {};
  const problems: FieldProblem[] = [];
  const key = expression.key;
  if (typeof key !== 'string' || !isQualifiedName(key)) {
    problems.push({ path: `${base}.key`, message: `${quote(key ?? '')} is not a valid label key (${QUALIFIED_NAME_RULE})` });
  }
  const operator = asString(expression.operator);
  if (operator === undefined || !OPERATORS.includes(operator)) {
    const message = `${quote(expression.operator ?? '')} is not a valid operator: use In, NotIn, Exists or DoesNotExist`;
    return [...problems, { path: `${base}.operator`, message }];
  }
  return [...problems, ...checkValues(`${base}.values`, operator, asArray(expression.values))];
}

function checkSelector(targets: UnknownRecord): FieldProblem[] {
  const selector = asRecord(targets.namespaceLabelSelector);
  if (selector === undefined) return [];
  return [...checkMatchLabels(selector), ...asArray(selector.matchExpressions).flatMap(checkExpression)];
}

function selectsNothing(targets: UnknownRecord, included: Listed): boolean {
  const selector = asRecord(targets.namespaceLabelSelector);
  const selectorEmpty =
    Object.keys(asRecord(selector?.matchLabels) ?? {}).length === 0 && asArray(selector?.matchExpressions).length === 0;
  return targets.allNamespaces !== true && included.count === 0 && included.patterns.length === 0 && selectorEmpty;
}

function missingWarnings(names: ReadonlySet<string>): string[] {
  const shown: string[] = [];
  for (const name of names) {
    if (shown.length === MAX_MISSING_WARNINGS) break;
    shown.push(`namespace ${quote(name)} does not exist yet: copied when it appears`);
  }
  const rest = names.size - shown.length;
  return rest > 0 ? [...shown, `${rest} more included namespaces do not exist yet`] : shown;
}

/** In one pass over the included names: those never targeted (each time listed), and those that do not exist (once each, in list order). */
function targetWarnings(
  targets: UnknownRecord,
  included: Listed,
  excluded: ReadonlySet<string>,
  namespaceExists: ((name: string) => boolean | undefined) | undefined,
): string[] {
  const warnings: string[] = [];
  const missing = new Set<string>();
  for (const name of included.names) {
    if (name === undefined) continue;
    if (SYSTEM_NAMESPACES.has(name)) warnings.push(`namespace ${quote(name)} is never a target and is ignored`);
    else if (!excluded.has(name) && namespaceExists?.(name) === false) missing.add(name);
  }
  warnings.push(...missingWarnings(missing));
  if (selectsNothing(targets, included)) {
    warnings.push('spec.targets selects no namespace: set allNamespaces, includedNamespaces or namespaceLabelSelector');
  }
  return warnings;
}

/** Names both included and excluded, each time it is included. */
function overlapProblems(included: Listed, excluded: ReadonlySet<string>): FieldProblem[] {
  if (excluded.size === 0) return [];
  const problems: FieldProblem[] = [];
  included.names.forEach((name, index) => {
    if (name !== undefined && excluded.has(name)) {
      problems.push({ path: `${entryPath(included.field, index)}.name`, message: `${quote(name)} is both included and excluded: remove it from one of the lists` });
    }
  });
  return problems;
}

/**
 * What testing names against the patterns may cost, bounded before anything is tested: per
 * namespace name (every namespace event, pod and pass tests one), and for the included names
 * against the exclusions (admission and every pass list them). The bounds hold whatever the names
 * are; a list of patterns that each start with their own literal costs next to nothing.
 */
function* costProblems(included: Listed, excluded: Listed, inclusions: GlobSet, exclusions: GlobSet): Steps<FieldProblem[]> {
  yield* inclusions.measureSteps();
  yield* exclusions.measureSteps();
  const perName = inclusions.worstSteps(MAX_NAME_LENGTH) + exclusions.worstSteps(MAX_NAME_LENGTH);
  if (perName > MAX_STEPS_PER_NAME) {
    const message = `its name patterns could take ${perName} comparisons to test one namespace name, more than the ${MAX_STEPS_PER_NAME} allowed: use fewer patterns, or fewer that share their start or that start and end with '*' (a pattern such as "team-a-*" is looked up, not tried)`;
    return [{ path: 'spec.targets', message }];
  }
  yield;
  // The included names are known: what testing them costs is counted as it is spent, and stopped at the bound.
  const meter: StepMeter = { steps: 0 };
  let tested = 0;
  for (const name of included.names) {
    if (name === undefined) continue;
    if (++tested % NAMES_PER_STEP === 0) yield;
    exclusions.has(name, meter);
    if (meter.steps > MAX_STEPS_PER_LIST) {
      const message = `testing its ${included.count} included names against ${excluded.patterns.length} exclusion patterns takes more than the ${MAX_STEPS_PER_LIST} comparisons allowed: exclude by name, or list fewer names or patterns`;
      return [{ path: 'spec.targets.excludedNamespaces', message }];
    }
  }
  return [];
}

/**
 * Included names that an exclusion pattern removes: never targets, though listed. A name both
 * included and excluded by name is refused; by pattern it may be meant (a broad exclusion), but a
 * distribution that then targets nothing must not pass in silence.
 */
function* excludedByPattern(patterns: readonly string[], included: Listed, exclusions: GlobSet): Steps<string[]> {
  if (patterns.length === 0) return [];
  const removed = new Set<string>();
  let tested = 0;
  for (const name of included.names) {
    if (name === undefined) continue;
    if (++tested % NAMES_PER_STEP === 0) yield;
    if (exclusions.has(name)) removed.add(name);
  }
  const shown = [...removed].slice(0, MAX_MISSING_WARNINGS).map((name) => `namespace ${quote(name)} is included but an excludedNamespaces pattern removes it: never a target`);
  const rest = removed.size - shown.length;
  return rest > 0 ? [...shown, `${rest} more included namespaces are removed by excludedNamespaces patterns`] : shown;
}

/**
 * Rules for spec.targets; `warnings` receives what is allowed but probably not meant. Pauses
 * between its steps: lists of 10,000 names and patterns take milliseconds to read, to index and to
 * test against each other.
 */
export function* targetsValidation(
  value: unknown,
  warnings: string[],
  namespaceExists?: (name: string) => boolean | undefined,
): Steps<FieldProblem[]> {
  const targets = asRecord(value);
  if (targets === undefined) {
    return [{ path: 'spec.targets', message: 'is required: which namespaces get the copy ({} selects none)' }];
  }
  const problems: FieldProblem[] = [];
  const included = listedNames(targets, 'includedNamespaces', problems);
  yield;
  const excludedList = listedNames(targets, 'excludedNamespaces', problems);
  yield;
  const excluded = new Set<string>();
  for (const name of excludedList.names) if (name !== undefined) excluded.add(name);
  problems.push(...overlapProblems(included, excluded));
  yield;
  // Indexed each in a step of its own (see patternSet): admission's access check and plan preview use them next.
  const inclusions = patternSet(listOf(targets, included.field));
  yield;
  const exclusions = patternSet(listOf(targets, excludedList.field));
  yield;
  problems.push(...(yield* costProblems(included, excludedList, inclusions, exclusions)));
  problems.push(...checkSelector(targets));
  warnings.push(...targetWarnings(targets, included, excluded, namespaceExists));
  yield;
  // Only once testing them is known to stay within bounds (a problem denies the request anyway).
  if (problems.length === 0) warnings.push(...(yield* excludedByPattern(excludedList.patterns, included, exclusions)));
  return problems;
}

/** targetsValidation in one go. */
export function validateTargets(value: unknown, warnings: string[], namespaceExists?: (name: string) => boolean | undefined): FieldProblem[] {
  return runSteps(targetsValidation(value, warnings, namespaceExists));
}
