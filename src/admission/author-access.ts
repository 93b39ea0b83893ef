import { mapBounded } from '../bounded.js';
import type { AccessAnswer, AccessCheck, AccessReviewer, Subject } from '../k8s/access-review.js';
import type { RequiredAccess } from './required-access.js';
import type { UserInfo } from './review.js';

/** Denial lines name at most this many namespaces; one more line counts the rest. */
const MAX_DENIED_NAMESPACES = 10;
const RBAC_GROUP = 'rbac.authorization.k8s.io';

function subjectOf(user: UserInfo): Subject {
  return {
    username: user.username ?? '',
    ...(user.uid ? { uid: user.uid } : {}),
    groups: user.groups ?? [],
    ...(user.extra ? { extra: user.extra } : {}),
  };
}

function denialLines(who: string, resource: string, denied: ReadonlyMap<string, string[]>): string[] {
  const lines = [...denied].slice(0, MAX_DENIED_NAMESPACES).map(([namespace, verbs]) =>
    namespace === ''
      ? `spec.targets: ${who} may not ${verbs.join(', ')} ${resource} in every namespace (required by allNamespaces or namespaceLabelSelector)`
      : `spec.targets: ${who} may not ${verbs.join(', ')} ${resource} in namespace "${namespace}"`,
  );
  const rest = denied.size - lines.length;
  return rest > 0 ? [...lines, `spec.targets: ${who} may not write ${resource} in ${rest} more target namespaces`] : lines;
}

/** A namespace a change stops targeting: its copy there would be deleted. */
function stopLine(who: string, check: AccessCheck): string {
  const where = check.namespace === '' ? 'in every namespace (the change narrows open-ended targets)' : `in namespace "${check.namespace}"`;
  return `spec.targets: ${who} may not delete ${check.resource} ${where}, where this change stops distributing and would delete the copy`;
}

function deniedLines(
  subject: Subject,
  access: RequiredAccess,
  checks: readonly AccessCheck[],
  answers: readonly (AccessAnswer | undefined)[],
  stops: ReadonlySet<AccessCheck>,
): string[] {
  const who = `user "${subject.username}"`;
  const deniedVerbs = new Map<string, string[]>();
  const lines: string[] = [];
  const stopLines: string[] = [];
  checks.forEach((check, i) => {
    if (answers[i]?.allowed === true) return;
    if (stops.has(check)) {
      stopLines.push(stopLine(who, check));
      return;
    }
    if (check.verb === 'bind') {
      const where = check.namespace === '' ? 'in every namespace' : `in namespace "${check.namespace}"`;
      lines.push(`spec.resource.roleRef: ${who} may not bind ${check.resource} "${check.name}" ${where}`);
      return;
    }
    if (check.name !== undefined) {
      lines.push(`spec.source: ${who} may not get ${check.resource} "${check.name}" in namespace "${check.namespace}"`);
      return;
    }
    deniedVerbs.set(check.namespace, [...(deniedVerbs.get(check.namespace) ?? []), check.verb]);
  });
  const rest = stopLines.length - MAX_DENIED_NAMESPACES;
  const stopped = rest > 0 ? [...stopLines.slice(0, MAX_DENIED_NAMESPACES), `spec.targets: ${who} may not delete copies in ${rest} more namespaces this change stops distributing to`] : stopLines;
  return [...lines, ...denialLines(who, access.resource, deniedVerbs), ...stopped];
}

/**
 * Asks whether the author may write (access.verbs) the distributed kind everywhere the
 * distribution writes. Returns one denial line per namespace (or one for "every namespace"), empty when allowed.
 * Review failures propagate: the caller answers `errored`, which denies.
 *
 * When the reviewer remembers every answer (the usual case: one author, a cache), the lines come
 * back at once rather than as a promise; only the questions it must ask are sent, `parallelism`
 * at a time.
 */
export function missingAccess(
  reviewer: AccessReviewer,
  user: UserInfo,
  access: RequiredAccess,
  signal?: AbortSignal,
  parallelism = 8,
): string[] | Promise<string[]> {
  const subject = subjectOf(user);
  const namespaces = access.namespaces === 'all' ? [''] : access.namespaces;
  const { group, resource, source, bind } = access;
  const checks: AccessCheck[] = namespaces.flatMap((namespace) => access.verbs.map((verb) => ({ subject, verb, group, resource, namespace })));
  if (source !== undefined) checks.unshift({ subject, verb: 'get', group, resource, namespace: source.namespace, name: source.name });
  if (bind !== undefined) {
    checks.push(...namespaces.map((namespace) => ({ subject, verb: 'bind', group: RBAC_GROUP, resource: bind.resource, namespace, name: bind.name })));
  }
  const stops = new Set<AccessCheck>();
  for (const stop of access.stops ?? []) {
    for (const namespace of stop.namespaces === 'all' ? [''] : stop.namespaces) {
      const check = { subject, verb: 'delete', group: stop.group, resource: stop.resource, namespace };
      stops.add(check);
      checks.push(check);
    }
  }
  const answers = checks.map((check) => reviewer.cached?.(check));
  const unanswered = answers.flatMap((answer, i) => (answer === undefined ? [i] : []));
  if (unanswered.length === 0) return deniedLines(subject, access, checks, answers, stops);
  return mapBounded(unanswered, parallelism, (i) => reviewer.review(checks[i] as AccessCheck), signal).then((asked) => {
    unanswered.forEach((index, i) => (answers[index] = asked[i]));
    return deniedLines(subject, access, checks, answers, stops);
  });
}
