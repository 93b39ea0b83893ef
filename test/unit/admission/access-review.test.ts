import { describe, expect, it } from 'vitest';
import { cachedAccessReviewer, type AccessCheck } from '../../../src/k8s/access-review.js';
import { FakeAccessReviewer } from './review-builder.js';

const check = (overrides: Partial<AccessCheck> = {}): AccessCheck => ({
  subject: { username: 'alice', groups: ['devs', 'system:authenticated'] },
  verb: 'create',
  group: '',
  resource: 'secrets',
  namespace: 'team-a',
  ...overrides,
});

describe('cachedAccessReviewer', () => {
  it('answers a repeated question from the cache until the TTL passes', async () => {
    let now = 1000;
    const inner = new FakeAccessReviewer().grant('alice', ['create'], 'secrets', 'team-a');
    const cached = cachedAccessReviewer(inner, { ttlMs: 10_000, now: () => now });
    expect(await cached.review(check())).toEqual({ allowed: true });
    expect(await cached.review(check())).toEqual({ allowed: true });
    expect(inner.checks).toHaveLength(1);

    now += 10_001;
    await cached.review(check());
    expect(inner.checks).toHaveLength(2);
  });

  it('keys by user, groups (in any order), verb, resource and namespace', async () => {
    const inner = new FakeAccessReviewer();
    const cached = cachedAccessReviewer(inner, { ttlMs: 10_000 });
    await cached.review(check());
    await cached.review(check({ subject: { username: 'alice', groups: ['system:authenticated', 'devs'] } }));
    expect(inner.checks).toHaveLength(1);
    await cached.review(check({ subject: { username: 'alice', groups: ['devs'] } }));
    await cached.review(check({ subject: { username: 'bob', groups: ['devs', 'system:authenticated'] } }));
    await cached.review(check({ verb: 'update' }));
    await cached.review(check({ resource: 'configmaps' }));
    await cached.review(check({ namespace: 'team-b' }));
    expect(inner.checks).toHaveLength(6);
  });

  it('asks once for identical questions in flight', async () => {
    const inner = new FakeAccessReviewer();
    const cached = cachedAccessReviewer(inner, { ttlMs: 10_000 });
    await Promise.all([cached.review(check()), cached.review(check()), cached.review(check())]);
    expect(inner.checks).toHaveLength(1);
  });

  it('does not remember failures', async () => {
    const inner = new FakeAccessReviewer();
    inner.failWith = new Error('unavailable');
    const cached = cachedAccessReviewer(inner, { ttlMs: 10_000 });
    await expect(cached.review(check())).rejects.toThrow('unavailable');
    inner.failWith = undefined;
    expect(await cached.review(check())).toEqual({ allowed: false });
    expect(inner.checks).toHaveLength(2);
  });
});
