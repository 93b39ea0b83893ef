import { authorPatch, authorProblem, expectedAuthor, recordedAuthor, type Author, type AuthorInput } from '../domain/author.js';
import { OBJECT_SYNC_GROUP, OBJECT_SYNC_KIND } from '../domain/object-sync.js';
import { GROUP, KIND } from '../domain/types.js';
import { allowed, denied, type AdmissionRequest, type UserInfo, type Verdict } from './review.js';
import type { Steps } from '../domain/steps.js';
import { loopSlices, whenReady } from '../loop-slices.js';
import { sameSpecSteps } from './same-spec.js';
import type { Webhook } from './webhook-route.js';

function authorOf(user: UserInfo): Author {
  return { username: user.username ?? '', ...(user.uid ? { uid: user.uid } : {}), groups: user.groups ?? [], ...(user.extra ? { extra: user.extra } : {}) };
}

/** Whose authors are recorded: ResourceDistributions and ObjectSyncs. */
function authored(request: AdmissionRequest): boolean {
  const { group, kind } = request.kind;
  return (group === GROUP && kind === KIND) || (group === OBJECT_SYNC_GROUP && kind === OBJECT_SYNC_KIND);
}

/** A CREATE or UPDATE of what records its author. */
function writesAuthored(request: AdmissionRequest): request is AdmissionRequest & { operation: 'CREATE' | 'UPDATE' } {
  return (request.operation === 'CREATE' || request.operation === 'UPDATE') && authored(request);
}

/** Whether a CREATE or UPDATE brings a spec other than the one stored (a CREATE always does), in steps: a spec may list 10,000 names. */
export function* specChangeSteps(request: AdmissionRequest): Steps<boolean> {
  return request.operation !== 'UPDATE' || !(yield* sameSpecSteps(request.object, request.oldObject));
}

/** What a distribution (or ObjectSync) CREATE/UPDATE says about its author; undefined for anything else. */
function authorInput(request: AdmissionRequest, specChanged: boolean): AuthorInput | undefined {
  if (!writesAuthored(request)) return undefined;
  const updating = request.operation === 'UPDATE';
  return {
    operation: request.operation,
    user: authorOf(request.userInfo),
    specChanged,
    ...(updating ? { old: recordedAuthor(request.oldObject) } : {}),
  };
}

/**
 * ResourceDistribution and ObjectSync CREATE/UPDATE (mutating): records who authored the spec, so that the
 * controller can ask later whether that user may still read a source that appeared or changed
 * since. Whatever the request says there is replaced; the validating webhook then refuses any
 * other value, should another mutating webhook change it after us.
 */
export function authorWebhook(slicing: { sliceMs: number; now: () => number }): Webhook {
  return (request): Verdict | Promise<Verdict> => {
    if (!writesAuthored(request)) return allowed();
    return whenReady(loopSlices(slicing.sliceMs, slicing.now).run(specChangeSteps(request)), (specChanged): Verdict => {
      const input = authorInput(request, specChanged);
      const patch = input === undefined ? [] : authorPatch(request.object, expectedAuthor(input));
      return patch.length === 0 ? allowed() : { decision: 'allowed', patch };
    });
  };
}

/**
 * The validating half: a denial when the recorded author is not the one admission records (set
 * or changed by hand, or left out where authors are recorded: `required`); undefined otherwise.
 */
export function authorVerdict(request: AdmissionRequest, required: boolean, specChanged: boolean): Verdict | undefined {
  const input = authorInput(request, specChanged);
  const problem = input === undefined ? undefined : authorProblem({ ...input, recorded: recordedAuthor(request.object), required });
  return problem === undefined ? undefined : denied([problem], 403, 'Forbidden');
}
