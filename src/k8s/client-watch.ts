// Watches of the resources the caches follow, as one event per decoded line, with one `onDone`.
import type { WatchCallbacks, WatchEvent, WatchHandle, WatchOptions } from './cluster-api.js';
import { decodeWatchLine } from './held-event.js';
import type { KubeClient, Query } from './kube-client.js';

/** What a metadata-only watch asks for: each event's object is a PartialObjectMetadata. */
export const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
/** The same for a list. */
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** `path`: the collection, already scoped to options.namespace when there is one. */
export async function startWatch(client: KubeClient, path: string, options: WatchOptions, callbacks: WatchCallbacks): Promise<WatchHandle> {
  const query: Query = {
    resourceVersion: options.resourceVersion,
    timeoutSeconds: options.timeoutSeconds,
    allowWatchBookmarks: true,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
  };
  return client.watch(
    path,
    query,
    (decoded) => {
      const event = decoded as WatchEvent;
      // Only drop what we never read.
      if (event.object.metadata) delete event.object.metadata.managedFields;
      callbacks.onEvent(event);
    },
    (error) => callbacks.onDone(error),
    (line) => decodeWatchLine(line, options.held),
    options.metadataOnly === true ? METADATA_ONLY : undefined,
  );
}
