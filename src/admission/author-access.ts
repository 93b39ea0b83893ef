import { mapBounded } from '../bounded.js';
import type { AccessAnswer, AccessCheck, AccessReviewer, Subject } from '../k8s/access-review.js';
import type { RequiredAccess, StoppedTargets } from './required-access.js';
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
function stopLine(who: string, check: AccessCheck, because: StoppedTargets['because']): string {
  if (because === 'source-moved') {
    return `spec.source.namespace: ${who} may not delete ${check.resource} in namespace "${check.namespace}", where the source moves: the source's namespace is never a target, so the copy there would be deleted`;
  }
  const where = check.namespace === '' ? 'in every namespace (the change narrows open-ended targets)' : `in namespace "${check.namespace}"`;
  return `spec.targets: ${who} may not delete ${check.resource} ${where}, where this change stops distributing and would delete the copy`;
}

function deniedLines(
  subject: Subject,
  access: RequiredAccess,
  checks: readonly AccessCheck[],
  answers: readonly (AccessAnswer | undefined)[],
  stops: ReadonlyMap<AccessCheck, StoppedTargets['because']>,
): string[] {
  const who = `user "${subject.username}"`;
  const deniedVerbs = new Map<string, string[]>();
  const lines: string[] = [];
  const stopLines: string[] = [];
  // Questions left unasked once the verdict was known (see `ask`); with no denial among the
  // answers they count as denied, as a question whose answer never came must.
  const denied = answers.some((answer) => answer?.allowed === false);
  let unchecked = 0;
  checks.forEach((check, i) => {
    if (answers[i]?.allowed === true) return;
    if (answers[i] === undefined && denied) {
      unchecked++;
      return;
    }
    if (stops.has(check)) {
      stopLines.push(stopLine(who, check, stops.get(check)));
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
  const more = unchecked > 0 ? [`spec.targets: ${unchecked} more checks were not made once the request was known to be denied`] : [];
  return [...lines, ...denialLines(who, access.resource, deniedVerbs), ...stopped, ...more];
}

/**
 * Asks whether the author may write (access.verbs) the distributed kind everywhere the
 * distribution writes. Returns one denial line per namespace (or one for "every namespace"), empty when allowed.
 * Review failures propagate: the caller answers `errored`, which denies.
 *
 * The cheapest sufficient question first: where many namespaces ask the same verb of the same
 * resource, one cluster-wide review answers them all when the author holds it cluster-wide, and
 * those namespaces are then not even listed as questions. When the reviewer remembers every answer
 * (the usual case: one author, a cache), the lines come back at once rather than as a promise;
 * only the questions it must ask are sent, `parallelism` at a time.
 */
export function missingAccess(
  reviewer: AccessReviewer,
  user: UserInfo,
  access: RequiredAccess,
  signal?: AbortSignal,
  parallelism = 8,
): string[] | Promise<string[]> {
  const subject = subjectOf(user);
  const groups = questionGroups(subject, access);
  const wide = groups.flatMap((group) =>
    group.namespaces.length >= CLUSTER_WIDE_FIRST && !group.namespaces.includes('') ? group.verbs.map((verb) => ({ group, verb })) : [],
  );
  return then(ask(reviewer, wide.map(({ group, verb }) => ({ ...group.question, verb, namespace: '' })), parallelism, signal), (wideAnswers) => {
    const answered = new Set(wide.flatMap(({ group, verb }, i) => (wideAnswers[i]?.allowed === true ? [`${groups.indexOf(group)} ${verb}`] : [])));
    const checks: AccessCheck[] = [];
    const stops = new Map<AccessCheck, StoppedTargets['because']>();
    groups.forEach((group, g) => {
      const verbs = group.verbs.filter((verb) => !answered.has(`${g} ${verb}`));
      if (verbs.length === 0) return;
      for (const namespace of group.namespaces) {
        for (const verb of verbs) {
          const check = { ...group.question, verb, namespace };
          if (group.stop) stops.set(check, group.because);
          checks.push(check);
        }
      }
    });
    return then(ask(reviewer, checks, parallelism, signal), (answers) => deniedLines(subject, access, checks, answers, stops));
  });
}

/** Questions (verbs of a resource, maybe of one named object) asked of several namespaces ('' for every namespace). */
interface QuestionGroup {
  question: Omit<AccessCheck, 'namespace' | 'verb'>;
  verbs: readonly string[];
  namespaces: readonly string[];
  /** Deletions an update causes (their denials read differently). */
  stop: boolean;
  because?: StoppedTargets['because'];
}

/** The questions `access` raises, in the order their denials are told: the source, the writes, the binds, the deletions. */
function questionGroups(subject: Subject, access: RequiredAccess): QuestionGroup[] {
  const namespaces = access.namespaces === 'all' ? [''] : access.namespaces;
  const { group, resource, source, bind } = access;
  const groups: QuestionGroup[] = [];
  if (source !== undefined) groups.push({ question: { subject, group, resource, name: source.name }, verbs: ['get'], namespaces: [source.namespace], stop: false });
  groups.push({ question: { subject, group, resource }, verbs: access.verbs, namespaces, stop: false });
  if (bind !== undefined) groups.push({ question: { subject, group: RBAC_GROUP, resource: bind.resource, name: bind.name }, verbs: ['bind'], namespaces, stop: false });
  for (const stop of access.stops ?? []) {
    const namespaces = stop.namespaces === 'all' ? [''] : stop.namespaces;
    groups.push({ question: { subject, group: stop.group, resource: stop.resource }, verbs: ['delete'], namespaces, stop: true, ...(stop.because ? { because: stop.because } : {}) });
  }
  return groups;
}

/** `fn` of a value that may be a promise: synchronous when it is not. */
function then<T, R>(value: T | Promise<T>, fn: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/** Below this many namespaces asking the same question, asking each is as cheap as asking cluster-wide first. */
const CLUSTER_WIDE_FIRST = 3;

/**
 * The answers to `checks`, at once when the reviewer remembers them all; otherwise the questions
 * it must ask, `parallelism` at a time. Once one is denied the verdict is known: questions stop
 * after enough denials for the message, and those never asked stay undefined.
 */
function ask(reviewer: AccessReviewer, checks: readonly AccessCheck[], parallelism: number, signal?: AbortSignal): (AccessAnswer | undefined)[] | Promise<(AccessAnswer | undefined)[]> {
  const answers = checks.map((check) => reviewer.cached?.(check));
  const unanswered = answers.flatMap((answer, i) => (answer === undefined ? [i] : []));
  if (unanswered.length === 0) return answers;
  const deniedIn = new Set(checks.flatMap((check, i) => (answers[i]?.allowed === false ? [check.namespace] : [])));
  const enough = new AbortController();
  const stop = signal === undefined ? enough.signal : AbortSignal.any([signal, enough.signal]);
  return mapBounded(
    unanswered,
    parallelism,
    async (i) => {
      const check = checks[i] as AccessCheck;
      const answer = await reviewer.review(check);
      if (!answer.allowed && deniedIn.add(check.namespace).size > MAX_DENIED_NAMESPACES) enough.abort();
      return answer;
    },
    stop,
  ).then((asked) => {
    unanswered.forEach((index, i) => (answers[index] = asked[i]));
    return answers;
  });
}
