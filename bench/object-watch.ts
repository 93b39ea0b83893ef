// Observes objects through the API server's watch, as a user of the cluster would: the propagation
// and fan-out figures are "from my request until I can see the result", not the controller's own
// view. Times are performance.now() milliseconds, taken when the event reaches this process.
import { performance } from 'node:perf_hooks';
import { CoreV1Api, Watch, type KubeConfig } from '@kubernetes/client-node';

export type WatchedKind = 'ConfigMap' | 'Secret';

export interface SeenObject {
  kind: WatchedKind;
  namespace: string;
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  data: Record<string, string>;
  resourceVersion: string;
}

export type WatchListener = (type: 'ADDED' | 'MODIFIED' | 'DELETED', object: SeenObject, atMs: number) => void;

export interface ObjectWatch {
  stop(): void;
}

const PATHS: Record<WatchedKind, string> = { ConfigMap: '/api/v1/configmaps', Secret: '/api/v1/secrets' };

interface RawObject {
  metadata?: { namespace?: string; name?: string; labels?: Record<string, string>; annotations?: Record<string, string>; resourceVersion?: string };
  data?: Record<string, string>;
}

function toSeen(kind: WatchedKind, raw: RawObject): SeenObject {
  const metadata = raw.metadata ?? {};
  return {
    kind,
    namespace: metadata.namespace ?? '',
    name: metadata.name ?? '',
    labels: metadata.labels ?? {},
    annotations: metadata.annotations ?? {},
    data: raw.data ?? {},
    resourceVersion: metadata.resourceVersion ?? '',
  };
}

/** The collection's current resourceVersion (a list of one object): a watch from it sees only what changes next. */
async function currentResourceVersion(kc: KubeConfig, kind: WatchedKind): Promise<string | undefined> {
  const core = kc.makeApiClient(CoreV1Api);
  const list = kind === 'ConfigMap' ? await core.listConfigMapForAllNamespaces({ limit: 1 }) : await core.listSecretForAllNamespaces({ limit: 1 });
  return list.metadata?.resourceVersion;
}

/**
 * Watches `kinds` in every namespace by `labelSelector` and calls `listener` for each change. Starts
 * without a resourceVersion, so every existing object arrives first as ADDED, unless `fromNow`
 * (where listing every existing object would cost more than what is measured). Resolves once every
 * watch is established (the API server answered); a watch the server closes is resumed from the
 * last resourceVersion seen.
 */
export async function watchObjects(
  kc: KubeConfig,
  kinds: readonly WatchedKind[],
  labelSelector: string,
  listener: WatchListener,
  options: { fromNow?: boolean } = {},
): Promise<ObjectWatch> {
  const watch = new Watch(kc);
  const controllers = new Map<WatchedKind, AbortController>();
  let stopped = false;

  async function start(kind: WatchedKind, resourceVersion: string | undefined): Promise<void> {
    let last = resourceVersion;
    // An ERROR event (410 Gone: the server no longer holds what followed `last`) ends the stream
    // without a transport error; resuming from `last` would fail the same way forever.
    let refused: unknown;
    const params = { labelSelector, allowWatchBookmarks: true, ...(last ? { resourceVersion: last } : {}) };
    const controller = await watch.watch(
      PATHS[kind],
      params,
      (phase, raw: RawObject) => {
        if (phase === 'ERROR') refused = raw;
        else last = raw.metadata?.resourceVersion ?? last;
        if (phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED') listener(phase, toSeen(kind, raw), performance.now());
      },
      (error: unknown) => {
        if (stopped) return;
        const reason = error ?? refused;
        if (reason) console.error(`[bench] watch of ${kind} ended: ${reason instanceof Error ? reason.message : JSON.stringify(reason)}; starting again from every existing object`);
        // Begin again without a resourceVersion: every existing object arrives as ADDED (seen late, never lost).
        const resumeFrom = reason ? undefined : last;
        setTimeout(() => void start(kind, resumeFrom).catch((err: unknown) => console.error('[bench] watch restart failed', err)), 200);
      },
    );
    controllers.set(kind, controller);
  }

  await Promise.all(kinds.map(async (kind) => start(kind, options.fromNow === true ? await currentResourceVersion(kc, kind) : undefined)));
  return {
    stop: () => {
      stopped = true;
      for (const controller of controllers.values()) controller.abort();
    },
  };
}
