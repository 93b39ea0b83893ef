// The source objects of distributions (spec.source), each watched alone: by name, in its own
// namespace, from the first distribution that names it until the last one stops. Memory follows
// the sources, never the cluster's number of Secrets or ConfigMaps.
import { sourceKey } from '../domain/source.js';
import { kindKeyOf } from '../domain/kinds.js';
import type { Resource, SourceRef } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { ClusterApi } from './cluster-api.js';
import { Reflector } from './reflector.js';
import { Store } from './store.js';

/** What is known of a source: not yet (its first list has not answered), absent, or the object. */
export type SourceState = { synced: false } | { synced: true; object: Resource | undefined };

export interface SourceCache {
  get(ref: SourceRef): SourceState;
  /** Watches exactly these sources from now on: new ones start, the ones no longer named stop. */
  follow(refs: readonly SourceRef[]): void;
  /** How many sources are watched. */
  size(): number;
  stop(): void;
}

interface Followed {
  reflector: Reflector<Resource>;
  store: Store<Resource>;
}

export function createSourceCache(options: {
  api: Pick<ClusterApi, 'listSource' | 'watch'>;
  log: Logger;
  /** A source appeared, changed or went away: `key` as sourceKey gives it. */
  onChange(key: string): void;
  watchTimeoutSeconds?: number;
  stallGraceMs?: number;
}): SourceCache {
  const followed = new Map<string, Followed>();

  const start = (ref: SourceRef): Followed => {
    const key = sourceKey(ref);
    const kind = kindKeyOf(ref.apiVersion, ref.kind);
    const store = new Store<Resource>();
    const reflector = new Reflector<Resource>({
      resource: `source ${key}`,
      log: options.log,
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      stallGraceMs: options.stallGraceMs,
      store,
      transform: (object) => (object.kind === ref.kind ? object : { ...object, apiVersion: ref.apiVersion, kind: ref.kind }),
      list: () => options.api.listSource(ref),
      watch: (watchOptions, callbacks) =>
        options.api.watch(kind, { ...watchOptions, namespace: ref.namespace, fieldSelector: `metadata.name=${ref.name}` }, callbacks),
      onChange: () => options.onChange(key),
    });
    reflector.start();
    return { reflector, store };
  };

  return {
    get: (ref) => {
      const entry = followed.get(sourceKey(ref));
      if (entry === undefined || !entry.reflector.synced) return { synced: false };
      return { synced: true, object: entry.store.list()[0] };
    },
    follow: (refs) => {
      const wanted = new Map(refs.map((ref) => [sourceKey(ref), ref]));
      for (const [key, entry] of followed) {
        if (wanted.has(key)) continue;
        entry.reflector.stop();
        followed.delete(key);
      }
      for (const [key, ref] of wanted) if (!followed.has(key)) followed.set(key, start(ref));
    },
    size: () => followed.size,
    stop: () => {
      for (const entry of followed.values()) entry.reflector.stop();
      followed.clear();
    },
  };
}
