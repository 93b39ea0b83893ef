// The conversion Service routes to pods that are not ready too: a starting replica's caches wait on
// conversions of distributions stored in the other version, so readiness cannot gate it. It selects
// a label instead, which each replica puts on its own pod once it listens and takes off as it begins
// to stop. A label in the pod template would list a pod from the moment it has an address (before
// its process listens) until the pod object is deleted (after the process stopped listening): the
// API server sends a conversion once, without retry, and the client's request fails with it.
import { describeApiError } from './errors.js';
import type { KubeClient } from './kube-client.js';
import type { Logger } from '../log.js';

/** The label the conversion Service selects. */
export const SERVES_CONVERSION_LABEL = 'resource-distributor.io/serves-conversion';

const MERGE_PATCH = 'application/merge-patch+json';

export interface ConversionMembership {
  /** Labels the pod, retried with backoff until it succeeds (then `onJoined`) or `leave` is called. */
  join(onJoined?: () => void): void;
  /** Stops joining and takes the label off; a failure is logged (the pod is going anyway). */
  leave(): Promise<void>;
  /** Whether the label is on (set, and not taken off since). */
  readonly joined: boolean;
}

export interface ConversionMembershipDeps {
  client: KubeClient;
  namespace: string;
  pod: string;
  log: Logger;
  /** Waits between failed attempts to join: doubling from the first to the last. */
  retryMs?: { first: number; last: number };
  /** A leave that has not answered by then is given up (the shutdown goes on). */
  leaveTimeoutMs?: number;
}

export function conversionMembership(deps: ConversionMembershipDeps): ConversionMembership {
  const { client, log } = deps;
  const path = `/api/v1/namespaces/${encodeURIComponent(deps.namespace)}/pods/${encodeURIComponent(deps.pod)}`;
  const retryMs = deps.retryMs ?? { first: 1_000, last: 30_000 };
  const label = (value: 'true' | null, timeoutMs?: number): Promise<unknown> =>
    client.request('PATCH', path, { body: { metadata: { labels: { [SERVES_CONVERSION_LABEL]: value } } }, contentType: MERGE_PATCH, ...(timeoutMs === undefined ? {} : { timeoutMs }) });

  let leaving = false;
  let joined = false;
  let wake: (() => void) | undefined;
  let joining: Promise<void> | undefined;

  // Cut short by `leave`, also when it came while an attempt was in flight (before this pause began).
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (leaving) return resolve();
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function keepJoining(onJoined: () => void): Promise<void> {
    for (let wait = retryMs.first; !leaving; wait = Math.min(wait * 2, retryMs.last)) {
      try {
        await label('true');
        joined = true;
        log.info({ pod: deps.pod }, 'conversion Service joined');
        onJoined();
        return;
      } catch (error) {
        log.warn({ pod: deps.pod, reason: describeApiError(error).message, retryInMs: wait }, 'conversion Service not joined');
      }
      await pause(wait);
    }
  }

  return {
    get joined() {
      return joined;
    },
    join(onJoined = () => undefined) {
      joining ??= keepJoining(onJoined);
    },
    async leave() {
      leaving = true;
      wake?.();
      // An attempt to join still in flight would label the pod again after the label came off.
      await joining;
      joined = false;
      try {
        await label(null, deps.leaveTimeoutMs ?? 2_000);
        log.info({ pod: deps.pod }, 'conversion Service left');
      } catch (error) {
        log.warn({ pod: deps.pod, reason: describeApiError(error).message }, 'conversion Service not left');
      }
    },
  };
}
