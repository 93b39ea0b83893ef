// List + watch one kind into a Store, for as long as the process lives. Unlike client-node's
// informer it never gives up: any failure restarts the watch with backoff (relisting when the
// resourceVersion is too old), and a watchdog restarts a watch that went silent.
import type { Logger } from '../log.js';
import type { ListResult, WatchCallbacks, WatchEvent, WatchHandle, WatchOptions } from './cluster-api.js';
import { describeApiError } from './errors.js';
import type { Store, Stored, StoreChange } from './store.js';

export interface ReflectorOptions<T extends Stored> {
  /** For logs: `namespaces`, `secrets`... */
  resource: string;
  list(): Promise<ListResult<T>>;
  watch(options: Pick<WatchOptions, 'resourceVersion' | 'timeoutSeconds' | 'held'>, callbacks: WatchCallbacks): Promise<WatchHandle>;
  store: Store<T>;
  /** Trims what is kept in memory (e.g. a namespace down to name, uid, labels). */
  transform?: (object: T) => T;
  onChange(change: StoreChange<T>): void;
  log: Logger;
  /** Server-side watch timeout; the watch is then resumed from the last resourceVersion. */
  watchTimeoutSeconds?: number;
  /** No event or bookmark for this long (beyond the watch timeout) means the watch is stalled. */
  stallGraceMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
}

const GONE = 410;

export class Reflector<T extends Stored> {
  private resourceVersion = '';
  private handle: WatchHandle | undefined;
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private generation = 0;
  private running = false;
  private failures = 0;
  private hasSynced = false;
  private readonly syncWaiters: (() => void)[] = [];
  private readonly timeoutSeconds: number;
  private readonly stallMs: number;

  constructor(private readonly options: ReflectorOptions<T>) {
    this.timeoutSeconds = options.watchTimeoutSeconds ?? 300;
    this.stallMs = this.timeoutSeconds * 1000 + (options.stallGraceMs ?? 30_000);
  }

  get synced(): boolean {
    return this.hasSynced;
  }

  whenSynced(): Promise<void> {
    if (this.hasSynced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.relist();
  }

  stop(): void {
    this.running = false;
    this.generation += 1;
    this.stopWatch();
    clearTimeout(this.timer);
  }

  private async relist(): Promise<void> {
    const generation = ++this.generation;
    this.stopWatch();
    try {
      const { items, resourceVersion } = await this.options.list();
      if (generation !== this.generation) return;
      const transform = this.options.transform ?? ((object: T): T => object);
      const changes = this.options.store.replace(items.map(transform));
      this.resourceVersion = resourceVersion;
      this.markSynced();
      for (const change of changes) this.notify(change);
      void this.startWatch();
    } catch (error) {
      if (generation !== this.generation) return;
      this.retryLater(() => this.relist(), error, 'list failed');
    }
  }

  private async startWatch(): Promise<void> {
    if (!this.running) return;
    const generation = ++this.generation;
    const run = { startedAt: Date.now(), events: 0 };
    this.armWatchdog(generation);
    try {
      const handle = await this.options.watch(
        { resourceVersion: this.resourceVersion, timeoutSeconds: this.timeoutSeconds, held: (key, version) => this.options.store.holds(key, version) },
        {
          onEvent: (event) => {
            run.events += 1;
            if (generation === this.generation) this.handleEvent(event, generation);
          },
          onDone: (error) => {
            if (generation === this.generation) this.handleDone(error, run);
          },
        },
      );
      if (generation === this.generation) this.handle = handle;
      else handle.stop();
    } catch (error) {
      if (generation === this.generation) this.handleDone(error ?? new Error('watch failed'), run);
    }
  }

  private handleEvent(event: WatchEvent, generation: number): void {
    this.armWatchdog(generation);
    if (event.type === 'ERROR') {
      const code = typeof event.object.code === 'number' ? event.object.code : 0;
      this.stopWatch();
      this.generation += 1;
      if (code === GONE) {
        this.options.log.info({ resource: this.options.resource }, 'watch expired, relisting');
        void this.relist();
      } else {
        this.retryLater(() => this.startWatch(), event.object, 'watch error');
      }
      return;
    }
    const version = event.object.metadata?.resourceVersion;
    if (version) this.resourceVersion = version;
    this.failures = 0;
    if (event.type === 'BOOKMARK') return;
    const object = event.object as unknown as T;
    const stored = this.options.transform ? this.options.transform(object) : object;
    const change = this.options.store.applyEvent(event.type, stored);
    if (change) this.notify(change);
  }

  /**
   * A throwing listener must neither stop the watch nor go unnoticed: an exception thrown from an
   * event handler would end the watch stream (and a relist would follow).
   */
  private notify(change: StoreChange<T>): void {
    try {
      this.options.onChange(change);
    } catch (error) {
      this.options.log.error({ resource: this.options.resource, err: error instanceof Error ? error.message : String(error) }, 'change listener failed');
    }
  }

  /**
   * A watch the server ended without an error resumes at once, unless it ended within a second
   * without an event (what client-go calls a very short watch). One that delivered events made
   * progress however short it was: the API server closes a watcher that falls behind a burst of
   * changes (thousands of copies written at once), and waiting before resuming would leave the
   * cache that much further behind. A very short watch lists again after a backoff, as client-go
   * does, instead of watching from the same version: the API server closes a new watcher at once
   * when the changes it missed do not fit its buffer, so each replay of them would be closed too,
   * a longer one after every backoff.
   */
  private handleDone(error: unknown, run: { startedAt: number; events: number }): void {
    this.stopWatch();
    this.generation += 1;
    if (!this.running) return;
    if (error === undefined && (run.events > 0 || Date.now() - run.startedAt > 1000)) {
      void this.startWatch();
      return;
    }
    const info = error === undefined ? undefined : describeApiError(error);
    if (info?.code === GONE) {
      this.options.log.info({ resource: this.options.resource }, 'watch expired, relisting');
      void this.relist();
      return;
    }
    if (error === undefined) this.retryLater(() => this.relist(), new Error('watch closed at once'), 'watch ended');
    else this.retryLater(() => this.startWatch(), error, 'watch ended');
  }

  private retryLater(next: () => Promise<void>, error: unknown, message: string): void {
    if (!this.running) return;
    this.failures += 1;
    const initial = this.options.backoffInitialMs ?? 250;
    const max = this.options.backoffMaxMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** Math.min(this.failures - 1, 20));
    const delayMs = Math.round(base * (0.8 + Math.random() * 0.4));
    const info = describeApiError(error);
    this.options.log.warn(
      { resource: this.options.resource, code: info.code, reason: info.reason, err: info.message, delayMs, failures: this.failures },
      message,
    );
    // After repeated failures the resourceVersion may be long gone: start over from a list.
    const retry = this.failures >= 5 ? (): Promise<void> => this.relist() : next;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void retry(), delayMs);
  }

  private armWatchdog(generation: number): void {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (generation !== this.generation || !this.running) return;
      this.options.log.warn({ resource: this.options.resource, stallMs: this.stallMs }, 'watch silent, restarting');
      this.stopWatch();
      void this.startWatch();
    }, this.stallMs);
  }

  private stopWatch(): void {
    clearTimeout(this.watchdog);
    this.handle?.stop();
    this.handle = undefined;
  }

  private markSynced(): void {
    if (this.hasSynced) return;
    this.hasSynced = true;
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }
}
