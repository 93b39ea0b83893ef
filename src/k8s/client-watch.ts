// Watches over client-node's Watch (raw JSON lines, one callback per event), with one `onDone`.
import type { Watch } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION } from '../domain/types.js';
import type { WatchCallbacks, WatchEvent, WatchHandle, WatchOptions, WatchedResource } from './cluster-api.js';

const WATCH_PATHS: Record<WatchedResource, string> = {
  distributions: `/apis/${GROUP}/${VERSION}/${PLURAL}`,
  namespaces: '/api/v1/namespaces',
  secrets: '/api/v1/secrets',
  configmaps: '/api/v1/configmaps',
};

export async function startWatch(
  watcher: Watch,
  resource: WatchedResource,
  options: WatchOptions,
  callbacks: WatchCallbacks,
): Promise<WatchHandle> {
  let finished = false;
  const finish = (error?: unknown): void => {
    if (finished) return;
    finished = true;
    callbacks.onDone(error);
  };
  const query: Record<string, string | number | boolean> = {
    resourceVersion: options.resourceVersion,
    timeoutSeconds: options.timeoutSeconds,
    allowWatchBookmarks: true,
  };
  if (options.labelSelector !== undefined) query.labelSelector = options.labelSelector;
  const controller = await watcher.watch(
    WATCH_PATHS[resource],
    query,
    (type: string, object: unknown) => {
      if (finished) return;
      // Watch events are parsed JSON already: only drop what we never read.
      const plain = object as WatchEvent['object'];
      if (plain.metadata) delete plain.metadata.managedFields;
      callbacks.onEvent({ type: type as WatchEvent['type'], object: plain });
    },
    (error: unknown) => finish(error ?? undefined),
  );
  return {
    stop: () => {
      finished = true;
      controller.abort();
    },
  };
}
