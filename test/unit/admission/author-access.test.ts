import { describe, expect, it } from 'vitest';
import { missingAccess } from '../../../src/admission/author-access.js';
import type { AccessCheck, AccessReviewer } from '../../../src/k8s/access-review.js';

/** A reviewer that remembers every answer: cluster-wide ones as `wide` says, the others allowed. */
function remembering(wide: boolean): AccessReviewer & { looked: AccessCheck[] } {
  const looked: AccessCheck[] = [];
  return {
    looked,
    review: () => Promise.reject(new Error('every answer is remembered')),
    cached: (check) => {
      looked.push(check);
      return { allowed: check.namespace === '' ? wide : true };
    },
  };
}

describe('missingAccess over many namespaces, every answer remembered', () => {
  const namespaces = Array.from({ length: 10_000 }, (_, i) => `team-${i}`);
  const access = { group: '', resource: 'configmaps', verbs: ['create', 'update'], namespaces };

  it.each([
    { holder: 'cluster-wide', wide: true, looked: 2 },
    { holder: 'per namespace', wide: false, looked: 2 + 20_000 },
  ])('an author who holds the rights $holder: $looked answers looked up, synchronously', ({ wide, looked }) => {
    const reviewer = remembering(wide);
    const refused = missingAccess(reviewer, { username: 'bob' }, access);
    expect(refused).toEqual([]);
    expect(reviewer.looked).toHaveLength(looked);
    expect(reviewer.looked.slice(0, 2).map((check) => `${check.verb} ${check.namespace}`)).toEqual(['create ', 'update ']);
  });

  it('asks per namespace only the verb not held cluster-wide, namespace by namespace', () => {
    const reviewer = remembering(true);
    const mixed: AccessReviewer = { ...reviewer, cached: (check) => (check.verb === 'update' && check.namespace === '' ? { allowed: false } : reviewer.cached?.(check)) };
    expect(missingAccess(mixed, { username: 'bob' }, { ...access, namespaces: ['a', 'b', 'c'] })).toEqual([]);
    expect(reviewer.looked.map((check) => `${check.verb} ${check.namespace}`)).toEqual(['create ', 'update a', 'update b', 'update c']);
  });
});
