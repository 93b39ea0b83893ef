import type { AccessReviewer, Subject } from '../k8s/access-review.js';
import { REQUIRED_VERBS, type RequiredAccess } from './required-access.js';
import type { UserInfo } from './review.js';

export function subjectOf(user: UserInfo): Subject {
  return {
    username: user.username ?? '',
    ...(user.uid ? { uid: user.uid } : {}),
    groups: user.groups ?? [],
    ...(user.extra ? { extra: user.extra } : {}),
  };
}

async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Asks whether the author may create and update the distributed kind everywhere the distribution
 * writes. Returns one denial line per namespace (or one for "every namespace"), empty when allowed.
 * Review failures propagate: the caller answers `errored` and the failurePolicy decides.
 */
export async function missingAccess(reviewer: AccessReviewer, user: UserInfo, access: RequiredAccess, parallelism = 8): Promise<string[]> {
  const subject = subjectOf(user);
  const namespaces = access.namespaces === 'all' ? [''] : access.namespaces;
  const checks = namespaces.flatMap((namespace) => REQUIRED_VERBS.map((verb) => ({ namespace, verb })));
  const answers = await mapBounded(checks, parallelism, (c) =>
    reviewer.review({ subject, verb: c.verb, group: '', resource: access.resource, namespace: c.namespace }),
  );

  const deniedVerbs = new Map<string, string[]>();
  checks.forEach((check, i) => {
    if (answers[i]?.allowed === true) return;
    deniedVerbs.set(check.namespace, [...(deniedVerbs.get(check.namespace) ?? []), check.verb]);
  });

  const who = `user "${subject.username}"`;
  return [...deniedVerbs].map(([namespace, verbs]) =>
    namespace === ''
      ? `spec.targets: ${who} may not ${verbs.join(', ')} ${access.resource} in every namespace (required by allNamespaces or namespaceLabelSelector)`
      : `spec.targets: ${who} may not ${verbs.join(', ')} ${access.resource} in namespace "${namespace}"`,
  );
}
