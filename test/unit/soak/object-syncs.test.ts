import { describe, expect, it } from 'vitest';
import { checkCluster } from '../../soak/checker.js';
import { objectSyncTargets } from '../../soak/check-object-syncs.js';
import type { ObjectSnapshot } from '../../soak/snapshot-types.js';
import { expectations, namespace, objectSync, OWN, plainObject, syncCopy, world } from './soak-builders.js';

const NS = [namespace('src'), namespace('a'), namespace('b'), namespace('kube-system'), namespace(OWN)];
const source = plainObject('Secret', 'src', 'pull', { k: 'djE=' }, { 'tmpl.soak.example/a': '1' });
const listed = objectSync('src', 'sync', { kind: 'Secret', name: 'pull' }, [{ namespace: 'a' }, { namespace: 'b' }], { desired: 2, succeeded: 2 });
const good = [source, syncCopy(listed, source, 'a'), syncCopy(listed, source, 'b')];

function edited(object: ObjectSnapshot, change: (o: ObjectSnapshot) => void): ObjectSnapshot {
  const copy = structuredClone(object);
  change(copy);
  return copy;
}

describe('objectSyncTargets', () => {
  it.each([
    { destinations: [{ namespace: '*' }], targets: { pull: ['a', 'b'] } },
    { destinations: [{ namespace: '' }, { namespace: '*', name: 'renamed' }], targets: { pull: ['a', 'b'], renamed: ['a', 'b', 'src'] } },
    { destinations: [{ namespace: 'a' }, { namespace: 'later', name: 'x' }], targets: { pull: ['a'], x: ['later'] } },
    { destinations: [{ namespace: 'src' }], targets: { pull: [] } },
  ])('$destinations', ({ destinations, targets }) => {
    const found = objectSyncTargets(objectSync('src', 's', { kind: 'Secret', name: 'pull' }, destinations, { desired: 0, succeeded: 0 }), NS, OWN);
    expect(Object.fromEntries([...found].map(([name, set]) => [name, [...set.all].sort()]))).toEqual(targets);
  });
});

describe('checkCluster: ObjectSyncs', () => {
  const everywhere = objectSync('src', 'sync', { kind: 'Secret', name: 'pull' }, [{ namespace: '*', name: 'global' }], { desired: 3, succeeded: 3 });
  it.each([
    { name: 'copies in every destination, status in sync', objectSyncs: [listed], objects: good, rules: [] },
    { name: 'a copy missing', objectSyncs: [listed], objects: good.slice(0, 2), rules: ['sync-copy-missing', 'sync-status-wrong'] },
    {
      name: 'a copy missing, and the status says so',
      objectSyncs: [objectSync('src', 'sync', { kind: 'Secret', name: 'pull' }, [{ namespace: 'a' }, { namespace: 'b' }], { desired: 2, succeeded: 1 })],
      objects: good.slice(0, 2),
      rules: ['sync-copy-missing'],
    },
    { name: 'a copy behind its source', objectSyncs: [listed], objects: [source, good[1]!, edited(good[2]!, (o) => (o.data = { k: 'b2xk' }))], rules: ['sync-copy-wrong', 'sync-status-wrong'] },
    { name: 'a source label dropped from a copy', objectSyncs: [listed], objects: [source, good[1]!, edited(good[2]!, (o) => (o.labels = {}))], rules: ['sync-copy-wrong', 'sync-status-wrong'] },
    { name: 'a copy left where the ObjectSync no longer writes', objectSyncs: [listed], objects: [...good, syncCopy(listed, source, 'src', 'pull-2')], rules: ['sync-copy-untargeted'] },
    { name: 'copies of a deleted ObjectSync', objectSyncs: [], objects: good, rules: ['sync-copy-outlived-objectsync', 'sync-copy-outlived-objectsync'] },
    { name: 'copies of one being deleted: its finalizer holds it', objectSyncs: [{ ...listed, deleting: true }], objects: good, rules: [] },
    {
      name: 'a deleted source: no copy anywhere, none in sync',
      objectSyncs: [objectSync('src', 'sync', { kind: 'Secret', name: 'pull' }, [{ namespace: 'a' }, { namespace: 'b' }], { desired: 2, succeeded: 0 })],
      objects: [],
      rules: [],
    },
    { name: 'a deleted source, copies kept', objectSyncs: [listed], objects: good.slice(1), rules: ['sync-copy-outlived-source', 'sync-copy-outlived-source', 'sync-status-wrong'] },
    { name: 'renamed everywhere, the source namespace included', objectSyncs: [everywhere], objects: [source, ...['a', 'b', 'src'].map((ns) => syncCopy(everywhere, source, ns, 'global'))], rules: [] },
    {
      name: 'a copy with an owner',
      objectSyncs: [listed],
      objects: [source, good[1]!, edited(good[2]!, (o) => (o.ownerReferences = [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x', controller: true }]))],
      rules: ['sync-copy-wrong', 'sync-status-wrong'],
    },
    { name: 'status of an older generation', objectSyncs: [{ ...listed, generation: 2 }], objects: good, rules: ['sync-status-wrong'] },
  ])('$name', ({ objectSyncs, objects, rules }) => {
    const found = checkCluster(world({ namespaces: NS, objectSyncs, objects }), expectations());
    expect(found.map((v) => v.rule).sort()).toEqual([...rules].sort());
  });
});
