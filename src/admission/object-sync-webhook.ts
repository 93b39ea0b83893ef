import { CORE_REGISTRY, type KindRegistry } from '../domain/kinds.js';
import { distributionsOf, OBJECT_SYNC_GROUP, OBJECT_SYNC_KIND, type ObjectSync } from '../domain/object-sync.js';
import { validateObjectSync } from '../domain/validate-object-sync.js';
import type { AccessReviewer } from '../k8s/access-review.js';
import { missingAccess } from './author-access.js';
import { requiredAccess } from './required-access.js';
import { allowed, denied, forbidden, type AdmissionRequest, type Verdict } from './review.js';
import type { Webhook } from './webhook-route.js';

export interface ObjectSyncWebhookDeps {
  accessReviewer: AccessReviewer;
  forbiddenNamespaces: readonly string[];
  kinds?: KindRegistry;
}

/** Lines about a distribution's targets, said of the ObjectSync's field. */
const asDestinations = (line: string): string => line.replace(/^spec\.targets:/, 'spec.destinations:');

/**
 * ObjectSync CREATE/UPDATE: the pure rules, then, as for a ResourceDistribution, whether the author
 * may read the source and write its kind in every destination. DELETE and updates of an
 * ObjectSync being deleted (its finalizer going) always pass.
 */
/** What the webhook has no say over: other operations and kinds, and an ObjectSync being deleted (its finalizer going). */
function passes(request: AdmissionRequest): boolean {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return true;
  if (request.kind.group !== OBJECT_SYNC_GROUP || request.kind.kind !== OBJECT_SYNC_KIND) return true;
  return typeof (request.object as ObjectSync | undefined)?.metadata?.deletionTimestamp === 'string';
}

export function objectSyncWebhook(deps: ObjectSyncWebhookDeps): Webhook {
  const kinds = deps.kinds ?? CORE_REGISTRY;
  return (request, abandoned): Verdict | Promise<Verdict> => {
    if (passes(request)) return allowed();
    const object = request.object as ObjectSync;
    const problems = validateObjectSync(object, kinds);
    if (problems.length > 0) return denied(problems.map((p) => `${p.path}: ${p.message}`));

    // On CREATE the object has neither namespace (it is the request's) nor uid yet.
    const os: ObjectSync = { ...object, metadata: { ...object.metadata, namespace: object.metadata.namespace ?? request.namespace ?? '', uid: object.metadata.uid ?? 'new' } };
    const checks = distributionsOf(os, kinds).map(async (rd) => missingAccess(deps.accessReviewer, request.userInfo, requiredAccess(rd, deps.forbiddenNamespaces, kinds), abandoned.signal));
    return Promise.all(checks).then((answers) => {
      const lines = [...new Set(answers.flat().map(asDestinations))];
      return lines.length > 0 ? forbidden(lines) : allowed();
    });
  };
}
