import { isDeepStrictEqual } from 'node:util';

/**
 * An UPDATE that leaves the spec as it is: it changes neither what is copied nor where, so it
 * needs no new review (and an object being deleted can always lose its finalizers).
 */
export function sameSpec(object: unknown, oldObject: unknown): boolean {
  const spec = (value: unknown): unknown => (value as { spec?: unknown } | null | undefined)?.spec;
  const next = spec(object);
  // A structural comparison, not a canonical serialization: a label added to a 10,000-name distribution
  // must not cost two sorted encodings of it.
  return next !== undefined && oldObject !== undefined && isDeepStrictEqual(next, spec(oldObject));
}
