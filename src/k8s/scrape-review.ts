// Who a bearer token is, and whether that user may read /metrics: a TokenReview, then (for an
// authenticated user) a SubjectAccessReview for `get` on the non-resource URL, as the API server
// itself and controller-runtime's metrics filter decide. The token goes to the API server only.
import type { V1SubjectAccessReview, V1TokenReview } from '@kubernetes/client-node';
import type { Metrics } from '../metrics.js';
import { describeApiError, TransientError } from './errors.js';
import type { KubeClient } from './kube-client.js';

/** 200: may read; 401: a token the API server does not accept; 403: a user without `get` on the path. */
export type ReviewedVerdict = 200 | 401 | 403;

export interface ScrapeReviewer {
  /** Rejects with a TransientError (the API server's message only) when the API server could not answer. */
  review(token: string): Promise<ReviewedVerdict>;
}

export interface ScrapeReviewerOptions {
  /** The non-resource URL the user must be allowed to `get`. */
  path: string;
  metrics?: Pick<Metrics, 'apiRequests' | 'apiErrors'>;
  timeoutMs?: number;
}

/** Well below Prometheus's default scrape timeout (10 s). */
const TIMEOUT_MS = 3000;

export function createScrapeReviewer(client: KubeClient, options: ScrapeReviewerOptions): ScrapeReviewer {
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  async function create<T>(resource: 'tokenreviews' | 'subjectaccessreviews', group: string, body: object): Promise<T> {
    options.metrics?.apiRequests.inc({ verb: 'create', resource });
    try {
      return await client.request<T>('POST', `/apis/${group}/v1/${resource}`, { body, timeoutMs });
    } catch (error) {
      // The client's own error carries the request body, token included: only the API server's message goes on.
      const info = describeApiError(error);
      options.metrics?.apiErrors.inc({ verb: 'create', code: String(info.code) });
      throw new TransientError(`${resource} failed (${info.reason}): ${info.message}`, info.code);
    }
  }
  return {
    async review(token) {
      const review = await create<V1TokenReview>('tokenreviews', 'authentication.k8s.io', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
      const user = review.status?.user;
      if (review.status?.authenticated !== true || user === undefined) return 401;
      const access = await create<V1SubjectAccessReview>('subjectaccessreviews', 'authorization.k8s.io', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path: options.path, verb: 'get' } },
      });
      return access.status?.allowed === true && access.status.denied !== true ? 200 : 403;
    },
  };
}
