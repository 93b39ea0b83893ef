// The namespace a pod is being admitted into, as the pod webhooks need it: from the cache, or (a
// namespace created a moment ago, not cached yet) read once. A failed read is logged and counts as
// unknown: the pod webhooks never hold a pod up.
import type { NamespaceInfo } from '../domain/types.js';
import type { Logger } from '../log.js';
import { toCachedNamespace, type Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { describeApiError } from '../k8s/errors.js';

export interface PodNamespaceDeps {
  api: Pick<ClusterApi, 'getNamespace'>;
  caches: Pick<Caches, 'namespaces'>;
  log: Logger;
}

/** Synchronous when cached (the common case); undefined when it does not exist or cannot be read. */
export function podNamespace(deps: PodNamespaceDeps, name: string): NamespaceInfo | Promise<NamespaceInfo | undefined> {
  const cached = deps.caches.namespaces.get(name)?.info;
  if (cached !== undefined) return cached;
  return deps.api.getNamespace(name).then(
    (found) => (found === undefined ? undefined : toCachedNamespace(found).info),
    (error: unknown) => {
      deps.log.warn({ ns: name, err: describeApiError(error).message }, 'namespace of a pod could not be read');
      return undefined;
    },
  );
}
