// The hash written to every copy. It must equal what OpenKruise writes for the same template:
// sha256 of spec.resource as the API server (Go encoding/json) serializes it.
import { createHash } from 'node:crypto';
import type { Resource } from './types.js';

// Go's encoder escapes these for safe embedding in HTML/JS; JSON.stringify does not.
const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Anything the slow path below would change: templates are mostly plain base64, and can be 1 MiB. */
const SPECIAL = /[\uD800-\uDFFF<>&\u2028\u2029]/;

function encodeString(value: string): string {
  if (!SPECIAL.test(value)) return JSON.stringify(value);
  // Go decodes a lone surrogate as U+FFFD, so that is what it would serialize.
  const wellFormed = value.replace(LONE_SURROGATE, '\uFFFD');
  return JSON.stringify(wellFormed).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? c);
}

const isSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdfff;

/** Code point by code point; a lone surrogate counts as its own value. */
function compareByCodePoint(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    const difference = (left[i]?.codePointAt(0) ?? 0) - (right[i]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

/**
 * Go sorts map keys by their UTF-8 bytes, which is code-point order. That is UTF-16 order unless
 * the strings first differ at a surrogate (half of a code point above U+FFFF): only then are
 * they compared code point by code point.
 */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const left = a.charCodeAt(i);
    const right = b.charCodeAt(i);
    if (left === right) continue;
    return isSurrogate(left) || isSurrogate(right) ? compareByCodePoint(a, b) : left - right;
  }
  return a.length - b.length;
}

function encodeNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`cannot serialize ${String(value)} as JSON`);
  return JSON.stringify(value);
}

function encodeObject(value: object): string {
  const entries = Object.entries(value)
    .filter(([, item]) => item !== undefined && typeof item !== 'function')
    .sort(([a], [b]) => compareCodePoints(a, b));
  return `{${entries.map(([key, item]) => `${encodeString(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** JSON with object keys sorted recursively, no whitespace, and Go's HTML-safe escapes. */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item)).join(',')}]`;
  switch (typeof value) {
    case 'string':
      return encodeString(value);
    case 'number':
      return encodeNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object':
      return encodeObject(value);
    default:
      return 'null';
  }
}

/** sha256 hex of the canonical JSON of the template (spec.resource). */
export function hashResource(resource: Resource): string {
  return createHash('sha256').update(canonicalJson(resource), 'utf8').digest('hex');
}

const hashes = new WeakMap<Resource, string>();

/**
 * hashResource, remembered per template object: templates are immutable once cached (a change
 * brings a new object), and a pod admission must not hash a 1 MiB template every time.
 */
export function templateHash(resource: Resource): string {
  let hash = hashes.get(resource);
  if (hash === undefined) {
    hash = hashResource(resource);
    hashes.set(resource, hash);
  }
  return hash;
}
