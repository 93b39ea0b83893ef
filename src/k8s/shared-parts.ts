// The copies of one distribution carry the same labels, annotations (the hash, `from`, and the
// timestamp of the pass that wrote them), ownerReference and data. Held as parsed from the API,
// each copy has its own instances of all of them; in the cache they share one, frozen so that no
// code can change one copy's part under another's feet.
import { LRUCache } from 'lru-cache';
import type { Resource } from '../domain/types.js';

/** Distinct parts remembered for sharing; beyond that the least recently seen are forgotten (their holders keep them). */
const MAX_PARTS = 4096;

export type PartSharer = (object: Resource) => Resource;

export function createPartSharer(maxParts = MAX_PARTS): PartSharer {
  const pool = new LRUCache<string, object>({ max: maxParts });
  function share<V extends object>(value: V): V {
    // Shared already: a list keeps each page's copies as they arrive, and the store keeps them again.
    if (Object.isFrozen(value)) return value;
    const key = JSON.stringify(value);
    const held = pool.get(key);
    if (held !== undefined) return held as V;
    Object.freeze(value);
    if (Array.isArray(value)) value.forEach((item: unknown) => Object.freeze(item));
    pool.set(key, value);
    return value;
  }
  return (object) => {
    const metadata = { ...object.metadata };
    if (metadata.labels) metadata.labels = share(metadata.labels);
    if (metadata.annotations) metadata.annotations = share(metadata.annotations);
    if (metadata.ownerReferences) metadata.ownerReferences = share(metadata.ownerReferences);
    const shared: Resource = { ...object, metadata };
    if (object.data) shared.data = share(object.data);
    if (object.binaryData) shared.binaryData = share(object.binaryData);
    return shared;
  };
}
