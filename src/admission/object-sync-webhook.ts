import { CORE_REGISTRY, type KindRegistry } from '../domain/kinds.js';
import { distributionsOf, OBJECT_SYNC_GROUP, OBJECT_SYNC_KIND, type ObjectSync } from '../domain/object-sync.js';
import { sourceWarnings, type SourceFound } from '../domain/source.js';
import { runSteps } from '../domain/steps.js';
import type { SourceRef } from '../domain/types.js';
import { validateObjectSync } from '../domain/validate-object-sync.js';
import type { AccessReviewer } from '../k8s/access-review.js';
import { missingAccess } from './author-access.js';
import { authorVerdict, specChangeSteps } from './author-webhook.js';
import { requiredAccess, stoppedTargets, type RequiredAccess, type StoppedTargets } from './required-access.js';
import { allowed, denied, forbidden, type AdmissionRequest, type Verdict } from './review.js';
import type { Webhook } from './webhook-route.js';

export interface ObjectSyncWebhookDeps {
  accessReviewer: AccessReviewer;
  forbiddenNamespaces: readonly string[];
  kinds?: KindRegistry;
  /** The mutating webhook records authors: a new spec without one is refused. */
  recordsAuthors?: boolean;
  /** The source as found, without its data (null: it does not exist; undefined: cannot tell, no warning then). */
  findSource?: (ref: SourceRef) => Promise<SourceFound | undefined>;
}

/** Told only to an author who is allowed, as for a ResourceDistribution: a source that does not exist yet, or is never copied. */
async function sourceWarningsOf(deps: ObjectSyncWebhookDeps, ref: SourceRef | undefined): Promise<string[]> {
  if (ref === undefined || deps.findSource === undefined) return [];
  const found = await deps.findSource(ref).catch(() => undefined);
  return found === undefined ? [] : sourceWarnings(ref, found);
}

/** Lines about a distribution's targets, said of the ObjectSync's field. */
const asDestinations = (line: string): string => line.replace(/^spec\.targets:/, 'spec.destinations:');

/** What the webhook has no say over: other operations and kinds. */
function passes(request: AdmissionRequest): boolean {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return true;
  return request.kind.group !== OBJECT_SYNC_GROUP || request.kind.kind !== OBJECT_SYNC_KIND;
}

/** On CREATE the object has neither namespace (it is the request's) nor uid yet. */
function completed(object: ObjectSync, request: AdmissionRequest): ObjectSync {
  return { ...object, metadata: { ...object.metadata, namespace: object.metadata.namespace ?? request.namespace ?? '', uid: object.metadata.uid ?? 'new' } };
}

/**
 * ObjectSync CREATE/UPDATE: the pure rules, then, as for a ResourceDistribution, whether the author
 * may read the source and write its kind in every destination, and on UPDATE delete it wherever
 * the change stops writing a copy. DELETE and updates that leave the spec as it is (its
 * finalizer going) always pass; an ObjectSync being deleted is checked like any other.
 */
export function objectSyncWebhook(deps: ObjectSyncWebhookDeps): Webhook {
  const kinds = deps.kinds ?? CORE_REGISTRY;
  return (request, abandoned): Verdict | Promise<Verdict> => {
    if (passes(request)) return allowed();
    // Before the rest: an update that leaves the spec needs no review, but may not rename the author.
    // An ObjectSync's spec is small (see the CRD's bounds): compared at once.
    const specChanged = runSteps(specChangeSteps(request));
    const forged = authorVerdict(request, deps.recordsAuthors === true, specChanged);
    if (forged !== undefined) return forged;
    if (!specChanged) return allowed();
    const object = request.object as ObjectSync;
    const problems = validateObjectSync(object, kinds);
    if (problems.length > 0) return denied(problems.map((p) => `${p.path}: ${p.message}`));

    const next = distributionsOf(completed(object, request), kinds);
    const previous = request.operation === 'UPDATE' ? distributionsOf(completed(request.oldObject as ObjectSync, request), kinds) : [];
    const stops = previous.flatMap((old) => stoppedTargets(old, next.find((rd) => rd.metadata.name === old.metadata.name), deps.forbiddenNamespaces, kinds) ?? []);
    const accesses = [...next.map((rd) => requiredAccess(rd, deps.forbiddenNamespaces, kinds)), ...(stops.length > 0 ? [stopsOnly(stops)] : [])];
    const checks = accesses.map(async (access) => missingAccess(deps.accessReviewer, request.userInfo, access, abandoned.signal));
    return Promise.all(checks).then(async (answers) => {
      const lines = [...new Set(answers.flat().map(asDestinations))];
      return lines.length > 0 ? forbidden(lines) : allowed(await sourceWarningsOf(deps, next[0]?.spec.source));
    });
  };
}

/** Deletions alone: nothing is written where the copies go. */
function stopsOnly(stops: readonly StoppedTargets[]): RequiredAccess {
  const [first] = stops;
  return { group: first?.group ?? '', resource: first?.resource ?? '', verbs: [], namespaces: [], stops };
}
