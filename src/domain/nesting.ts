// How deeply a value nests, measured without recursion: an object nested thousands of levels deep
// must cost a denial, not the stack (structured clones, deep comparisons and serialisations of it
// overflow the stack further on).
import { runSteps, type Steps } from './steps.js';

/**
 * Templates nest at most this many levels (the template object itself is the first). A Kubernetes
 * object needs far fewer: a Deployment's deepest field (an anti-affinity's match expression
 * values) is 13 levels down, and the managedFields a pasted `kubectl get -o yaml` brings along
 * about 18. The API server itself accepts up to 10,000.
 */
export const MAX_TEMPLATE_DEPTH = 64;

/** Values looked at in one step: a template may hold tens of thousands (the keys of a large Secret). */
const VALUES_PER_STEP = 4_096;

/**
 * The depth of `value` (a scalar 0, `{}` or `[]` 1, `{a: {}}` 2, ...), or `limit + 1` as soon as it
 * is known to be deeper than `limit`. Each value is visited at most once; nothing recurses.
 */
export function nestingDepth(value: unknown, limit: number): number {
  return runSteps(nestingDepthSteps(value, limit));
}

/** nestingDepth, pausing once it has looked at VALUES_PER_STEP values since the last pause. */
export function* nestingDepthSteps(value: unknown, limit: number): Steps<number> {
  let deepest = 0;
  let looked = 0;
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > limit) return limit + 1;
    if (depth > deepest) deepest = depth;
    const children = Object.values(next.value);
    for (const child of children) if (typeof child === 'object' && child !== null) pending.push({ value: child, depth });
    looked += children.length;
    if (looked >= VALUES_PER_STEP) {
      looked = 0;
      yield;
    }
  }
  return deepest;
}

/** Whether `value` nests more than `limit` levels. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  return nestingDepth(value, limit) > limit;
}
