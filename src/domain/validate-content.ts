// Admission rules for the content of the distributed Secret or ConfigMap: what the API server
// would reject on every copy, caught once at the distribution.
// Messages never include data values: they may be credentials.
import { isForbiddenSecretType } from './copy.js';
import { asRecord, asString, keyPath, quote, type FieldProblem, type UnknownRecord } from './field-problem.js';
import { runSteps, type Steps } from './steps.js';

const DATA_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const SECRET_TYPE = /^[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$/;
export const MAX_SIZE = 1024 * 1024;
/** Keys checked in one step: a template may hold tens of thousands (each a pattern test, and its value's too). */
const KEYS_PER_STEP = 2_048;

/** Keys a Secret of a well-known type must have (as the API server validates them). */
const REQUIRED_KEYS: Record<string, { anyOf: string[] } | { allOf: string[] }> = {
  'kubernetes.io/dockercfg': { allOf: ['.dockercfg'] },
  'kubernetes.io/dockerconfigjson': { allOf: ['.dockerconfigjson'] },
  'kubernetes.io/basic-auth': { anyOf: ['username', 'password'] },
  'kubernetes.io/ssh-auth': { allOf: ['ssh-privatekey'] },
  'kubernetes.io/tls': { allOf: ['tls.crt', 'tls.key'] },
};
const JSON_KEYS = ['.dockercfg', '.dockerconfigjson'];

// Go's base64 decoder skips line breaks, so a wrapped value is valid for the API server too.
function unwrap(value: string): string {
  return value.replace(/[\r\n]/g, '');
}

function isBase64(value: string): boolean {
  return BASE64.test(unwrap(value));
}

function decode(value: string): string {
  return Buffer.from(unwrap(value), 'base64').toString('utf8');
}

function decodedLength(value: string): number {
  const plain = unwrap(value);
  const padding = plain.endsWith('==') ? 2 : plain.endsWith('=') ? 1 : 0;
  return (plain.length / 4) * 3 - padding;
}

/** What is wrong with one key of a data map, if anything. */
function keyProblem(key: string): string | undefined {
  if (key.length <= 253 && DATA_KEY.test(key) && key !== '.' && key !== '..' && !key.startsWith('..')) return undefined;
  return `${quote(key)} is not a valid key (letters, digits, '-', '_' and '.', at most 253 characters)`;
}

/** What is wrong with one value, if anything; `undefined` for a good one. */
function valueProblem(item: unknown, base64: boolean): string | undefined {
  if (typeof item !== 'string') return 'must be a string';
  return base64 && !isBase64(item) ? 'is not valid base64 (standard alphabet, padded)' : undefined;
}

interface MapRule {
  field: string;
  base64: boolean;
}

/** Checks one data-like map; returns its problems and the size of its values in bytes (decoded), as the API server counts it. */
function* checkMap(resource: UnknownRecord, rule: MapRule): Steps<{ problems: FieldProblem[]; size: number }> {
  const base = `spec.resource.${rule.field}`;
  const value = resource[rule.field];
  if (value === undefined || value === null) return { problems: [], size: 0 };
  const map = asRecord(value);
  if (map === undefined) return { problems: [{ path: base, message: 'must be a map of key to string' }], size: 0 };
  const problems: FieldProblem[] = [];
  let size = 0;
  let checked = 0;
  // A map may hold tens of thousands of keys: paths are built only for the ones with a problem.
  for (const [key, item] of Object.entries(map)) {
    if (++checked % KEYS_PER_STEP === 0) yield;
    const badKey = keyProblem(key);
    if (badKey !== undefined) problems.push({ path: keyPath(base, key), message: badKey });
    const badValue = valueProblem(item, rule.base64);
    if (badValue !== undefined) problems.push({ path: keyPath(base, key), message: badValue });
    else size += rule.base64 ? decodedLength(item as string) : Buffer.byteLength(item as string, 'utf8');
  }
  return { problems, size };
}

function checkSize(kind: string, size: number): FieldProblem[] {
  if (size <= MAX_SIZE) return [];
  return [{ path: 'spec.resource', message: `the ${kind} holds ${size} bytes, over the 1 MiB (${MAX_SIZE} bytes) limit: split it` }];
}

function notAField(resource: UnknownRecord, field: string, kind: string, instead: string): FieldProblem[] {
  if (resource[field] === undefined) return [];
  return [{ path: `spec.resource.${field}`, message: `a ${kind} has no ${field}: use ${instead}` }];
}

function mapKeys(resource: UnknownRecord, field: string): string[] {
  return Object.keys(asRecord(resource[field]) ?? {});
}

/**
 * The keys a Secret of `type` lacks (`has` says which it holds), as a message's words
 * (`"tls.key"`, or `"username" or "password"`); undefined when it has what its type requires.
 */
export function missingTypeKeys(type: string, has: (key: string) => boolean): string | undefined {
  const rule = REQUIRED_KEYS[type];
  if (rule === undefined) return undefined;
  if ('allOf' in rule) {
    const missing = rule.allOf.filter((k) => !has(k));
    return missing.length === 0 ? undefined : missing.map((k) => quote(k)).join(' and ');
  }
  return rule.anyOf.some(has) ? undefined : rule.anyOf.map((k) => quote(k)).join(' or ');
}

function checkTypeKeys(resource: UnknownRecord, type: string): FieldProblem[] {
  const keys = new Set([...mapKeys(resource, 'data'), ...mapKeys(resource, 'stringData')]);
  const missing = missingTypeKeys(type, (key) => keys.has(key));
  if (missing === undefined) return [];
  return [{ path: 'spec.resource.data', message: `a Secret of type ${quote(type)} needs the key ${missing}` }];
}

function checkJsonValues(resource: UnknownRecord): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const key of JSON_KEYS) {
    const encoded = asString(asRecord(resource.data)?.[key]);
    const plain = asString(asRecord(resource.stringData)?.[key]);
    const decoded = encoded !== undefined && isBase64(encoded) ? decode(encoded) : undefined;
    const text = plain ?? decoded;
    if (text === undefined) continue;
    try {
      JSON.parse(text);
    } catch {
      const field = plain !== undefined ? 'stringData' : 'data';
      problems.push({ path: keyPath(`spec.resource.${field}`, key), message: 'must hold valid JSON (a Docker config file)' });
    }
  }
  return problems;
}

/** What is wrong with `raw` as the type of a distributed Secret, if anything. */
export function secretTypeProblem(raw: unknown): string | undefined {
  const type = asString(raw);
  if (type === undefined || type.length > 253 || !SECRET_TYPE.test(type)) return `${quote(raw)} is not a valid Secret type (e.g. Opaque or kubernetes.io/tls)`;
  return isForbiddenSecretType(type) ? `Secrets of type ${quote(type)} are never distributed: they belong to one namespace or tool` : undefined;
}

function checkSecretType(resource: UnknownRecord): FieldProblem[] {
  const raw = resource.type;
  if (raw === undefined) return [];
  const problem = secretTypeProblem(raw);
  if (problem !== undefined) return [{ path: 'spec.resource.type', message: problem }];
  const type = raw as string;
  return [...checkTypeKeys(resource, type), ...checkJsonValues(resource)];
}

function* checkSecret(resource: UnknownRecord): Steps<FieldProblem[]> {
  const data = yield* checkMap(resource, { field: 'data', base64: true });
  const stringData = yield* checkMap(resource, { field: 'stringData', base64: false });
  yield;
  // A key in both counts once: stringData replaces it. (A set: a crafted Secret with many shared
  // keys must cost linear time, not keys squared.)
  const dataKeys = new Set(mapKeys(resource, 'data'));
  const overridden = mapKeys(resource, 'stringData').filter((k) => dataKeys.has(k));
  const dataMap = asRecord(resource.data) ?? {};
  const shadowed = overridden.reduce((sum, k) => sum + (typeof dataMap[k] === 'string' ? decodedLength(dataMap[k]) : 0), 0);
  return [
    ...data.problems,
    ...stringData.problems,
    ...notAField(resource, 'binaryData', 'Secret', 'data (values are base64 already)'),
    ...checkSecretType(resource),
    ...checkSize('Secret', data.size + stringData.size - shadowed),
  ];
}

function* checkConfigMap(resource: UnknownRecord): Steps<FieldProblem[]> {
  const data = yield* checkMap(resource, { field: 'data', base64: false });
  const binary = yield* checkMap(resource, { field: 'binaryData', base64: true });
  yield;
  const dataKeys = new Set(mapKeys(resource, 'data'));
  const both = mapKeys(resource, 'binaryData').filter((key) => dataKeys.has(key));
  return [
    ...data.problems,
    ...binary.problems,
    ...both.map((key) => ({
      path: keyPath('spec.resource.binaryData', key),
      message: `${quote(key)} is also in data: a key may be in only one`,
    })),
    ...notAField(resource, 'stringData', 'ConfigMap', 'data (plain strings)'),
    ...notAField(resource, 'type', 'ConfigMap', 'a Secret if you need a type'),
    ...checkSize('ConfigMap', data.size + binary.size),
  ];
}

/** Content rules for a resource already known to be a v1 Secret or ConfigMap, pausing every KEYS_PER_STEP keys. */
export function* contentValidation(resource: UnknownRecord, kind: 'Secret' | 'ConfigMap'): Steps<FieldProblem[]> {
  const immutable =
    resource.immutable === undefined || typeof resource.immutable === 'boolean'
      ? []
      : [{ path: 'spec.resource.immutable', message: 'must be true or false' }];
  return [...immutable, ...(kind === 'Secret' ? yield* checkSecret(resource) : yield* checkConfigMap(resource))];
}

export function validateContent(resource: UnknownRecord, kind: 'Secret' | 'ConfigMap'): FieldProblem[] {
  return runSteps(contentValidation(resource, kind));
}
