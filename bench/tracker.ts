// What a watch has shown of a set of objects: the latest value of each, when each first showed the
// value a measurement waits for, and when the last of them was deleted. Fan-out and contention time
// their copies with it ("from my request until I can see the result").
import type { SeenObject, WatchListener } from './object-watch.js';
import { waitUntil } from './wait.js';

export type TrackerKey = (object: SeenObject) => string;

/** One object per namespace (a distribution's copies). */
export const byNamespace: TrackerKey = (object) => object.namespace;

/** Several objects per namespace (copies of several sources). */
export const byNamespacedName: TrackerKey = (object) => `${object.namespace}/${object.name}`;

export class Tracker {
  readonly latest = new Map<string, string>();
  readonly reached = new Map<string, number>();
  wanted: ((value: string) => boolean) | undefined;
  /** When the last tracked object was deleted (performance.now() ms); undefined while any is left. */
  emptiedAt: number | undefined;

  constructor(
    private readonly value: (object: SeenObject) => string,
    private readonly key: TrackerKey = byNamespace,
  ) {}

  observe(object: SeenObject, atMs: number): void {
    const key = this.key(object);
    const value = this.value(object);
    this.latest.set(key, value);
    this.emptiedAt = undefined;
    if (this.wanted?.(value) && !this.reached.has(key)) this.reached.set(key, atMs);
  }

  forget(object: SeenObject, atMs: number): void {
    this.latest.delete(this.key(object));
    if (this.latest.size === 0) this.emptiedAt = atMs;
  }

  /** A watch listener feeding this tracker, deletions included. */
  listener(): WatchListener {
    return (type, object, atMs) => (type === 'DELETED' ? this.forget(object, atMs) : this.observe(object, atMs));
  }

  expect(wanted: (value: string) => boolean): void {
    this.wanted = wanted;
    this.reached.clear();
  }

  /** When the first object showed the wanted value (performance.now() ms); undefined while none has. */
  firstReached(): number | undefined {
    return this.reached.size === 0 ? undefined : Math.min(...this.reached.values());
  }

  /** Resolves once every tracked object is gone (deleted `m` objects: the timeout grows with them). */
  async emptied(m: number, what: string, timeoutMs = 60_000 + m * 200): Promise<void> {
    await waitUntil(what, () => this.latest.size === 0, timeoutMs, () => `${this.latest.size} left`);
  }

  /** When the m-th object showed the wanted value (performance.now() ms), once m have. */
  async lastReachedAfter(m: number, what: string, timeoutMs = 60_000 + m * 200): Promise<number> {
    await waitUntil(what, () => this.reached.size >= m, timeoutMs, () => `${this.reached.size} of ${m}`);
    return Math.max(...this.reached.values());
  }
}
