// ClusterApi over @kubernetes/client-node 1.x. Everything returned is plain JSON (the generated
// client turns timestamps into Date objects; the domain works on the API's JSON shapes).
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  Watch,
  setHeaderOptions,
  type CoreV1Event,
  type KubeConfig,
  type V1ConfigMap,
  type V1Lease,
  type V1Secret,
} from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type DistributedKind, type Resource, type ResourceDistribution } from '../domain/types.js';
import type { ClusterApi, CopyRef, LeaseObject, ListResult, NamespaceObject } from './cluster-api.js';
import { startWatch } from './client-watch.js';
import { withDeadline } from './deadline.js';
import { isNotFound } from './errors.js';

export interface ClientClusterApiOptions {
  /** A request that has not answered by then fails as transient (the client has no timeout of its own). */
  requestTimeoutMs?: number;
  /** Page size of lists. */
  pageSize?: number;
}

/** JSON as the API server sent it; managedFields dropped (never read, and the largest part of metadata). */
function toPlain<T>(value: unknown): T {
  const json = JSON.parse(JSON.stringify(value)) as { metadata?: { managedFields?: unknown } };
  if (json.metadata) delete json.metadata.managedFields;
  return json as T;
}

interface Page<T> {
  items: T[];
  metadata?: { resourceVersion?: string; _continue?: string; continue?: string };
}

async function listAllPages<T>(fetchPage: (token: string | undefined) => Promise<Page<T>>): Promise<ListResult<T>> {
  const items: T[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  do {
    const page = await fetchPage(token);
    for (const item of page.items) items.push(toPlain<T>(item));
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    token = page.metadata?._continue ?? page.metadata?.continue ?? undefined;
  } while (token);
  return { items, resourceVersion };
}

async function orUndefined<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

export function createClusterApi(kubeConfig: KubeConfig, options: ClientClusterApiOptions = {}): ClusterApi {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  const watcher = new Watch(kubeConfig);
  const timeoutMs = options.requestTimeoutMs ?? 30_000;
  const limit = options.pageSize ?? 500;
  const timed = <T>(what: string, promise: Promise<T>): Promise<T> => withDeadline(promise, timeoutMs, what);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  function copyCall<T>(kind: DistributedKind, secret: () => Promise<T>, configMap: () => Promise<T>): Promise<T> {
    return timed(`${kind} request`, kind === 'Secret' ? secret() : configMap());
  }

  return {
    listDistributions: () =>
      timed(
        'list distributions',
        listAllPages<ResourceDistribution>(
          (token) =>
            custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, limit, _continue: token }) as Promise<
              Page<ResourceDistribution>
            >,
        ),
      ),
    listNamespaces: () =>
      timed(
        'list namespaces',
        listAllPages<NamespaceObject>((token) => core.listNamespace({ limit, _continue: token }) as Promise<Page<NamespaceObject>>),
      ),
    listCopies: async (kind, labelSelector) => {
      const listed = await timed(
        `list ${kind}s`,
        listAllPages<Resource>((token) =>
          kind === 'Secret'
            ? (core.listSecretForAllNamespaces({ labelSelector, limit, _continue: token }) as Promise<Page<Resource>>)
            : (core.listConfigMapForAllNamespaces({ labelSelector, limit, _continue: token }) as Promise<Page<Resource>>),
        ),
      );
      // Items of a list carry no apiVersion/kind (only single objects and watch events do), and
      // everything downstream tells Secrets from ConfigMaps by `kind`.
      return { ...listed, items: listed.items.map((item) => ({ ...item, apiVersion: 'v1', kind })) };
    },
    watch: (resource, watchOptions, callbacks) => startWatch(watcher, resource, watchOptions, callbacks),

    getNamespace: async (name) => {
      const found = await timed('get namespace', orUndefined(core.readNamespace({ name })));
      return found === undefined ? undefined : toPlain<NamespaceObject>(found);
    },

    lookupDistribution: async (name) => {
      const fieldSelector = `metadata.name=${name}`;
      const found = (await timed(
        'look up distribution',
        custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, fieldSelector }),
      )) as Page<unknown>;
      const [first] = found.items;
      return first === undefined ? undefined : toPlain<ResourceDistribution>(first);
    },

    getCopy: async ({ kind, namespace, name }) => {
      const found = await copyCall<unknown>(
        kind,
        () => orUndefined(core.readNamespacedSecret({ name, namespace })),
        () => orUndefined(core.readNamespacedConfigMap({ name, namespace })),
      );
      return found === undefined ? undefined : toPlain<Resource>(found);
    },
    createCopy: async (object) => {
      const namespace = object.metadata.namespace ?? '';
      const created = await copyCall<unknown>(
        object.kind as DistributedKind,
        () => core.createNamespacedSecret({ namespace, body: object as V1Secret }),
        () => core.createNamespacedConfigMap({ namespace, body: object as V1ConfigMap }),
      );
      return toPlain<Resource>(created);
    },
    replaceCopy: async (object) => {
      const namespace = object.metadata.namespace ?? '';
      const name = object.metadata.name ?? '';
      const replaced = await copyCall<unknown>(
        object.kind as DistributedKind,
        () => core.replaceNamespacedSecret({ name, namespace, body: object as V1Secret }),
        () => core.replaceNamespacedConfigMap({ name, namespace, body: object as V1ConfigMap }),
      );
      return toPlain<Resource>(replaced);
    },
    deleteCopy: async ({ kind, namespace, name }: CopyRef, uid) => {
      const body = { preconditions: { uid } };
      await copyCall<unknown>(
        kind,
        () => core.deleteNamespacedSecret({ name, namespace, body }),
        () => core.deleteNamespacedConfigMap({ name, namespace, body }),
      );
    },

    patchDistributionStatus: async (name, status) => {
      const patched: unknown = await timed(
        'patch distribution status',
        custom.patchClusterCustomObjectStatus({ group: GROUP, version: VERSION, plural: PLURAL, name, body: { status } }, merge),
      );
      return toPlain<ResourceDistribution>(patched);
    },

    createEvent: async (event) => {
      const body: CoreV1Event = {
        metadata: { generateName: event.generateName, namespace: event.namespace },
        involvedObject: event.involvedObject,
        reason: event.reason,
        message: event.message,
        type: event.type,
        source: { component: event.component, host: event.instance },
        firstTimestamp: event.time,
        lastTimestamp: event.time,
        count: 1,
      };
      await timed('create event', core.createNamespacedEvent({ namespace: event.namespace, body }));
    },

    getLease: async (namespace, name) => {
      const found = await timed('get lease', orUndefined(coordination.readNamespacedLease({ name, namespace })));
      return found === undefined ? undefined : toPlain<LeaseObject>(found);
    },
    createLease: async (lease) => {
      const created = await timed(
        'create lease',
        coordination.createNamespacedLease({ namespace: lease.metadata.namespace, body: lease as unknown as V1Lease }),
      );
      return toPlain<LeaseObject>(created);
    },
    replaceLease: async (lease) => {
      const replaced = await timed(
        'replace lease',
        coordination.replaceNamespacedLease({
          name: lease.metadata.name,
          namespace: lease.metadata.namespace,
          body: lease as unknown as V1Lease,
        }),
      );
      return toPlain<LeaseObject>(replaced);
    },
  };
}
