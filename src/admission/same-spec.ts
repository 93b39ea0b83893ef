import { jsonEqualSteps } from '../domain/json-equal.js';
import { runSteps, type Steps } from '../domain/steps.js';

/**
 * An UPDATE that leaves the spec as it is: it changes neither what is copied nor where, so it
 * needs no new review (and an object being deleted can always lose its finalizers).
 */
export function sameSpec(object: unknown, oldObject: unknown): boolean {
  return runSteps(sameSpecSteps(object, oldObject));
}

/**
 * sameSpec in steps. A structural comparison, not a canonical serialization: a label added to a
 * 10,000-name distribution must not cost two sorted encodings of it.
 */
export function* sameSpecSteps(object: unknown, oldObject: unknown): Steps<boolean> {
  const spec = (value: unknown): unknown => (value as { spec?: unknown } | null | undefined)?.spec;
  const next = spec(object);
  return next !== undefined && oldObject !== undefined && (yield* jsonEqualSteps(next, spec(oldObject)));
}
