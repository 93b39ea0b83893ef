// Admission of a distribution written in either served version: the webhook works on the domain's
// model, and its answer speaks the author's version (spec.targets.namespaceSelector in v1beta1).
import { distributionModel, inVersionWords, V1ALPHA1 } from '../domain/conversion.js';
import { asRecord } from '../domain/field-problem.js';
import type { AdmissionRequest, Verdict } from './review.js';
import type { Webhook } from './webhook-route.js';

function asModel(object: unknown): unknown {
  const record = asRecord(object);
  return record === undefined ? object : distributionModel(record);
}

function inWords(verdict: Verdict, version: string): Verdict {
  const warnings = verdict.warnings?.map((warning) => inVersionWords(warning, version));
  const said = warnings === undefined ? verdict : { ...verdict, warnings };
  if (said.decision === 'allowed') return said;
  return { ...said, status: { ...said.status, message: inVersionWords(said.status.message, version) } };
}

/** `webhook` for requests in any served version: given the model, answering in the request's version. */
export function versionedWebhook(webhook: Webhook): Webhook {
  return (request, abandoned) => {
    const version = request.kind.version;
    if (version === V1ALPHA1) return webhook(request, abandoned);
    const modelled: AdmissionRequest = { ...request, object: asModel(request.object), oldObject: asModel(request.oldObject) };
    const verdict = webhook(modelled, abandoned);
    return verdict instanceof Promise ? verdict.then((v) => inWords(v, version)) : inWords(verdict, version);
  };
}
