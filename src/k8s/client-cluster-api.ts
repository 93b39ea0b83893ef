// ClusterApi over our own HTTP client: JSON in and out, as the API server sends it, but for the
// copies of ConfigMaps and Secrets it writes (protobuf, see core-protobuf.ts).
import { apiVersionFor, CORE_REGISTRY, kindKeyOf, versionOf, type ApiKind, type KindKey, type KindRegistry } from '../domain/kinds.js';
import { OBJECT_SYNC_API_VERSION, OBJECT_SYNC_PLURAL, type ObjectSync } from '../domain/object-sync.js';
import { distributionModel, statusInVersion, STORAGE_VERSION } from '../domain/conversion.js';
import type { UnknownRecord } from '../domain/field-problem.js';
import { GROUP, PLURAL, type Resource, type ResourceDistribution } from '../domain/types.js';
import type { ClusterApi, CopyRef, EventObject, LeaseObject, ListResult, NamespaceObject } from './cluster-api.js';
import { METADATA_LIST, startWatch } from './client-watch.js';
import { decodeCoreAnswer, encodeCoreObject, PROTOBUF, PROTOBUF_OR_JSON, UndecodableAnswer } from './core-protobuf.js';
import { isNotFound } from './errors.js';
import { NOT_A_COPY, trimmedMeta } from './named-objects.js';
import type { KubeClient, Query } from './kube-client.js';

export interface ClientClusterApiOptions {
  /** Page size of lists. */
  pageSize?: number;
  /** The kinds copies and sources may be of (default Secret and ConfigMap). */
  kinds?: KindRegistry;
  /** The version distributions are read and written in (default the storage version); the rest of the code sees the domain's model. */
  distributionVersion?: string;
}

const MERGE_PATCH = 'application/merge-patch+json';
const OBJECT_SYNCS = `/apis/${OBJECT_SYNC_API_VERSION}/${OBJECT_SYNC_PLURAL}`;
const objectSyncPath = (namespace: string, name?: string): string =>
  `/apis/${OBJECT_SYNC_API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${OBJECT_SYNC_PLURAL}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

/** `/api/v1` or `/apis/<group>/<version>`: in the object's own version when it has one. */
export function groupVersionPath(kind: ApiKind, version: string = kind.version): string {
  return kind.group === '' ? `/api/${version}` : `/apis/${kind.group}/${version}`;
}

export function kindPath(kind: ApiKind, namespace?: string, name?: string, version?: string): string {
  const scope = namespace === undefined ? '' : `/namespaces/${encodeURIComponent(namespace)}`;
  return `${groupVersionPath(kind, version)}${scope}/${kind.plural}${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;
}
const leasePath = (namespace: string, name?: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

interface Page<T> {
  items: T[] | null;
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

interface ListOptions<T> {
  /** The media type asked for (a metadata-only list). */
  accept?: string;
  /** What is kept of each item, as each page arrives; without managedFields by default. */
  keep?: (item: T) => T;
}

/** What every group of methods below shares: the client, the allowed kinds, and reads and writes that trim what they return. */
interface Requests {
  client: KubeClient;
  kindOf: (key: KindKey) => ApiKind;
  listAll: <T>(path: string, query?: Query, options?: ListOptions<T>) => Promise<ListResult<T>>;
  get: <T>(path: string) => Promise<T | undefined>;
  send: <T>(method: string, path: string, body: unknown, contentType?: string) => Promise<T>;
}

function createRequests(client: KubeClient, options: ClientClusterApiOptions): Requests {
  const limit = options.pageSize ?? 500;
  const kinds = options.kinds ?? CORE_REGISTRY;

  function kindOf(key: KindKey): ApiKind {
    const kind = kinds.byKey(key);
    // Admission and the reconciler only ever pass allowed kinds.
    if (kind === undefined) throw new Error(`kind ${key} is not allowed (RD_ALLOWED_KINDS)`);
    return kind;
  }

  async function listAll<T>(path: string, query: Query = {}, { accept, keep = trimmed }: ListOptions<T> = {}): Promise<ListResult<T>> {
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    do {
      // No resourceVersion: a consistent read, never older than an event already seen (a relist
      // may take back an object a label-selected watch reported leaving; see store.ts).
      const page = await client.request<Page<T>>('GET', path, { query: { ...query, limit, continue: token }, ...(accept === undefined ? {} : { accept }) });
      // A metadata-only list with nothing in it says `items: null`.
      for (const item of page.items ?? []) items.push(keep(item));
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

  return { client, kindOf, listAll, get, send };
}

/** List items carry no apiVersion/kind (only single objects and watch events do); everything downstream needs them. */
function identified(kind: ApiKind, listed: ListResult<Resource>): ListResult<Resource> {
  for (const item of listed.items) Object.assign(item, { apiVersion: apiVersionFor(kind), kind: kind.kind });
  return listed;
}

type CopyMethods = Pick<ClusterApi, 'listCopies' | 'listSource' | 'listNamed' | 'getCopy' | 'createCopy' | 'replaceCopy' | 'dryRunCopy' | 'deleteCopy'>;

/** Copies and sources: objects of any allowed kind, each at the path of its own kind and version. */
function copyMethods({ client, kindOf, listAll, get, send }: Requests): CopyMethods {
  /** An object's path, in the version it is written in. */
  const objectPath = (object: Resource, withName: boolean): string =>
    kindPath(
      kindOf(kindKeyOf(object.apiVersion, object.kind)),
      object.metadata.namespace ?? '',
      withName ? (object.metadata.name ?? '') : undefined,
      versionOf(object.apiVersion),
    );

  /**
   * A ConfigMap or Secret goes in protobuf, as client-go sends built-in kinds: the API server
   * spends far less on it than on JSON. An answer it cannot decode (a field a newer API server
   * added) is read again as JSON, so the cache never holds an object short of a field.
   */
  async function write(method: 'POST' | 'PUT', object: Resource): Promise<Resource> {
    const path = objectPath(object, method === 'PUT');
    const encoded = encodeCoreObject(object);
    if (encoded === undefined) return send<Resource>(method, path, object);
    try {
      return trimmed(await client.request<Resource>(method, path, { body: encoded, contentType: PROTOBUF, accept: PROTOBUF_OR_JSON, decode: decodeCoreAnswer }));
    } catch (error) {
      if (!(error instanceof UndecodableAnswer)) throw error;
      const stored = await get<Resource>(objectPath(object, true));
      if (stored === undefined) throw error;
      return stored;
    }
  }

  return {
    listCopies: async (key, labelSelector, keep) => {
      const kind = kindOf(key);
      return identified(kind, await listAll<Resource>(kindPath(kind), { labelSelector }, keep === undefined ? {} : { keep: (item) => keep(trimmed(item)) }));
    },
    listSource: async (ref) => {
      const kind = kindOf(kindKeyOf(ref.apiVersion, ref.kind));
      return identified(kind, await listAll<Resource>(kindPath(kind, ref.namespace), { fieldSelector: `metadata.name=${ref.name}` }));
    },
    listNamed: async (key, name) => {
      const kind = kindOf(key);
      // Trimmed page by page: at a restart every distributed name is listed at once, thousands of
      // objects each, and their whole metadata held until the last page would add up.
      return identified(kind, await listAll<Resource>(kindPath(kind), { fieldSelector: `metadata.name=${name}`, labelSelector: NOT_A_COPY }, { accept: METADATA_LIST, keep: trimmedMeta }));
    },
    getCopy: ({ kind, namespace, name }) => get<Resource>(kindPath(kindOf(kind), namespace, name)),
    createCopy: (object) => write('POST', object),
    replaceCopy: (object) => write('PUT', object),
    dryRunCopy: (object) => {
      const { name, resourceVersion, ...metadata } = object.metadata;
      const unnamed = { ...object, metadata: { ...metadata, generateName: `${name ?? 'copy'}-` } };
      void resourceVersion;
      return send<Resource>('POST', `${objectPath(object, false)}?dryRun=All`, unnamed);
    },
    deleteCopy: async ({ kind, namespace, name }: CopyRef, uid, resourceVersion) => {
      const preconditions = resourceVersion === undefined ? { uid } : { uid, resourceVersion };
      await client.request('DELETE', kindPath(kindOf(kind), namespace, name), { body: { preconditions } });
    },
  };
}

function eventBody(event: EventObject): object {
  return {
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
}

/** Distributions in the version the API server is asked for, as the domain's model both ways. */
function distributionEdge(version: string): { path: string; model: <T>(object: T) => T; status: (status: ResourceDistribution['status']) => UnknownRecord | undefined } {
  return {
    path: `/apis/${GROUP}/${version}/${PLURAL}`,
    model: <T>(object: T): T => (object === undefined ? object : (distributionModel(object as UnknownRecord) as T)),
    status: (status) => (status === undefined ? undefined : statusInVersion(status, version)),
  };
}

export function createClusterApi(client: KubeClient, options: ClientClusterApiOptions = {}): ClusterApi {
  const requests = createRequests(client, options);
  const { kindOf, listAll, get, send } = requests;
  const edge = distributionEdge(options.distributionVersion ?? STORAGE_VERSION);
  const DISTRIBUTIONS = edge.path;

  return {
    listDistributions: async () => {
      const listed = await listAll<ResourceDistribution>(DISTRIBUTIONS);
      return { ...listed, items: listed.items.map(edge.model) };
    },
    listNamespaces: () => listAll<NamespaceObject>('/api/v1/namespaces'),
    watch: (resource, watchOptions, callbacks) => {
      if (resource === 'distributions') {
        const onEvent: typeof callbacks.onEvent = (event) => callbacks.onEvent(event.type === 'BOOKMARK' || event.type === 'ERROR' ? event : { ...event, object: edge.model(event.object) });
        return startWatch(client, DISTRIBUTIONS, watchOptions, { ...callbacks, onEvent });
      }
      if (resource === 'namespaces') return startWatch(client, '/api/v1/namespaces', watchOptions, callbacks);
      if (resource === 'objectsyncs') return startWatch(client, OBJECT_SYNCS, watchOptions, callbacks);
      return startWatch(client, kindPath(kindOf(resource), watchOptions.namespace), watchOptions, callbacks);
    },

    getNamespace: (name) => get<NamespaceObject>(`/api/v1/namespaces/${encodeURIComponent(name)}`),
    lookupDistribution: async (name) => {
      const found = await client.request<Page<ResourceDistribution>>('GET', DISTRIBUTIONS, { query: { fieldSelector: `metadata.name=${name}` } });
      const [first] = found.items ?? [];
      return first === undefined ? undefined : edge.model(trimmed(first));
    },

    ...copyMethods(requests),

    patchDistributionStatus: async (name, status) =>
      edge.model(await send<ResourceDistribution>('PATCH', `${DISTRIBUTIONS}/${encodeURIComponent(name)}/status`, { status: edge.status(status) }, MERGE_PATCH)),

    listObjectSyncs: () => listAll<ObjectSync>(OBJECT_SYNCS),
    lookupObjectSync: async (namespace, name) => {
      const found = await client.request<Page<ObjectSync>>('GET', objectSyncPath(namespace), { query: { fieldSelector: `metadata.name=${name}` } });
      const [first] = found.items ?? [];
      return first === undefined ? undefined : trimmed(first);
    },
    patchObjectSyncStatus: (namespace, name, status) => send<ObjectSync>('PATCH', `${objectSyncPath(namespace, name)}/status`, { status }, MERGE_PATCH),
    patchObjectSyncFinalizers: (namespace, name, finalizers, resourceVersion) =>
      send<ObjectSync>('PATCH', objectSyncPath(namespace, name), { metadata: { finalizers, resourceVersion } }, MERGE_PATCH),

    createEvent: async (event) => {
      await client.request('POST', `/api/v1/namespaces/${encodeURIComponent(event.namespace)}/events`, { body: eventBody(event) });
    },

    getLease: (namespace, name) => get<LeaseObject>(leasePath(namespace, name)),
    createLease: (lease) => send<LeaseObject>('POST', leasePath(lease.metadata.namespace), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease }),
    replaceLease: (lease) =>
      send<LeaseObject>('PUT', leasePath(lease.metadata.namespace, lease.metadata.name), { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...lease }),
  };
}
