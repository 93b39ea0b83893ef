import { authorPatch, authorProblem, expectedAuthor, recordedAuthor, type Author, type AuthorInput } from '../domain/author.js';
import { OBJECT_SYNC_GROUP, OBJECT_SYNC_KIND } from '../domain/object-sync.js';
import { GROUP, KIND } from '../domain/types.js';
import { allowed, denied, type AdmissionRequest, type UserInfo, type Verdict } from './review.js';
import { sameSpec } from './same-spec.js';
import type { Webhook } from './webhook-route.js';

function authorOf(user: UserInfo): Author {
  return { username: user.username ?? '', ...(user.uid ? { uid: user.uid } : {}), groups: user.groups ?? [], ...(user.extra ? { extra: user.extra } : {}) };
}

/** Whose authors are recorded: ResourceDistributions and ObjectSyncs. */
function authored(request: AdmissionRequest): boolean {
  const { group, kind } = request.kind;
  return (group === GROUP && kind === KIND) || (group === OBJECT_SYNC_GROUP && kind === OBJECT_SYNC_KIND);
}

/** What a distribution (or ObjectSync) CREATE/UPDATE says about its author; undefined for anything else. */
function authorInput(request: AdmissionRequest): AuthorInput | undefined {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return undefined;
  if (!authored(request)) return undefined;
  const updating = request.operation === 'UPDATE';
  return {
    operation: request.operation,
    user: authorOf(request.userInfo),
    specChanged: !updating || !sameSpec(request.object, request.oldObject),
    ...(updating ? { old: recordedAuthor(request.oldObject) } : {}),
  };
}

/**
 * ResourceDistribution and ObjectSync CREATE/UPDATE (mutating): records who authored the spec, so that the
 * controller can ask later whether that user may still read a source that appeared or changed
 * since. Whatever the request says there is replaced; the validating webhook then refuses any
 * other value, should another mutating webhook change it after us.
 */
export function authorWebhook(): Webhook {
  return (request): Verdict => {
    const input = authorInput(request);
    if (input === undefined) return allowed();
    const patch = authorPatch(request.object, expectedAuthor(input));
    return patch.length === 0 ? allowed() : { decision: 'allowed', patch };
  };
}

/**
 * The validating half: a denial when the recorded author is not the one admission records (set
 * or changed by hand, or left out where authors are recorded: `required`); undefined otherwise.
 */
export function authorVerdict(request: AdmissionRequest, required: boolean): Verdict | undefined {
  const input = authorInput(request);
  const problem = input === undefined ? undefined : authorProblem({ ...input, recorded: recordedAuthor(request.object), required });
  return problem === undefined ? undefined : denied([problem], 403, 'Forbidden');
}
