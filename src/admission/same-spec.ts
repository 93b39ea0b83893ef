import { canonicalJson } from '../domain/hash.js';

/**
 * An UPDATE that leaves the spec as it is: it changes neither what is copied nor where, so it
 * needs no new review (and an object being deleted can always lose its finalizers).
 */
export function sameSpec(object: unknown, oldObject: unknown): boolean {
  const spec = (value: unknown): unknown => (value as { spec?: unknown } | null | undefined)?.spec;
  const next = spec(object);
  return next !== undefined && oldObject !== undefined && canonicalJson(next) === canonicalJson(spec(oldObject) ?? null);
}
