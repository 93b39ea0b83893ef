// Who may read /metrics: the bearer token's user, authenticated with a TokenReview and authorized
// with a SubjectAccessReview for `get` on the non-resource URL /metrics (as the API server itself
// and controller-runtime's metrics filter do). Answers are remembered briefly per token hash; the
// token itself is never kept or logged.
import { createHash } from 'node:crypto';
import type { V1SubjectAccessReview, V1TokenReview } from '@kubernetes/client-node';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../log.js';
import { describeApiError } from './errors.js';
import type { KubeClient } from './kube-client.js';

/**
 * 200: allowed; 401: no token, or one the API server does not accept; 403: a user without `get`
 * on /metrics; 503: the API server could not be asked (not remembered).
 */
export type ScrapeVerdict = 200 | 401 | 403 | 503;

export interface ScrapeAccess {
  check(authorization: string | undefined): Promise<ScrapeVerdict>;
}

const TIMEOUT_MS = 3000;

export function createScrapeAccess(client: KubeClient, options: { ttlMs: number; log: Logger; path?: string }): ScrapeAccess {
  const path = options.path ?? '/metrics';
  const cache = new LRUCache<string, ScrapeVerdict>({ max: 1000, ttl: Math.max(1, options.ttlMs) });

  async function decide(token: string): Promise<ScrapeVerdict> {
    const review = await client.request<V1TokenReview>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      timeoutMs: TIMEOUT_MS,
    });
    const user = review.status?.user;
    if (review.status?.authenticated !== true || user === undefined) return 401;
    const access = await client.request<V1SubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb: 'get' } },
      },
      timeoutMs: TIMEOUT_MS,
    });
    return access.status?.allowed === true && access.status.denied !== true ? 200 : 403;
  }

  return {
    async check(authorization) {
      const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
      if (token === undefined) return 401;
      const key = createHash('sha256').update(token).digest('hex');
      const known = cache.get(key);
      if (known !== undefined) return known;
      try {
        const verdict = await decide(token);
        cache.set(key, verdict);
        return verdict;
      } catch (error) {
        // The client's own error carries the request body, token included: only the API server's message goes on.
        options.log.warn({ err: describeApiError(error).message }, 'metrics scrape could not be authorized');
        return 503;
      }
    },
  };
}
