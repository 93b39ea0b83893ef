import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WatchCallbacks } from '../../../src/k8s/cluster-api.js';
import { Reflector } from '../../../src/k8s/reflector.js';
import { Store, type StoreChange } from '../../../src/k8s/store.js';
import { recordingLog, silentLog } from './harness.js';

type Item = { metadata: { name: string; uid: string; resourceVersion: string } };

const item = (name: string, resourceVersion: string): Item => ({ metadata: { name, uid: `uid-${name}`, resourceVersion } });

/** A scripted API: what lists return, and a handle on the current watch. */
function scripted() {
  const state = { items: [item('a', '1')], version: '1', lists: 0, watches: [] as { from: string; held?: (key: string, resourceVersion: string) => boolean; callbacks: WatchCallbacks; stopped: boolean }[] };
  const changes: StoreChange<Item>[] = [];
  const store = new Store<Item>();
  const reflector = new Reflector<Item>({
    resource: 'things',
    store,
    log: silentLog,
    watchTimeoutSeconds: 60,
    stallGraceMs: 5_000,
    backoffInitialMs: 100,
    backoffMaxMs: 1_000,
    onChange: (change) => changes.push(change),
    list: () => {
      state.lists += 1;
      return Promise.resolve({ items: structuredClone(state.items), resourceVersion: state.version });
    },
    watch: (options, callbacks) => {
      const watch = { from: options.resourceVersion, held: options.held, callbacks, stopped: false };
      state.watches.push(watch);
      return Promise.resolve({ stop: () => (watch.stopped = true) });
    },
  });
  const current = () => state.watches.at(-1)!;
  return { state, changes, store, reflector, current };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Reflector', () => {
  it('lists, then watches from the list resourceVersion, applying events', async () => {
    const s = scripted();
    s.reflector.start();
    await s.reflector.whenSynced();
    await vi.advanceTimersByTimeAsync(0);
    expect(s.store.keys()).toEqual(['a']);
    expect(s.current().from).toBe('1');

    s.current().callbacks.onEvent({ type: 'ADDED', object: item('b', '2') });
    s.current().callbacks.onEvent({ type: 'MODIFIED', object: item('a', '3') });
    s.current().callbacks.onEvent({ type: 'DELETED', object: item('b', '4') });
    expect(s.store.keys()).toEqual(['a']);
    expect(s.changes.map((c) => `${c.old?.metadata.name ?? '-'}>${c.current?.metadata.name ?? '-'}`)).toEqual(['->a', '->b', 'a>a', 'b>-']);
    s.reflector.stop();
  });

  it('takes back an object that left its selection and returned (DELETED, then ADDED of the same uid)', async () => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    s.current().callbacks.onEvent({ type: 'DELETED', object: item('a', '2') });
    s.current().callbacks.onEvent({ type: 'ADDED', object: item('a', '3') });
    expect(s.store.get('a')?.metadata.resourceVersion).toBe('3');
    expect(s.changes.map((c) => `${c.old?.metadata.resourceVersion ?? '-'}>${c.current?.metadata.resourceVersion ?? '-'}`)).toEqual(['->1', '1>-', '->3']);
    s.reflector.stop();
  });

  it('tells its watch which versions its store holds, so that their events need no decoding', async () => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    const held = s.current().held!;
    expect([held('a', '1'), held('a', '2'), held('b', '1')]).toEqual([true, false, false]);
    s.current().callbacks.onEvent({ type: 'MODIFIED', object: item('a', '2') });
    expect([held('a', '1'), held('a', '2')]).toEqual([false, true]);
    s.reflector.stop();
  });

  it('resumes from the last resourceVersion (bookmarks included) when the server ends the watch', async () => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    s.current().callbacks.onEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } });
    await vi.advanceTimersByTimeAsync(2_000);
    s.current().callbacks.onDone();
    await vi.advanceTimersByTimeAsync(0);
    expect(s.state.watches.map((w) => w.from)).toEqual(['1', '9']);
    expect(s.state.lists).toBe(1);
    s.reflector.stop();
  });

  it.each<[string, boolean, number, string, number]>([
    ['delivered events (the server closed a watcher behind a burst): watches on at once from the last', true, 0, '5', 1],
    ['delivered nothing (a very short watch: its replay did not fit): lists again after a backoff', false, 100, '7', 2],
  ])('after a watch that ended within a second and %s', async (_case, delivered, after, from, lists) => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    if (delivered) s.current().callbacks.onEvent({ type: 'MODIFIED', object: item('a', '5') });
    s.state.items = [item('a', '7')];
    s.state.version = '7';
    await vi.advanceTimersByTimeAsync(200);
    s.current().callbacks.onDone();
    await vi.advanceTimersByTimeAsync(0);
    expect(s.state.watches).toHaveLength(after === 0 ? 2 : 1);
    await vi.advanceTimersByTimeAsync(after * 1.2);
    expect(s.state.watches.map((w) => w.from)).toEqual(['1', from]);
    expect(s.state.lists).toBe(lists);
    s.reflector.stop();
  });

  it('relists when the resourceVersion is too old (410), reporting what changed meanwhile', async () => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    s.state.items = [item('c', '20')];
    s.state.version = '20';
    s.current().callbacks.onEvent({ type: 'ERROR', object: { code: 410, reason: 'Expired' } });
    await vi.advanceTimersByTimeAsync(0);
    expect(s.state.lists).toBe(2);
    expect(s.store.keys()).toEqual(['c']);
    expect(s.changes.slice(1).map((c) => `${c.old?.metadata.name ?? '-'}>${c.current?.metadata.name ?? '-'}`)).toEqual(['->c', 'a>-']);
    expect(s.current().from).toBe('20');
    s.reflector.stop();
  });

  it('relists at once when the watch request itself is answered 410 (client-node reports statusCode)', async () => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    s.current().callbacks.onDone(Object.assign(new Error('Gone'), { statusCode: 410 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(s.state.lists).toBe(2);
    s.reflector.stop();
  });

  it('keeps going after errors, with backoff, where the client-node informer would stop', async () => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    s.current().callbacks.onDone(new Error('ECONNRESET'));
    await vi.advanceTimersByTimeAsync(50);
    expect(s.state.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(s.state.watches).toHaveLength(2);
    s.current().callbacks.onEvent({ type: 'ERROR', object: { code: 500, reason: 'InternalError' } });
    await vi.advanceTimersByTimeAsync(300);
    expect(s.state.watches).toHaveLength(3);
    s.reflector.stop();
  });

  it('logs a failing change listener and keeps the watch going', async () => {
    const { log, lines } = recordingLog('error');
    const store = new Store<Item>();
    let watch: WatchCallbacks | undefined;
    const reflector = new Reflector<Item>({
      resource: 'things',
      store,
      log,
      onChange: () => {
        throw new Error('listener bug');
      },
      list: () => Promise.resolve({ items: [], resourceVersion: '1' }),
      watch: (_, callbacks) => {
        watch = callbacks;
        return Promise.resolve({ stop: () => undefined });
      },
    });
    reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    watch?.onEvent({ type: 'ADDED', object: item('a', '2') });
    watch?.onEvent({ type: 'ADDED', object: item('b', '3') });
    expect(store.keys()).toEqual(['a', 'b']);
    expect(lines.map((line) => [line.msg, line.err])).toEqual([
      ['change listener failed', 'listener bug'],
      ['change listener failed', 'listener bug'],
    ]);
    reflector.stop();
  });

  it('restarts a watch that went silent (no event, no bookmark)', async () => {
    const s = scripted();
    s.reflector.start();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(64_000);
    expect(s.state.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(s.state.watches).toHaveLength(2);
    expect(s.state.watches[0]?.stopped).toBe(true);
    s.reflector.stop();
  });
});

describe('Store write-through', () => {
  it('takes our update only over the version it replaced, and never resurrects a deleted object', () => {
    const store = new Store<Item>();
    store.replace([item('a', '1')]);
    store.observeWrite(item('a', '2'), '1');
    expect(store.get('a')?.metadata.resourceVersion).toBe('2');
    store.observeWrite(item('a', '3'), '1');
    expect(store.get('a')?.metadata.resourceVersion).toBe('2');
    // The watch event of our own write changes nothing.
    expect(store.applyEvent('MODIFIED', item('a', '2'))).toBeUndefined();

    store.applyEvent('ADDED', item('b', '5'));
    store.applyEvent('DELETED', item('b', '6'));
    store.observeWrite(item('b', '5'));
    expect(store.get('b')).toBeUndefined();
  });
});

describe('Store after our delete', () => {
  // Our delete answered before the watch showed the object's last change, or before a list taken
  // earlier came back: neither brings it back (a pass would delete it again, and meet NotFound).
  it.each<[string, (store: Store<Item>) => StoreChange<Item>[] | StoreChange<Item> | undefined]>([
    ['a late MODIFIED event', (store) => store.applyEvent('MODIFIED', item('a', '2'))],
    ['a late ADDED event', (store) => store.applyEvent('ADDED', item('a', '1'))],
    ['a list answered after the delete', (store) => store.replace([item('a', '2'), item('b', '1')])],
  ])('%s does not bring it back', (_, late) => {
    const store = new Store<Item>();
    store.replace([item('a', '1')]);
    store.observeDelete('a', 'uid-a');
    const changes = late(store);
    expect(store.get('a')).toBeUndefined();
    expect([changes].flat().filter((change) => change?.current?.metadata.name === 'a')).toEqual([]);
  });

  it('takes an object made again under the same name (a new uid)', () => {
    const store = new Store<Item>();
    store.replace([item('a', '1')]);
    store.observeDelete('a', 'uid-a');
    store.applyEvent('ADDED', { metadata: { name: 'a', uid: 'uid-a-again', resourceVersion: '3' } });
    expect(store.get('a')?.metadata.uid).toBe('uid-a-again');
  });
});

describe('Store after a watch DELETED', () => {
  // A label-selected watch sends DELETED both when the object is deleted and when its label is
  // removed; in the second case it sends ADDED when the label is back. Each step is one thing the
  // store is told, in the order it is told it; `a` has uid-a throughout.
  type Step =
    | ['event', 'ADDED' | 'MODIFIED' | 'DELETED', string]
    | ['list', string]
    | ['our create answered', string]
    | ['our delete answered'];
  const a = (resourceVersion: string): Item => item('a', resourceVersion);
  const tell = (store: Store<Item>, step: Step): StoreChange<Item>[] => {
    switch (step[0]) {
      case 'event':
        return [store.applyEvent(step[1], a(step[2]))].filter((change) => change !== undefined);
      case 'list':
        return store.replace([a(step[1])]);
      case 'our create answered':
        store.observeWrite(a(step[1]));
        return [];
      case 'our delete answered':
        store.observeDelete('a', 'uid-a');
        return [];
    }
  };

  it.each<[string, Step[], string | undefined]>([
    ['label removed, then put back: ADDED is taken', [['event', 'DELETED', '2'], ['event', 'ADDED', '3']], '3'],
    ['label removed, then a relist shows it again', [['event', 'DELETED', '2'], ['list', '3']], '3'],
    ['label removed and put back twice', [['event', 'DELETED', '2'], ['event', 'ADDED', '3'], ['event', 'DELETED', '4'], ['event', 'ADDED', '5']], '5'],
    ['back in the selection, then edited', [['event', 'DELETED', '2'], ['event', 'ADDED', '3'], ['event', 'MODIFIED', '4']], '4'],
    ['back in the selection, then deleted by hand', [['event', 'DELETED', '2'], ['event', 'ADDED', '3'], ['event', 'DELETED', '4']], undefined],
    ['our create answered after the watch showed it leave', [['event', 'DELETED', '2'], ['our create answered', '1']], undefined],
    ['our create answered after it left and came back (already held)', [['event', 'DELETED', '2'], ['event', 'ADDED', '3'], ['our create answered', '1']], '3'],
    ['our delete, then the watch DELETED, then a lagging ADDED', [['our delete answered'], ['event', 'DELETED', '2'], ['event', 'ADDED', '1']], undefined],
    ['the watch DELETED, then our delete, then a list sent before it', [['event', 'DELETED', '2'], ['our delete answered'], ['list', '1']], undefined],
  ])('%s', (_, steps, held) => {
    const store = new Store<Item>();
    store.replace([a('1')]);
    for (const step of steps) tell(store, step);
    expect(store.get('a')?.metadata.resourceVersion).toBe(held);
  });

  it('reports the object coming back as an addition (so that its distribution is reconciled)', () => {
    const store = new Store<Item>();
    store.replace([a('1')]);
    expect(tell(store, ['event', 'DELETED', '2'])).toEqual([{ old: a('1') }]);
    expect(tell(store, ['event', 'ADDED', '3'])).toEqual([{ old: undefined, current: a('3') }]);
  });
});

describe('Store index values', () => {
  type Labelled = Item & { metadata: { labels: { team: string } } };
  const labelled = (name: string, team: string, resourceVersion = '1'): Labelled => ({ metadata: { ...item(name, resourceVersion).metadata, labels: { team } } });
  const teamIndex = { team: (object: Labelled) => [object.metadata.labels.team] };

  it.each<[string, (store: Store<Labelled>) => void, string[]]>([
    ['nothing held', () => undefined, []],
    ['two objects of one value, one of another', (store) => store.replace([labelled('a', 'red'), labelled('b', 'red'), labelled('c', 'blue')]), ['red', 'blue']],
    ['the last object of a value deleted', (store) => (store.replace([labelled('a', 'red'), labelled('c', 'blue')]), store.applyEvent('DELETED', labelled('c', 'blue', '2'))), ['red']],
    ['an object moved to another value', (store) => (store.replace([labelled('a', 'red')]), store.applyEvent('MODIFIED', labelled('a', 'green', '2'))), ['green']],
  ])('%s: %j', (_, change, values) => {
    const store = new Store<Labelled>(teamIndex, (object) => object.metadata.name);
    change(store);
    expect([...store.indexValues('team')]).toEqual(values);
    expect([...store.indexValues('no such index')]).toEqual([]);
  });
});
