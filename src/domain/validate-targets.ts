// Admission rules for spec.targets: namespace names, the included/excluded overlap, the selector.
import { asArray, asRecord, asString, keyPath, quote, type FieldProblem, type UnknownRecord } from './field-problem.js';
import { DNS_LABEL_RULE, isDnsLabel, isLabelValue, isQualifiedName, LABEL_VALUE_RULE, QUALIFIED_NAME_RULE } from './k8s-names.js';
import { ALWAYS_EXCLUDED_NAMESPACES } from './types.js';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];
/** Beyond this many, missing namespaces are summed up in one warning. */
const MAX_MISSING_WARNINGS = 5;

interface ListedName {
  path: string;
  name: string;
}

// A namespace name with `*` anywhere; at most a namespace name long.
const NAME_PATTERN = /^[a-z0-9*]([-a-z0-9*]{0,61}[a-z0-9*])?$/;

/** One entry of a name list: a `name`, or (an addition) a `pattern`; exactly one of them. */
function checkEntry(entry: UnknownRecord | undefined, base: string, problems: FieldProblem[]): string | undefined {
  const { name, pattern } = entry ?? {};
  if (pattern !== undefined) {
    if (name !== undefined) problems.push({ path: base, message: 'has both name and pattern: keep one of them' });
    else if (typeof pattern !== 'string' || !NAME_PATTERN.test(pattern)) {
      problems.push({ path: `${base}.pattern`, message: `${quote(pattern)} is not a namespace name pattern (lowercase letters, digits, '-' and '*' for any characters, matched against the whole name, e.g. "team-*")` });
    }
    return undefined;
  }
  const path = `${base}.name`;
  if (typeof name !== 'string' || name === '') problems.push({ path, message: 'is required: a namespace name (or a pattern such as "team-*")' });
  else if (!isDnsLabel(name)) problems.push({ path, message: `${quote(name)} is not a valid namespace name (${DNS_LABEL_RULE})` });
  else return name;
  return undefined;
}

function listedNames(targets: UnknownRecord, field: string, problems: FieldProblem[]): { names: ListedName[]; patterns: number } {
  const names: ListedName[] = [];
  let patterns = 0;
  asArray(asRecord(targets[field])?.list).forEach((entry, index) => {
    const base = `spec.targets.${field}.list[${index}]`;
    const record = asRecord(entry);
    if (record?.pattern !== undefined) patterns++;
    const name = checkEntry(record, base, problems);
    if (name !== undefined) names.push({ path: `${base}.name`, name });
  });
  return { names, patterns };
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

function selectsNothing(targets: UnknownRecord, included: readonly ListedName[], byPattern: boolean): boolean {
  const selector = asRecord(targets.namespaceLabelSelector);
  const selectorEmpty =
    Object.keys(asRecord(selector?.matchLabels) ?? {}).length === 0 && asArray(selector?.matchExpressions).length === 0;
  return targets.allNamespaces !== true && included.length === 0 && !byPattern && selectorEmpty;
}

function missingWarnings(names: readonly string[]): string[] {
  const shown = names.slice(0, MAX_MISSING_WARNINGS).map((name) => `namespace ${quote(name)} does not exist yet: copied when it appears`);
  const rest = names.length - shown.length;
  return rest > 0 ? [...shown, `${rest} more included namespaces do not exist yet`] : shown;
}

function targetWarnings(
  targets: UnknownRecord,
  included: readonly ListedName[],
  excluded: ReadonlySet<string>,
  namespaceExists: ((name: string) => boolean | undefined) | undefined,
  byPattern: boolean,
): string[] {
  const warnings: string[] = [];
  const system = included.filter(({ name }) => ALWAYS_EXCLUDED_NAMESPACES.includes(name));
  for (const { name } of system) warnings.push(`namespace ${quote(name)} is never a target and is ignored`);
  const candidates = included.filter(({ name }) => !excluded.has(name) && !ALWAYS_EXCLUDED_NAMESPACES.includes(name));
  const missing = [...new Set(candidates.map(({ name }) => name))].filter((name) => namespaceExists?.(name) === false);
  warnings.push(...missingWarnings(missing));
  if (selectsNothing(targets, included, byPattern)) {
    warnings.push('spec.targets selects no namespace: set allNamespaces, includedNamespaces or namespaceLabelSelector');
  }
  return warnings;
}

/** Rules for spec.targets; `warnings` receives what is allowed but probably not meant. */
export function validateTargets(
  value: unknown,
  warnings: string[],
  namespaceExists?: (name: string) => boolean | undefined,
): FieldProblem[] {
  const targets = asRecord(value);
  if (targets === undefined) {
    return [{ path: 'spec.targets', message: 'is required: which namespaces get the copy ({} selects none)' }];
  }
  const problems: FieldProblem[] = [];
  const { names: included, patterns } = listedNames(targets, 'includedNamespaces', problems);
  const excludedNames = new Set(listedNames(targets, 'excludedNamespaces', problems).names.map(({ name }) => name));
  for (const { path, name } of included.filter(({ name }) => excludedNames.has(name))) {
    problems.push({ path, message: `${quote(name)} is both included and excluded: remove it from one of the lists` });
  }
  problems.push(...checkSelector(targets));
  warnings.push(...targetWarnings(targets, included, excludedNames, namespaceExists, patterns > 0));
  return problems;
}
