// The watch event of an object the cache already holds at that version (typically our own write,
// whose response came first) changes nothing: it is recognised from the first bytes of its line,
// without decoding the object. The API server encodes a built-in kind's fields in a fixed order:
// {"type":..,"object":{"kind":..,"apiVersion":..,"metadata":{"name":..,"namespace":..,"uid":..,"resourceVersion":..
// Anything else (another order, an escape, a deletion) is decoded as usual.
import type { WatchEvent } from './cluster-api.js';

const HEAD =
  /^\{"type":"(?:ADDED|MODIFIED)","object":\{"kind":"[^"\\]*","apiVersion":"[^"\\]*","metadata":\{"name":"([^"\\]+)",(?:"namespace":"([^"\\]+)",)?"uid":"[^"\\]*","resourceVersion":"([^"\\]+)"/;

/** The store key ("namespace/name" or "name") and resourceVersion of an ADDED or MODIFIED event, when its line shows them up front. */
export function eventVersion(line: string): { key: string; resourceVersion: string } | undefined {
  const match = HEAD.exec(line);
  if (match === null) return undefined;
  const [, name, namespace, resourceVersion] = match as unknown as [string, string, string | undefined, string];
  return { key: namespace === undefined ? name : `${namespace}/${name}`, resourceVersion };
}

/** The event of a watch line: a BOOKMARK of its version when `held` says nothing would change, else the line decoded. */
export function decodeWatchLine(line: string, held: ((key: string, resourceVersion: string) => boolean) | undefined): WatchEvent {
  if (held !== undefined) {
    const version = eventVersion(line);
    if (version !== undefined && held(version.key, version.resourceVersion)) return { type: 'BOOKMARK', object: { metadata: { resourceVersion: version.resourceVersion } } };
  }
  return JSON.parse(line) as WatchEvent;
}
