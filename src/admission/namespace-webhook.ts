import type { Logger } from '../log.js';
import { allowed, type AdmissionRequest, type Verdict } from './review.js';
import type { Webhook } from './webhook-route.js';

export interface AdmittedNamespace {
  name: string;
  uid: string;
}

export interface NamespaceWebhookDeps {
  /** Starts generating the namespace's copies; must return at once (the work happens later). */
  onNamespaceAdmitted: (namespace: AdmittedNamespace) => void;
  log: Logger;
}

interface NamespaceMeta {
  name?: unknown;
  uid?: unknown;
  labels?: unknown;
}

function metadataOf(object: unknown): NamespaceMeta {
  return (object as { metadata?: NamespaceMeta } | null | undefined)?.metadata ?? {};
}

/**
 * Labels are a flat map of strings: compared one level deep, never recursively, so that a crafted
 * review with deeply nested "labels" costs no more than a real one (and cannot overflow the stack).
 */
export function sameLabels(a: unknown, b: unknown): boolean {
  const left = a ?? {};
  const right = b ?? {};
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null) return left === right;
  const leftEntries = Object.entries(left);
  if (leftEntries.length !== Object.keys(right).length) return false;
  return leftEntries.every(([key, value]) => Object.hasOwn(right, key) && (right as Record<string, unknown>)[key] === value);
}

/** Pure: does this request change which distributions may target the namespace? */
export function startsGeneration(request: AdmissionRequest): boolean {
  if (request.dryRun === true || request.kind.group !== '' || request.kind.kind !== 'Namespace') return false;
  if (request.operation === 'CREATE') return true;
  if (request.operation !== 'UPDATE') return false;
  return !sameLabels(metadataOf(request.object).labels, metadataOf(request.oldObject).labels);
}

/**
 * Namespace CREATE/UPDATE: never denies. A real (not dry-run) creation or label change hands the
 * namespace to the generator and answers at once; the generator waits for the namespace to exist.
 */
export function namespaceWebhook(deps: NamespaceWebhookDeps): Webhook {
  return (request): Verdict => {
    if (!startsGeneration(request)) return allowed();
    const metadata = metadataOf(request.object);
    const name = request.name || (typeof metadata.name === 'string' ? metadata.name : '');
    const uid = typeof metadata.uid === 'string' ? metadata.uid : '';
    if (name === '') return allowed();
    try {
      deps.onNamespaceAdmitted({ name, uid });
    } catch (error) {
      // Never block a namespace: the periodic sweep writes its copies anyway.
      deps.log.error({ namespace: name, err: error }, 'namespace generation could not start');
    }
    return allowed();
  };
}
