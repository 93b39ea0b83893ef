import type { PodInjection } from '../domain/pod-injection.js';
import type { Logger } from '../log.js';
import { neverDenies } from './never-denies.js';
import { allowed, type Verdict } from './review.js';
import type { Webhook } from './webhook-route.js';

export interface PodMutationWebhookDeps {
  inject: (namespace: string, pod: unknown) => PodInjection | Promise<PodInjection>;
  /** Called with the names added to one pod. */
  onInjected?: (names: readonly string[]) => void;
  log: Logger;
}

const verdictOf = (injection: PodInjection, deps: PodMutationWebhookDeps): Verdict => {
  if (injection.names.length === 0) return allowed();
  deps.onInjected?.(injection.names);
  return { decision: 'allowed', patch: injection.patch };
};

/**
 * Pod CREATE (mutating): adds the image-pull Secrets of the distributions that inject into the
 * pod's namespace. Never denies; a dry run is mutated the same way (there is no side effect).
 */
export function podMutationWebhook(deps: PodMutationWebhookDeps): Webhook {
  return (request): Verdict | Promise<Verdict> => {
    if (request.operation !== 'CREATE' || request.kind.group !== '' || request.kind.kind !== 'Pod' || !request.namespace) return allowed();
    const namespace = request.namespace;
    return neverDenies(deps.log, { ns: namespace }, 'pod mutation failed', () => deps.inject(namespace, request.object), (injection) => verdictOf(injection, deps));
  };
}
