import { describe, expect, it, vi } from 'vitest';
import type { WatchEvent } from '../../../src/k8s/cluster-api.js';
import { decodeWatchLine, eventVersion } from '../../../src/k8s/held-event.js';
import { Store } from '../../../src/k8s/store.js';

// Lines as kube-apiserver writes them for built-in kinds (Go struct order), and for custom resources (sorted keys).
const configMap = (type: string, rv: string): string =>
  `{"type":"${type}","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"team-a","uid":"u-1","resourceVersion":"${rv}","creationTimestamp":"2026-11-26T10:00:00Z","labels":{"apps.kruise.io/distribution":"d"},"managedFields":[{"manager":"m"}]},"data":{"a":"1"}}}`;
const namespace = `{"type":"ADDED","object":{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"team-a","uid":"u-2","resourceVersion":"7","labels":{"x":"y"}},"spec":{"finalizers":["kubernetes"]}}}`;
const custom = `{"type":"MODIFIED","object":{"apiVersion":"apps.kruise.io/v1alpha1","kind":"ResourceDistribution","metadata":{"name":"d","resourceVersion":"9","uid":"u-3"},"spec":{}}}`;

describe('eventVersion', () => {
  it.each<[string, string, { key: string; resourceVersion: string } | undefined]>([
    ['a namespaced built-in object, modified', configMap('MODIFIED', '42'), { key: 'team-a/settings', resourceVersion: '42' }],
    ['a namespaced built-in object, added', configMap('ADDED', '43'), { key: 'team-a/settings', resourceVersion: '43' }],
    ['a cluster-scoped built-in object', namespace, { key: 'team-a', resourceVersion: '7' }],
    // A deletion always changes what is held.
    ['a deletion', configMap('DELETED', '44'), undefined],
    ['a bookmark', '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"45"}}}', undefined],
    ['an error', '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410}}', undefined],
    ['a custom resource (keys sorted: another order)', custom, undefined],
    ['generateName before the namespace', configMap('MODIFIED', '46').replace('"name":"settings",', '"name":"settings","generateName":"s-",'), undefined],
    ['an escaped character in a name', configMap('MODIFIED', '47').replace('"name":"settings"', '"name":"set\\"tings"'), undefined],
    ['not JSON', 'garbage', undefined],
  ])('%s', (_, line, expected) => {
    expect(eventVersion(line)).toEqual(expected);
  });
});

describe('decodeWatchLine', () => {
  it.each<[string, string, string | undefined, WatchEvent['type']]>([
    ['held at that version: a bookmark of it, nothing decoded', configMap('MODIFIED', '42'), '42', 'BOOKMARK'],
    ['held at another version: decoded', configMap('MODIFIED', '42'), '41', 'MODIFIED'],
    ['not held: decoded', configMap('ADDED', '42'), undefined, 'ADDED'],
    ['a deletion of the held version: decoded', configMap('DELETED', '42'), '42', 'DELETED'],
  ])('%s', (_, line, heldVersion, type) => {
    const store = new Store<{ metadata: { name: string; namespace: string; resourceVersion: string } }>();
    if (heldVersion !== undefined) store.replace([{ metadata: { name: 'settings', namespace: 'team-a', resourceVersion: heldVersion } }]);
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const event = decodeWatchLine(line, (key, version) => store.holds(key, version));
      expect(event.type).toBe(type);
      expect(event.object.metadata?.resourceVersion).toBe('42');
      expect(parse).toHaveBeenCalledTimes(type === 'BOOKMARK' ? 0 : 1);
    } finally {
      parse.mockRestore();
    }
  });

  it('decodes every line when no store is consulted', () => {
    expect(decodeWatchLine(configMap('MODIFIED', '42'), undefined)).toEqual(JSON.parse(configMap('MODIFIED', '42')));
  });
});
