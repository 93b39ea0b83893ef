// Watches of the resources the caches follow, as one event per decoded line, with one `onDone`.
import { GROUP, PLURAL, VERSION } from '../domain/types.js';
import type { WatchCallbacks, WatchEvent, WatchHandle, WatchOptions, WatchedResource } from './cluster-api.js';
import type { KubeClient, Query } from './kube-client.js';

const WATCH_PATHS: Record<WatchedResource, string> = {
  distributions: `/apis/${GROUP}/${VERSION}/${PLURAL}`,
  namespaces: '/api/v1/namespaces',
  secrets: '/api/v1/secrets',
  configmaps: '/api/v1/configmaps',
};

export async function startWatch(client: KubeClient, resource: WatchedResource, options: WatchOptions, callbacks: WatchCallbacks): Promise<WatchHandle> {
  const query: Query = {
    resourceVersion: options.resourceVersion,
    timeoutSeconds: options.timeoutSeconds,
    allowWatchBookmarks: true,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
  };
  const all = WATCH_PATHS[resource];
  // Namespaced only for Secrets and ConfigMaps (/api/v1/<plural> -> /api/v1/namespaces/<ns>/<plural>).
  const path = options.namespace === undefined ? all : all.replace(/\/([a-z]+)$/, `/namespaces/${encodeURIComponent(options.namespace)}/$1`);
  return client.watch(
    path,
    query,
    (line) => {
      const event = line as WatchEvent;
      // Only drop what we never read.
      if (event.object.metadata) delete event.object.metadata.managedFields;
      callbacks.onEvent(event);
    },
    (error) => callbacks.onDone(error),
  );
}
