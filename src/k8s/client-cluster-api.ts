// ClusterApi over our own HTTP client: plain JSON in and out, as the API server sends it.
import { GROUP, KIND_PLURALS, PLURAL, VERSION, type DistributedKind, type Resource, type ResourceDistribution } from '../domain/types.js';
import type { ClusterApi, CopyRef, LeaseObject, ListResult, NamespaceObject } from './cluster-api.js';
import { startWatch } from './client-watch.js';
import { isNotFound } from './errors.js';
import type { KubeClient, Query } from './kube-client.js';

export interface ClientClusterApiOptions {
  /** Page size of lists. */
  pageSize?: number;
}

const MERGE_PATCH = 'application/merge-patch+json';
const DISTRIBUTIONS = `/apis/${GROUP}/${VERSION}/${PLURAL}`;
const copyPath = (kind: DistributedKind, namespace: string, name?: string): string =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/${KIND_PLURALS[kind]}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
const leasePath = (namespace: string, name?: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

interface Page<T> {
  items: T[];
  metadata?: { resourceVersion?: string; continue?: string };
}

/** managedFields dropped: never read, and the largest part of metadata. */
function trimmed<T>(object: T): T {
  const metadata = (object as { metadata?: { managedFields?: unknown } }).metadata;
  if (metadata) delete metadata.managedFields;
  return object;
}

async function orUndefined<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export function createClusterApi(client: KubeClient, options: ClientClusterApiOptions = {}): ClusterApi {
  const limit = options.pageSize ?? 500;

  async function listAll<T>(path: string, query: Query = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      const page = await client.request<Page<T>>('GET', path, { query: { ...query, limit, continue: token } });
      for (const item of page.items) items.push(trimmed(item));
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      token = page.metadata?.continue || undefined;
    } while (token);
    return { items, resourceVersion };
  }

  const get = async <T>(path: string): Promise<T | undefined> => {
    const found = await orUndefined(client.request<T>('GET', path));
    return found === undefined ? undefined : trimmed(found);
  };
  const send = async <T>(method: string, path: string, body: unknown, contentType?: string): Promise<T> =>
    trimmed(await client.request<T>(method, path, { body, ...(contentType ? { contentType } : {}) }));

  return {
    listDistributions: () => listAll<ResourceDistribution>(DISTRIBUTIONS),
    listNamespaces: () => listAll<NamespaceObject>('/api/v1/namespaces'),
    listCopies: async (kind, labelSelector) => {
      const listed = await listAll<Resource>(`/api/v1/${KIND_PLURALS[kind]}`, { labelSelector });
      // Items of a list carry no apiVersion/kind (only single objects and watch events do), and
      // everything downstream tells Secrets from ConfigMaps by `kind`.
      for (const item of listed.items) Object.assign(item, { apiVersion: 'v1', kind });
      return listed;
    },
    watch: (resource, watchOptions, callbacks) => startWatch(client, resource, watchOptions, callbacks),
    listSource: async (ref) => {
      const kind = ref.kind as DistributedKind;
      const listed = await listAll<Resource>(copyPath(kind, ref.namespace), { fieldSelector: `metadata.name=${ref.name}` });
      for (const item of listed.items) Object.assign(item, { apiVersion: 'v1', kind });
      return listed;
    },

    getNamespace: (name) => get<NamespaceObject>(`/api/v1/namespaces/${encodeURIComponent(name)}`),
    lookupDistribution: async (name) => {
      const found = await client.request<Page<ResourceDistribution>>('GET', DISTRIBUTIONS, { query: { fieldSelector: `metadata.name=${name}` } });
      const [first] = found.items;
      return first === undefined ? undefined : trimmed(first);
    },

    getCopy: ({ kind, namespace, name }) => get<Resource>(copyPath(kind, namespace, name)),
    createCopy: (object) => send<Resource>('POST', copyPath(object.kind as DistributedKind, object.metadata.namespace ?? ''), object),
    replaceCopy: (object) =>
      send<Resource>('PUT', copyPath(object.kind as DistributedKind, object.metadata.namespace ?? '', object.metadata.name ?? ''), object),
    deleteCopy: async ({ kind, namespace, name }: CopyRef, uid) => {
      await client.request('DELETE', copyPath(kind, namespace, name), { body: { preconditions: { uid } } });
    },

    patchDistributionStatus: (name, status) =>
      send<ResourceDistribution>('PATCH', `${DISTRIBUTIONS}/${encodeURIComponent(name)}/status`, { status }, MERGE_PATCH),

    createEvent: async (event) => {
      const body = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: event.generateName, namespace: event.namespace },
        involvedObject: event.involvedObject,
        reason: event.reason,
        message: event.message,
        type: event.type,
        source: { component: event.component, host: event.instance },
        firstTimestamp: event.time.toISOString(),
        lastTimestamp: event.time.toISOString(),
        count: 1,
      };
      await client.request('POST', `/api/v1/namespaces/${encodeURIComponent(event.namespace)}/events`, { body });
    },

    getLease: (namespace, name) => get<LeaseObject>(leasePath(namespace, name)),
    createLease: (lease) => send<LeaseObject>('POST', leasePath(lease.metadata.namespace), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease }),
    replaceLease: (lease) =>
      send<LeaseObject>('PUT', leasePath(lease.metadata.namespace, lease.metadata.name), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease }),
  };
}
