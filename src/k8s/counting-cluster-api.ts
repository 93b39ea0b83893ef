// Counts every request a ClusterApi makes, by verb and resource: feeds the apiRequests/apiErrors
// metrics, and lets tests prove what a sweep costs.
import { CORE_REGISTRY, kindKeyOf, type KindRegistry } from '../domain/kinds.js';
import type { Resource, SourceRef } from '../domain/types.js';
import type { Metrics } from '../metrics.js';
import { API_VERBS, type ApiVerb, type ClusterApi, type CopyRef } from './cluster-api.js';
import { describeApiError, isNotFound } from './errors.js';

export interface RequestTally {
  /** Requests by verb (get, list, watch, create, update, patch, delete). */
  byVerb: Partial<Record<ApiVerb, number>>;
  /** Requests by `verb resource`, e.g. `get secrets`. */
  byRequest: Record<string, number>;
  errors: number;
  /** Failed requests by `verb resource code`, e.g. `create secrets 403`. */
  failures: Record<string, number>;
  /** create + update + patch + delete. */
  writes: number;
}

export interface CountingClusterApi {
  api: ClusterApi;
  tally(): RequestTally;
  reset(): void;
}

const WRITE_VERBS: readonly ApiVerb[] = ['create', 'update', 'patch', 'delete'];

const FIXED_RESOURCES: Partial<Record<keyof ClusterApi, string>> = {
  listDistributions: 'resourcedistributions',
  lookupDistribution: 'resourcedistributions',
  patchDistributionStatus: 'resourcedistributions',
  listObjectSyncs: 'objectsyncs',
  lookupObjectSync: 'objectsyncs',
  patchObjectSyncStatus: 'objectsyncs',
  patchObjectSyncFinalizers: 'objectsyncs',
  listNamespaces: 'namespaces',
  getNamespace: 'namespaces',
  createEvent: 'events',
  getLease: 'leases',
  createLease: 'leases',
  replaceLease: 'leases',
};

/** The resource a call touches: fixed per method, else the plural of the kind its first argument names. */
function resourceOf(method: keyof ClusterApi, args: readonly unknown[], kinds: KindRegistry): string {
  const fixed = FIXED_RESOURCES[method];
  if (fixed !== undefined) return fixed;
  const first = args[0];
  if (first === 'distributions') return 'resourcedistributions';
  if (first === 'namespaces' || first === 'objectsyncs') return first;
  // A kind key (lists, watches, CopyRefs) or an object or SourceRef with its apiVersion.
  const named = first as Partial<Resource & SourceRef & CopyRef>;
  const key = typeof first === 'string' ? first : named.apiVersion === undefined ? (named.kind ?? '') : kindKeyOf(named.apiVersion, named.kind ?? '');
  const plural = kinds.byKey(key)?.plural ?? key;
  // The lists of what stands under a distributed name, apart from those of the caches (see named-objects.ts).
  return method === 'listNamed' ? `${plural} by name` : plural;
}

function emptyTally(): RequestTally {
  return { byVerb: {}, byRequest: {}, errors: 0, failures: {}, writes: 0 };
}

export function countRequests(
  inner: ClusterApi,
  metrics?: Pick<Metrics, 'apiRequests' | 'apiErrors'>,
  kinds: KindRegistry = CORE_REGISTRY,
): CountingClusterApi {
  let tally = emptyTally();

  function record(verb: ApiVerb, resource: string): void {
    tally.byVerb[verb] = (tally.byVerb[verb] ?? 0) + 1;
    const key = `${verb} ${resource}`;
    tally.byRequest[key] = (tally.byRequest[key] ?? 0) + 1;
    if (WRITE_VERBS.includes(verb)) tally.writes += 1;
    metrics?.apiRequests.inc({ verb, resource });
  }

  function recordError(verb: ApiVerb, resource: string, error: unknown): void {
    // A NotFound on get is an answer ("absent"), not a failure.
    if (verb === 'get' && isNotFound(error)) return;
    const code = String(describeApiError(error).code);
    tally.errors += 1;
    const key = `${verb} ${resource} ${code}`;
    tally.failures[key] = (tally.failures[key] ?? 0) + 1;
    metrics?.apiErrors.inc({ verb, code });
  }

  const api = {} as Record<keyof ClusterApi, (...args: unknown[]) => Promise<unknown>>;
  for (const method of Object.keys(API_VERBS) as (keyof ClusterApi)[]) {
    // An optional method the inner API does not have stays absent.
    if (inner[method] === undefined) continue;
    const verb = API_VERBS[method];
    api[method] = async (...args: unknown[]): Promise<unknown> => {
      const resource = resourceOf(method, args, kinds);
      record(verb, resource);
      try {
        return await (inner[method] as (...params: unknown[]) => Promise<unknown>)(...args);
      } catch (error) {
        recordError(verb, resource, error);
        throw error;
      }
    };
  }

  return {
    api: api as unknown as ClusterApi,
    tally: () => structuredClone(tally),
    reset: () => {
      tally = emptyTally();
    },
  };
}
