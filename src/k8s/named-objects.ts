// What else stands under each distributed name: per (kind, name) that a distribution writes, one
// watch of that name in every namespace (`metadata.name=<name>`) of the objects without our label,
// metadata only. A conflict that clears, a foreign object deleted or annotated for adoption, a copy
// whose label was taken off: each is an event here, and reaches the distributions that write that
// name at once instead of at the sweep. Objects with our label (copies, ours or another
// distribution's) are left to the watch of copies, which routes their changes to the writers of
// their name too: here they would cost the API server a second event, converted to metadata and
// encoded for this watch alone, at every copy written. Nothing of the objects' content is received
// or kept: per object a name, namespace, uid and resourceVersion. Memory follows the distributed
// names and the foreign objects that carry them, never the number of copies or of objects of a kind.
import type { KindKey } from '../domain/kinds.js';
import { LABEL_DISTRIBUTION, type Resource } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { ClusterApi } from './cluster-api.js';
import { Reflector } from './reflector.js';
import { Store, type StoreChange } from './store.js';

/** A distributed name of a kind (`Secret/registry`), and who writes it. */
export interface NamedTarget {
  kind: KindKey;
  name: string;
  /** The distributions that write this kind and name. */
  distributions: readonly string[];
}

export function namedKey(kind: KindKey, name: string): string {
  return `${kind}/${name}`;
}

/** Objects without our label: copies are the watch of copies' (see above). */
export const NOT_A_COPY = `!${LABEL_DISTRIBUTION}`;

/** What is kept of an object: identity, version, and which distribution's copy it says it is (one that just took our label on). */
export function trimmedMeta(object: Resource): Resource {
  const { name, namespace, uid, resourceVersion, labels } = object.metadata;
  const label = labels?.[LABEL_DISTRIBUTION];
  return {
    apiVersion: 'meta.k8s.io/v1',
    kind: 'PartialObjectMetadata',
    metadata: { name, namespace, uid, resourceVersion, ...(label === undefined ? {} : { labels: { [LABEL_DISTRIBUTION]: label } }) },
  };
}

interface Watched {
  target: NamedTarget;
  reflector: Reflector<Resource>;
  store: Store<Resource>;
}

export interface NamedObjects {
  /** Watches exactly these names from now on: new ones start, those no longer written stop. */
  follow(targets: readonly NamedTarget[]): void;
  /** The distributions that write this kind and name (none when it is not watched). */
  concerned(kind: KindKey, name: string): readonly string[];
  /** Names watched (one watch, one connection each), and objects held under them. */
  size(): { names: number; objects: number };
  stop(): void;
}

export interface NamedObjectsOptions {
  api: Pick<ClusterApi, 'listNamed' | 'watch'>;
  log: Logger;
  /** An object of a watched kind and name appeared, changed or went. */
  onChange(kind: KindKey, name: string, change: StoreChange<Resource>): void;
  watchTimeoutSeconds?: number;
  stallGraceMs?: number;
}

export function createNamedObjects(options: NamedObjectsOptions): NamedObjects {
  const { api } = options;
  const watched = new Map<string, Watched>();
  const listNamed = api.listNamed?.bind(api);

  const start = (target: NamedTarget): Watched => {
    const { kind, name } = target;
    const store = new Store<Resource>();
    const reflector = new Reflector<Resource>({
      resource: `named ${namedKey(kind, name)}`,
      log: options.log,
      watchTimeoutSeconds: options.watchTimeoutSeconds,
      stallGraceMs: options.stallGraceMs,
      store,
      transform: trimmedMeta,
      list: () => (listNamed === undefined ? Promise.resolve({ items: [], resourceVersion: '' }) : listNamed(kind, name)),
      watch: (watchOptions, callbacks) => api.watch(kind, { ...watchOptions, fieldSelector: `metadata.name=${name}`, labelSelector: NOT_A_COPY, metadataOnly: true }, callbacks),
      onChange: (change) => options.onChange(kind, name, change),
    });
    reflector.start();
    return { target, reflector, store };
  };

  return {
    follow: (targets) => {
      // Without the list, nothing is watched (a double of the API without it).
      const wanted = new Map(listNamed === undefined ? [] : targets.map((target) => [namedKey(target.kind, target.name), target]));
      for (const [key, entry] of watched) {
        if (wanted.has(key)) continue;
        entry.reflector.stop();
        watched.delete(key);
      }
      for (const [key, target] of wanted) {
        const entry = watched.get(key);
        if (entry === undefined) watched.set(key, start(target));
        else entry.target = target;
      }
    },
    concerned: (kind, name) => watched.get(namedKey(kind, name))?.target.distributions ?? [],
    size: () => ({ names: watched.size, objects: [...watched.values()].reduce((sum, entry) => sum + entry.store.size, 0) }),
    stop: () => {
      for (const entry of watched.values()) entry.reflector.stop();
      watched.clear();
    },
  };
}

