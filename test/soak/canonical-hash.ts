// The hashcode annotation's promised value (README: "sha256 of spec.resource (the value OpenKruise
// writes for the same resource)"): the template serialized as the API server's Go encoder does,
// object keys sorted, no whitespace, <, >, &, U+2028 and U+2029 escaped.
import { createHash } from 'node:crypto';

const GO_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

function encode(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(encode).join(',')}]`;
  if (typeof value === 'string') return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => GO_ESCAPES[c] ?? c);
  if (typeof value !== 'object') return JSON.stringify(value);
  const keys = Object.keys(value)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${encode(key)}:${encode((value as Record<string, unknown>)[key])}`).join(',')}}`;
}

export function templateHash(template: unknown): string {
  return createHash('sha256').update(encode(template), 'utf8').digest('hex');
}
