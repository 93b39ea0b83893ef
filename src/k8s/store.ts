// An in-memory copy of one kind of object, fed by a reflector (list + watch), with secondary indexes.
// It also takes our own writes through ("write-through"), but only where that can never resurrect
// or roll back an object: the watch remains the source of truth.
//
// Two streams feed it, and only one of them is ordered. The reflector's lists and events come in
// the API server's order: a watch sends an object's events in the order of its changes and resumes
// after the last one it sent, and a relist (a consistent read: our lists send no resourceVersion,
// and it starts after the watch ended) is newer than every event before it. Our own write and
// delete answers arrive in any order relative to that stream. So what a departed uid blocks
// depends on how we know it departed:
// - `gone`: our own delete succeeded. The uid is deleted for good (uids are never reused), so
//   whatever of it arrives afterwards, from either stream, is an older view: a lagging event, a list
//   sent before the delete. Taken, it would bring back a copy that no longer exists.
// - `left`: the watch sent DELETED. With a label-selected watch that also means "left the
//   selection" (the label was removed), which the object can return from: a later event or list of
//   it is newer than that DELETED and is taken. Only our own answers, which are not ordered with
//   the stream, are refused: a create answered after the watch showed that object leave.
// No resourceVersion is compared. Read as etcd revisions they would give the same answers (a
// return is newer than the DELETED, a late create answer older), but the order needed is the
// stream's own, and the API documents resourceVersions as opaque to clients.

export interface StoredMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface Stored {
  metadata: StoredMeta;
}

/** Something changed: `old` absent for an addition, `current` absent for a deletion. */
export interface StoreChange<T> {
  old?: T;
  current?: T;
}

export type IndexFn<T> = (object: T) => readonly string[];

const TOMBSTONES = 1024;

/** How a uid was seen to leave the store (see the header): `gone` for good, or `left` a watch's selection. */
type Departure = 'gone' | 'left';

export function namespacedKey(object: Stored): string {
  return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name ?? ''}` : (object.metadata.name ?? '');
}

export class Store<T extends Stored> {
  private readonly items = new Map<string, T>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  /** uids recently seen leaving, oldest first (bounded): what brings them back is decided by how they left. */
  private readonly departed = new Map<string, Departure>();

  constructor(
    private readonly indexFns: Record<string, IndexFn<T>> = {},
    private readonly keyOf: (object: T) => string = namespacedKey,
    /** What is kept of an object (e.g. with parts shared between objects); the object as given by default. */
    private readonly keep: (object: T) => T = (object) => object,
  ) {
    for (const name of Object.keys(indexFns)) this.indexes.set(name, new Map());
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  /** Whether the object under `key` is held at exactly this resourceVersion (an event of it would change nothing). */
  holds(key: string, resourceVersion: string): boolean {
    return this.items.get(key)?.metadata.resourceVersion === resourceVersion;
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** The values an index holds objects under (each with one at least). */
  indexValues(index: string): IterableIterator<string> {
    return (this.indexes.get(index) ?? new Map<string, Set<string>>()).keys();
  }

  /** How many objects an index holds under `value`, without listing them. */
  countByIndex(index: string, value: string): number {
    return this.indexes.get(index)?.get(value)?.size ?? 0;
  }

  byIndex(index: string, value: string): T[] {
    const keys = this.indexes.get(index)?.get(value);
    const found: T[] = [];
    if (keys === undefined) return found;
    for (const key of keys) {
      const item = this.items.get(key);
      if (item !== undefined) found.push(item);
    }
    return found;
  }

  /** A fresh list: returns what changed compared to what was held. */
  replace(objects: readonly T[]): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    const seen = new Set<string>();
    for (const object of objects) {
      // A list sent before our delete of it and answered after.
      if (!this.returns(object)) continue;
      const key = this.keyOf(object);
      seen.add(key);
      const change = this.upsert(key, object);
      if (change) changes.push(change);
    }
    for (const key of this.keys()) {
      if (seen.has(key)) continue;
      const old = this.remove(key);
      if (old) changes.push({ old });
    }
    return changes;
  }

  /** A watch event: returns the change, or undefined when the store already held exactly that. */
  applyEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: T): StoreChange<T> | undefined {
    const key = this.keyOf(object);
    // An event older than our delete of the object (the watch lags behind our requests): taken, it
    // would bring back a copy that is gone, for a pass to delete again.
    if (type !== 'DELETED') return this.returns(object) ? this.upsert(key, object) : undefined;
    if (object.metadata.uid) this.remember(object.metadata.uid, 'left');
    const old = this.remove(key);
    return old ? { old } : undefined;
  }

  /**
   * Our own successful write, before its watch event arrives. An update is taken only if the store
   * still holds the version we replaced; a create only if nothing is held and that uid was never seen
   * leaving (the answer is older than the watch's DELETED of it). The later watch event for the same
   * resourceVersion is then a no-op.
   */
  observeWrite(object: T, replacedVersion?: string): void {
    const key = this.keyOf(object);
    const held = this.items.get(key);
    const uid = object.metadata.uid;
    if (replacedVersion !== undefined) {
      if (held?.metadata.resourceVersion === replacedVersion) this.put(key, object);
      return;
    }
    if (!held && uid !== undefined && !this.departed.has(uid)) this.put(key, object);
  }

  /** Our own successful delete of the object with that uid. */
  observeDelete(key: string, uid: string): void {
    this.remember(uid, 'gone');
    if (this.items.get(key)?.metadata.uid === uid) this.remove(key);
  }

  private upsert(key: string, object: T): StoreChange<T> | undefined {
    const old = this.items.get(key);
    const version = object.metadata.resourceVersion;
    if (old && version !== undefined && old.metadata.resourceVersion === version) return undefined;
    return { old, current: this.put(key, object) };
  }

  private put(key: string, given: T): T {
    const object = this.keep(given);
    this.unindex(key);
    this.items.set(key, object);
    for (const [name, fn] of Object.entries(this.indexFns)) {
      const index = this.indexes.get(name);
      for (const value of fn(object)) {
        const keys = index?.get(value) ?? new Set<string>();
        keys.add(key);
        index?.set(value, keys);
      }
    }
    return object;
  }

  private remove(key: string): T | undefined {
    const old = this.items.get(key);
    this.unindex(key);
    this.items.delete(key);
    return old;
  }

  private unindex(key: string): void {
    const old = this.items.get(key);
    if (!old) return;
    for (const [name, fn] of Object.entries(this.indexFns)) {
      const index = this.indexes.get(name);
      for (const value of fn(old)) {
        const keys = index?.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index?.delete(value);
      }
    }
  }

  /**
   * Whether an object from the reflector's stream is taken: never one of a uid we deleted; one that
   * had left the watch's selection is back in it (and no longer remembered as departed).
   */
  private returns(object: T): boolean {
    const uid = object.metadata.uid;
    if (uid === undefined) return true;
    const departure = this.departed.get(uid);
    if (departure === 'gone') return false;
    if (departure === 'left') this.departed.delete(uid);
    return true;
  }

  private remember(uid: string, departure: Departure): void {
    // Our delete is the stronger knowledge: a DELETED event of it afterwards does not weaken it.
    if (this.departed.get(uid) === 'gone') return;
    this.departed.set(uid, departure);
    if (this.departed.size > TOMBSTONES) {
      const oldest = this.departed.keys().next().value;
      if (oldest !== undefined) this.departed.delete(oldest);
    }
  }
}
