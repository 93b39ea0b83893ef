import { podReferences, type PodReferences } from '../domain/pod-references.js';
import type { Logger } from '../log.js';
import { neverDenies } from './never-denies.js';
import { allowed, type Verdict } from './review.js';
import type { Webhook } from './webhook-route.js';

export interface PodWebhookDeps {
  /** Writes what the pod references and is still missing in its namespace; see PodMaterializer. */
  materialize: (namespace: string, refs: PodReferences, options: { dryRun: boolean; signal: AbortSignal }) => unknown;
  log: Logger;
}

/**
 * Pod CREATE: never denies. The copies the pod references that are still missing are written
 * before the answer (bounded wait), so that the pod never starts without them; a dry run writes
 * nothing. Anything else passes at once.
 */
export function podWebhook(deps: PodWebhookDeps): Webhook {
  return (request, abandoned): Verdict | Promise<Verdict> => {
    if (request.operation !== 'CREATE' || request.kind.group !== '' || request.kind.kind !== 'Pod') return allowed();
    const namespace = request.namespace ?? '';
    if (namespace === '') return allowed();
    const work = (): unknown => deps.materialize(namespace, podReferences(request.object), {
        dryRun: request.dryRun === true,
        // Only a write waits for the signal: read it then, not for every pod.
        get signal() {
          return abandoned.signal;
        },
      });
    return neverDenies(deps.log, { ns: namespace }, 'copies for a pod could not be written', work, () => allowed());
  };
}
