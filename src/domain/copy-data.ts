// Which keys of a distribution's content reach its copies (spec.copyData): include and exclude
// lists of keys or anchored key globs over data, binaryData and a template's stringData, and the
// type the copies of a Secret get. A key left out is not in the template the copies are rendered
// and hashed from: its value never reaches a copy, and a key no longer selected leaves every copy
// at the next pass (the hash changed). Sharing only a cert-manager Secret's ca.crt drops tls.key,
// which a kubernetes.io/tls Secret must have: such copies are written as another type
// (secretType), or not at all, saying why.
import { filtered, keyAllowed, keyRulesProblems, type KeySyntax } from './copy-metadata.js';
import { asRecord, quote, type FieldProblem, type UnknownRecord } from './field-problem.js';
import { isCoreDataKind } from './kinds.js';
import type { Steps } from './steps.js';
import type { CopyDataRules, Resource } from './types.js';
import { missingTypeKeys, secretTypeProblem } from './validate-content.js';

const DATA_FIELDS = ['data', 'binaryData', 'stringData'] as const;

/**
 * A data key (letters, digits, '-', '_', '.') with `*` anywhere. Testing one key may cost at most
 * 2,048 comparisons, not the 65,536 of a label key: a source may hold 6,000 keys of 253
 * characters, every one tested each time the source changes, in one turn of the event loop
 * (bench/hostile-input.ts: 3 ms for `include: [ca.crt]`, 8.5 ms under the costliest globs
 * admitted). Keys and a few globs such as `*.crt` stay far below the bound.
 */
const DATA_KEYS: KeySyntax = {
  entry: /^[-._a-zA-Z0-9*]{1,253}$/,
  describe: 'a data key, or a glob of one (* for any characters, e.g. "*.crt")',
  maxKeyLength: 253,
  maxStepsPerKey: 2_048,
};
/** Keys of a template tested in one step of admission: a template may hold tens of thousands. */
const KEYS_PER_STEP = 2_048;

/** The content with only the keys the rules select, as the type they name (the same object when nothing changes). */
export function applyCopyData(resource: Resource, rules: CopyDataRules | undefined): Resource {
  if (rules === undefined || !isCoreDataKind(resource.apiVersion, resource.kind)) return resource;
  let next = resource;
  for (const field of DATA_FIELDS) {
    const map = resource[field];
    const kept = filtered(map, rules);
    if (kept === map) continue;
    if (next === resource) next = { ...resource };
    if (kept === undefined) delete next[field];
    else next[field] = kept;
  }
  const type = rules.secretType;
  if (type !== undefined && resource.kind === 'Secret' && resource.type !== type) next = { ...next, type };
  return next;
}

function fixFor(type: string, missing: string): string {
  return (
    `the copies would be Secrets of type ${quote(type)} without the key ${missing}, which that type requires: ` +
    'set spec.copyData.secretType: Opaque to copy it as an Opaque Secret, or let spec.copyData select the key'
  );
}

/**
 * Why the copies of `selected` (content after applyCopyData) cannot be written: a Secret whose
 * type requires a key the selection left out. In the words of a status message; key names only.
 */
export function copyDataProblem(selected: Resource): string | undefined {
  const { type } = selected;
  if (selected.kind !== 'Secret' || type === undefined || !isCoreDataKind(selected.apiVersion, selected.kind)) return undefined;
  const { data = {}, stringData = {} } = selected;
  const missing = missingTypeKeys(type, (key) => Object.hasOwn(data, key) || Object.hasOwn(stringData, key));
  return missing === undefined ? undefined : fixFor(type, missing);
}

/**
 * For a source as admission finds it (its type, never its data): the keys its copies' type requires
 * that the rules leave out whatever the source holds. Nothing is copied then (copyDataProblem, at
 * reconcile): said at once, while the author is at hand.
 */
export function sourceSelectionWarning(what: string, found: Pick<Resource, 'apiVersion' | 'kind' | 'type'>, rules: CopyDataRules | undefined): string | undefined {
  if (rules === undefined || found.kind !== 'Secret' || !isCoreDataKind(found.apiVersion, found.kind)) return undefined;
  const type = rules.secretType ?? found.type;
  const missing = type === undefined ? undefined : missingTypeKeys(type, (key) => keyAllowed(key, rules));
  return missing === undefined ? undefined : `spec.copyData: ${what} is of type ${quote(found.type ?? 'Opaque')}, and ${fixFor(type as string, missing)}; nothing is copied until then`;
}

/** What spec.copyData applies to: the template's kind, or the source's. */
function contentKind(spec: UnknownRecord): { apiVersion: unknown; kind: unknown } | undefined {
  const content = asRecord(spec.resource) ?? asRecord(spec.source);
  return content === undefined ? undefined : { apiVersion: content.apiVersion, kind: content.kind };
}

function kindProblems(rules: UnknownRecord, spec: UnknownRecord): FieldProblem[] {
  const content = contentKind(spec);
  if (content === undefined) return [];
  const { apiVersion, kind } = content;
  const core = typeof apiVersion === 'string' && typeof kind === 'string' && isCoreDataKind(apiVersion, kind);
  if (!core) return [{ path: 'spec.copyData', message: 'is only for Secrets and ConfigMaps (it selects keys of their data)' }];
  if (rules.secretType === undefined) return [];
  if (kind !== 'Secret') return [{ path: 'spec.copyData.secretType', message: 'is only for Secrets: the copies of a ConfigMap have no type' }];
  const problem = secretTypeProblem(rules.secretType);
  return problem === undefined ? [] : [{ path: 'spec.copyData.secretType', message: problem }];
}

function keysOf(resource: UnknownRecord, field: string): string[] {
  return Object.keys(asRecord(resource[field]) ?? {});
}

/** A template's selection: what its copies hold, as what type, told before anything is written. */
function* templateSelection(resource: UnknownRecord, rules: CopyDataRules, warnings: string[]): Steps<FieldProblem[]> {
  const all = DATA_FIELDS.flatMap((field) => keysOf(resource, field));
  const selected = new Set<string>();
  let tested = 0;
  for (const key of all) {
    if (++tested % KEYS_PER_STEP === 0) yield;
    if (keyAllowed(key, rules)) selected.add(key);
  }
  if (all.length > 0 && selected.size === 0) warnings.push("spec.copyData: selects none of the template's keys: the copies hold no data");
  return resource.kind === 'Secret' ? typeProblems(resource, rules, selected) : [];
}

/** Whether the keys a template's selection keeps make a Secret of the copies' type. */
function typeProblems(resource: UnknownRecord, rules: CopyDataRules, selected: ReadonlySet<string>): FieldProblem[] {
  const secretKeys = new Set([...keysOf(resource, 'data'), ...keysOf(resource, 'stringData')]);
  const type = rules.secretType ?? resource.type;
  // A template without what its own type requires is told at spec.resource already.
  if (typeof type !== 'string' || (rules.secretType === undefined && missingTypeKeys(type, (key) => secretKeys.has(key)) !== undefined)) return [];
  const missing = missingTypeKeys(type, (key) => secretKeys.has(key) && selected.has(key));
  if (missing === undefined) return [];
  return [{ path: rules.secretType === undefined ? 'spec.copyData' : 'spec.copyData.secretType', message: fixFor(type, missing) }];
}

/**
 * Admission rules for spec.copyData: its lists (as copyMetadata's, over data keys), its type,
 * and, for a template, whether the selected keys make a Secret of that type.
 */
export function* copyDataValidation(spec: UnknownRecord, warnings: string[]): Steps<FieldProblem[]> {
  const value = spec.copyData;
  if (value === undefined) return [];
  const rules = asRecord(value);
  const path = 'spec.copyData';
  if (rules === undefined) return [{ path, message: 'must be an object: {include: [...], exclude: [...], secretType}' }];
  const problems = [...keyRulesProblems(rules, path, DATA_KEYS), ...kindProblems(rules, spec)];
  const resource = asRecord(spec.resource);
  if (problems.length > 0 || resource === undefined) return problems;
  return yield* templateSelection(resource, rules, warnings);
}
