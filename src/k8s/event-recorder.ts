// Kubernetes Events about distributions (core v1). Best effort: a failed Event is logged, never
// retried, and never fails the reconcile that wanted it.
import type { Clock } from '../domain/clock.js';
import { API_VERSION, KIND, type ResourceDistribution } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { ClusterApi } from './cluster-api.js';
import { describeApiError } from './errors.js';

/** Distributions are cluster-scoped: their Events live in `default`, as for Nodes. */
export const EVENT_NAMESPACE = 'default';
export const EVENT_COMPONENT = 'resource-distributor';
const MAX_MESSAGE = 1024;

export interface EventRecorder {
  warning(rd: ResourceDistribution, reason: string, message: string): Promise<void>;
  /** Something done that the distribution's author should know of, which is no failure. */
  normal(rd: ResourceDistribution, reason: string, message: string): Promise<void>;
}

/** A namespaced origin (an ObjectSync) gets its Events in its own namespace, about itself. */
function subjectOf(rd: ResourceDistribution): { namespace: string; apiVersion: string; kind: string; name: string; namespaced: boolean } {
  const { origin } = rd;
  if (origin !== undefined) return { namespace: origin.namespace, apiVersion: origin.apiVersion, kind: origin.kind, name: origin.name, namespaced: true };
  return { namespace: EVENT_NAMESPACE, apiVersion: API_VERSION, kind: KIND, name: rd.metadata.name, namespaced: false };
}

export function createEventRecorder(deps: { api: ClusterApi; clock: Clock; log: Logger; instance: string }): EventRecorder {
  const record = (type: 'Warning' | 'Normal') => async (rd: ResourceDistribution, reason: string, message: string): Promise<void> => {
    try {
      const subject = subjectOf(rd);
      await deps.api.createEvent({
        namespace: subject.namespace,
        generateName: `${subject.name}.`,
        involvedObject: {
          apiVersion: subject.apiVersion,
          kind: subject.kind,
          name: subject.name,
          // Without it, the API server takes the object for one of `default` and refuses the Event anywhere else.
          ...(subject.namespaced ? { namespace: subject.namespace } : {}),
          uid: rd.metadata.uid,
          resourceVersion: rd.metadata.resourceVersion,
        },
        reason,
        message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message,
        type,
        component: EVENT_COMPONENT,
        instance: deps.instance,
        time: deps.clock(),
      });
    } catch (error) {
      const info = describeApiError(error);
      deps.log.warn({ name: rd.metadata.name, reason, code: info.code, err: info.message }, 'event not recorded');
    }
  };
  return { warning: record('Warning'), normal: record('Normal') };
}
