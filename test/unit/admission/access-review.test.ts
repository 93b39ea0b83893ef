import { createServer, type AddressInfo, type Socket } from 'node:net';
import { createKubeClient, type KubeClient } from '../../../src/k8s/kube-client.js';
import { describe, expect, it } from 'vitest';
import { cachedAccessReviewer, createAccessReviewer, fairAccessReviewer, grantsFirstAccessReviewer, type AccessCheck } from '../../../src/k8s/access-review.js';
import { DeadlineExceeded } from '../../../src/k8s/deadline.js';
import { TransientError } from '../../../src/k8s/errors.js';
import { FakeAccessReviewer } from './review-builder.js';

const check = (overrides: Partial<AccessCheck> = {}): AccessCheck => ({
  subject: { username: 'alice', groups: ['devs', 'system:authenticated'] },
  verb: 'create',
  group: '',
  resource: 'secrets',
  namespace: 'team-a',
  ...overrides,
});

describe('grantsFirstAccessReviewer', () => {
  it.each([
    ['granted: yes at once, nothing asked', true, true, 0],
    ['not granted: asked, and the answer is the API server\'s', false, false, 1],
  ])('%s', async (_what, granted, allowed, asked) => {
    const inner = new FakeAccessReviewer();
    const reviewer = grantsFirstAccessReviewer(inner, { allows: () => granted });
    expect((await reviewer.review(check())).allowed).toBe(allowed);
    expect(reviewer.cached?.(check())?.allowed).toBe(granted ? true : undefined);
    expect(inner.checks).toHaveLength(asked);
  });
});

describe('cachedAccessReviewer', () => {
  // 150 requests with 1 MiB user names once held 303 MiB: the cache is bounded by size as well.
  it.each([
    { what: 'forgets the oldest answers once their keys fill maxBytes', name: 'x'.repeat(20_000), count: 30, firstAskedAgain: true },
    { what: 'never keeps an answer whose key alone is over a sixteenth of maxBytes', name: 'x'.repeat(40_000), count: 1, firstAskedAgain: true },
    { what: 'keeps small answers', name: 'alice', count: 20, firstAskedAgain: false },
  ])('$what', async ({ name, count, firstAskedAgain }) => {
    const inner = new FakeAccessReviewer();
    const cached = cachedAccessReviewer(inner, { ttlMs: 60_000, maxBytes: 1_000_000 });
    for (let i = 0; i < count; i++) await cached.review(check({ subject: { username: `${name}-${i}`, groups: [] } }));
    const asked = inner.checks.length;
    await cached.review(check({ subject: { username: `${name}-0`, groups: [] } }));
    expect(inner.checks.length - asked).toBe(firstAskedAgain ? 1 : 0);
  });


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

function clientFor(server: string): KubeClient {
  return createKubeClient({ server, insecure: true, authorization: () => Promise.resolve('Bearer t') }, { maxConnections: 2, timeoutMs: 30_000 });
}

describe('createAccessReviewer', () => {
  it('gives up on an API server that never answers, and the cache asks again next time', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const reviewer = createAccessReviewer(clientFor(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`), undefined, 100);
      let calls = 0;
      const cached = cachedAccessReviewer({ review: (c) => (calls++, reviewer.review(c)) }, { ttlMs: 10_000 });
      await expect(cached.review(check())).rejects.toBeInstanceOf(DeadlineExceeded);
      await expect(cached.review(check())).rejects.toBeInstanceOf(TransientError);
      expect(calls).toBe(2);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('turns an unreachable API server into a transient error', async () => {
    const error: unknown = await createAccessReviewer(clientFor('https://127.0.0.1:1')).review(check()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as Error).message).toMatch(/^SubjectAccessReview failed \(ECONNREFUSED\)/);
  });
});

describe('fairAccessReviewer', () => {
  /** An inner reviewer whose answers wait until released, recording the order questions reach it. */
  function held(): { inner: { review: (c: AccessCheck) => Promise<{ allowed: boolean }> }; asked: string[]; inFlight: () => number; releaseAll: () => void } {
    const asked: string[] = [];
    const pending: (() => void)[] = [];
    return {
      inner: {
        review: (c) =>
          new Promise((resolve) => {
            asked.push(`${c.subject.username}:${c.namespace}`);
            pending.push(() => resolve({ allowed: true }));
          }),
      },
      asked,
      inFlight: () => pending.length,
      releaseAll: () => pending.splice(0).forEach((release) => release()),
    };
  }

  it('keeps at most `concurrency` reviews in flight, and takes waiting users in turn', async () => {
    const { inner, asked, inFlight, releaseAll } = held();
    const fair = fairAccessReviewer(inner, 2);
    const mallory = Array.from({ length: 6 }, (_, i) => fair.review(check({ subject: { username: 'mallory', groups: [] }, namespace: `m-${i}` })));
    const bob = fair.review(check({ subject: { username: 'bob', groups: [] }, namespace: 'b-0' }));
    expect(inFlight()).toBe(2);
    expect(asked).toEqual(['mallory:m-0', 'mallory:m-1']);
    releaseAll();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // bob's one question goes before the rest of mallory's many.
    expect(asked.slice(2, 4)).toEqual(['bob:b-0', 'mallory:m-2']);
    for (let i = 0; i < 5; i++) {
      releaseAll();
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    await expect(Promise.all([...mallory, bob])).resolves.toHaveLength(7);
    expect(asked).toHaveLength(7);
  });
});
