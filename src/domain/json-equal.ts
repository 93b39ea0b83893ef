// Structural equality of JSON values (what a decoded admission review holds: objects, arrays,
// strings, numbers, booleans, null), key order ignored, without recursion and in steps: two specs
// of 10,000 names each, or templates of tens of thousands of keys, compare in milliseconds that
// admission spreads over turns of the event loop.
import { runSteps, type Steps } from './steps.js';

/** Pairs of values compared in one step. */
const PAIRS_PER_STEP = 4_096;

export function jsonEqual(a: unknown, b: unknown): boolean {
  return runSteps(jsonEqualSteps(a, b));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether two values hold the same, and the pairs of their children to compare next. */
function shallowEqual(a: unknown, b: unknown, pending: [unknown, unknown][]): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) pending.push([a[i], b[i]]);
    return true;
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    pending.push([a[key], b[key]]);
  }
  return true;
}

/** jsonEqual, pausing after every PAIRS_PER_STEP pairs compared; it stops at the first difference. */
export function* jsonEqualSteps(a: unknown, b: unknown): Steps<boolean> {
  const pending: [unknown, unknown][] = [[a, b]];
  let compared = 0;
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (!shallowEqual(next[0], next[1], pending)) return false;
    if (++compared % PAIRS_PER_STEP === 0) yield;
  }
  return true;
}
