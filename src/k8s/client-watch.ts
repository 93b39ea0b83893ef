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
  // One namespace: only for the core kinds we copy (a distribution's source).
  const path = options.namespace === undefined ? WATCH_PATHS[resource] : `/api/v1/namespaces/${encodeURIComponent(options.namespace)}/${resource}`;
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
