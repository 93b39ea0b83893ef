import type { V1SubjectAccessReview } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';
import type { Metrics } from '../metrics.js';
import { DeadlineExceeded } from './deadline.js';
import { describeApiError, TerminalError, TransientError } from './errors.js';
import type { KubeClient } from './kube-client.js';

/** Who asks: the `userInfo` of an admission request. */
export interface Subject {
  username: string;
  uid?: string;
  groups: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}

/** May `subject` do `verb` on `resource` in `namespace`? An empty namespace means every namespace. */
export interface AccessCheck {
  subject: Subject;
  verb: string;
  group: string;
  resource: string;
  namespace: string;
  /** One object only (e.g. `get` on a distribution's source). */
  name?: string;
}

export interface AccessAnswer {
  allowed: boolean;
  /** The authorizer's explanation, when it gave one. */
  reason?: string;
}

/** Answers authorization questions; the admission webhook depends only on this interface. */
export interface AccessReviewer {
  review(check: AccessCheck): Promise<AccessAnswer>;
  /**
   * The answer `review` would give at once from memory, without asking anyone; undefined when it
   * would have to ask (or wait for a question already in flight). Lets a caller whose answers are
   * all remembered decide without a round of promises.
   */
  cached?(check: AccessCheck): AccessAnswer | undefined;
}

function reviewOf(check: AccessCheck): V1SubjectAccessReview {
  const { subject } = check;
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: subject.username,
      uid: subject.uid,
      groups: [...subject.groups],
      extra: subject.extra ? Object.fromEntries(Object.entries(subject.extra).map(([key, values]) => [key, [...values]])) : undefined,
      resourceAttributes: { namespace: check.namespace, verb: check.verb, group: check.group, resource: check.resource, name: check.name },
    },
  };
}

function answerOf(review: V1SubjectAccessReview): AccessAnswer {
  const status = review.status;
  const reason = status?.reason || status?.evaluationError || undefined;
  return { allowed: status?.allowed === true && status.denied !== true, ...(reason ? { reason } : {}) };
}

/** A typed error with the API server's message only: the client's own error carries headers and body. */
function reviewFailure(error: unknown): Error {
  if (error instanceof DeadlineExceeded) return error;
  const info = describeApiError(error);
  const message = `SubjectAccessReview failed (${info.reason}): ${info.message}`;
  return info.transient ? new TransientError(message, info.code) : new TerminalError(message, info.code);
}

/** Below the distribution webhook's deadline, so that a hung call neither outlives it nor stays merged in a cache. */
const REVIEW_TIMEOUT_MS = 3000;

/** Asks the API server with a SubjectAccessReview (authorization.k8s.io/v1). */
export function createAccessReviewer(client: KubeClient, metrics?: Metrics, timeoutMs = REVIEW_TIMEOUT_MS): AccessReviewer {
  return {
    async review(check) {
      metrics?.apiRequests.inc({ verb: 'create', resource: 'subjectaccessreviews' });
      try {
        const review = await client.request<V1SubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          body: reviewOf(check),
          timeoutMs,
        });
        return answerOf(review);
      } catch (error) {
        metrics?.apiErrors.inc({ verb: 'create', code: String(describeApiError(error).code) });
        throw reviewFailure(error);
      }
    },
  };
}

/** Something that knows at once that an answer is yes (the cluster's RBAC, as last seen). */
export interface KnownGrants {
  allows(check: AccessCheck): boolean;
}

const GRANTED: AccessAnswer = { allowed: true, reason: 'granted by RBAC' };

/**
 * Answers yes at once where `grants` knows the answer is yes, and asks `inner` otherwise: an
 * author whom RoleBindings allow in thousands of namespaces costs no review per namespace.
 */
export function grantsFirstAccessReviewer(inner: AccessReviewer, grants: KnownGrants): AccessReviewer {
  return {
    review: (check) => (grants.allows(check) ? Promise.resolve(GRANTED) : inner.review(check)),
    cached: (check) => (grants.allows(check) ? GRANTED : inner.cached?.(check)),
  };
}

export interface AccessCacheOptions {
  ttlMs: number;
  max?: number;
  /** Memory the remembered answers may hold (default 16 MiB); one answer at most a sixteenth of it. */
  maxBytes?: number;
  /** Monotonic milliseconds; injected by tests to expire entries without waiting. */
  now?: () => number;
}

/** What the answers may hold at most: keys (UTF-16, two bytes a character) plus a fixed overhead each. */
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
const ENTRY_OVERHEAD_BYTES = 200;

function cacheKey(check: AccessCheck): string {
  const { subject } = check;
  // Extra carries authentication scopes that can change the answer, so it is part of the key.
  const extra = Object.entries(subject.extra ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify([subject.username, subject.uid ?? '', [...subject.groups].sort(), extra, check.verb, check.group, check.resource, check.namespace, check.name ?? '']);
}

/**
 * Remembers answers (both ways) for a short time and merges identical questions in flight, so a
 * burst of admissions by one user costs one review per namespace and verb. Failures are not kept.
 */
export function cachedAccessReviewer(inner: AccessReviewer, options: AccessCacheOptions): AccessReviewer {
  if (options.ttlMs <= 0) return inner;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const cache = new LRUCache<string, AccessAnswer, AccessCheck>({
    max: options.max ?? 10_000,
    // Bounded by size too: the key holds the user's name, groups and extra as the request gave
    // them, and a few requests with huge ones must not hold hundreds of MiB.
    maxSize: maxBytes,
    maxEntrySize: Math.max(1, Math.floor(maxBytes / 16)),
    sizeCalculation: (_answer, key) => ENTRY_OVERHEAD_BYTES + 2 * key.length,
    ttl: options.ttlMs,
    ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    fetchMethod: (_key, _stale, { context }) => inner.review(context),
  });
  return {
    async review(check) {
      const answer = await cache.fetch(cacheKey(check), { context: check });
      if (answer === undefined) throw new TransientError('access review gave no answer');
      return answer;
    },
    // `get` honours the TTL like `fetch`, and sees nothing of a fetch still in flight.
    cached: (check) => cache.get(cacheKey(check)),
  };
}

/**
 * At most `concurrency` reviews in flight for the whole process; a free slot goes to the waiting
 * user with the fewest reviews in flight, so that one author's (or one forged review's) thousands
 * of questions neither flood the API server nor make everyone else's admissions wait behind them.
 */
export function fairAccessReviewer(inner: AccessReviewer, concurrency: number): AccessReviewer {
  const waiting = new Map<string, (() => void)[]>();
  const inFlight = new Map<string, number>();
  let running = 0;
  const busy = (user: string): number => inFlight.get(user) ?? 0;
  const next = (): string | undefined => {
    let chosen: string | undefined;
    for (const user of waiting.keys()) if (chosen === undefined || busy(user) < busy(chosen)) chosen = user;
    return chosen;
  };
  const pump = (): void => {
    for (let user = next(); running < concurrency && user !== undefined; user = next()) {
      const queue = waiting.get(user) ?? [];
      const start = queue.shift();
      if (queue.length === 0) waiting.delete(user);
      running++;
      inFlight.set(user, busy(user) + 1);
      start?.();
    }
  };
  const done = (user: string): void => {
    running--;
    if (busy(user) <= 1) inFlight.delete(user);
    else inFlight.set(user, busy(user) - 1);
    pump();
  };
  return {
    review: (check) =>
      new Promise<AccessAnswer>((resolve, reject) => {
        const user = check.subject.username;
        const queue = waiting.get(user) ?? [];
        queue.push(() => {
          inner
            .review(check)
            .then(resolve, reject)
            .finally(() => done(user));
        });
        waiting.set(user, queue);
        pump();
      }),
  };
}
