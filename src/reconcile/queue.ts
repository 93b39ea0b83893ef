// The work queue: names, not events. A name waits at most once; a name added while its reconcile
// is in flight runs again right after; failures come back with per-name exponential backoff
// (reset by a success); at most `concurrency` reconciles run at once. Waiting names are taken in
// turn per group (one per group, round robin), so that the thousand distributions of one
// ObjectSync do not hold up an unrelated distribution's change behind them. Heavy names (those
// with many copies) never take the last free worker: a small change always finds one, even while
// several large distributions are rewritten at once.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from '../log.js';

/**
 * What a reconcile asks for: done (wait for a change), retry (with backoff), or continue (its
 * work is not over: run again after the names waiting now, without backoff). Throwing means retry.
 */
export type ProcessResult = 'done' | 'retry' | 'continue';

export interface QueueOptions {
  concurrency: number;
  /**
   * `signal` aborts when the queue stops (leadership lost): a long fan-out must then stop starting
   * writes, since another replica may soon be writing the same objects.
   */
  process(name: string, signal: AbortSignal): Promise<ProcessResult>;
  log: Logger;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  /** Called with the number of names waiting whenever it changes (the queueDepth metric). */
  onDepth?(depth: number): void;
  /** Names of one group wait behind each other, not behind other groups' (default: each name its own group). */
  groupOf?(name: string): string;
  /** A name whose reconcile is long (many copies): such names leave one worker to the others. */
  isHeavy?(name: string): boolean;
}

export class WorkQueue {
  private readonly ready = new Set<string>();
  /** The waiting names by group, groups in the order they take turns. */
  private readonly turns = new Map<string, Set<string>>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly heavyInFlight = new Set<string>();
  /**
   * Whether each waiting name is heavy, as judged when it was queued: a dequeue that must pass
   * over heavy names (their slots taken) then tests each with a lookup, and stops at once when no
   * light name waits, instead of counting every waiting distribution's copies again.
   */
  private readonly waitingHeavy = new Map<string, boolean>();
  private lightWaiting = 0;
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly retryTimers = new Map<string, NodeJS.Timeout>();
  private idleWaiters: (() => void)[] = [];
  /** The turn of the event loop the last run waits for, until it comes (see run). */
  private pendingTurn: Promise<void> | undefined;
  private running = false;
  private stopping: Promise<void> | undefined;
  private term = new AbortController();

  constructor(private readonly options: QueueOptions) {}

  get depth(): number {
    return this.ready.size;
  }

  start(): void {
    if (this.term.signal.aborted) this.term = new AbortController();
    this.running = true;
    this.stopping = undefined;
    this.pump();
  }

  /**
   * Stops taking work, forgets what waits, tells the reconciles in flight to stop starting writes,
   * and resolves once they ended.
   */
  stop(): Promise<void> {
    this.running = false;
    this.term.abort();
    for (const timer of this.retryTimers.values()) clearTimeout(timer);
    this.retryTimers.clear();
    this.ready.clear();
    this.turns.clear();
    this.waitingHeavy.clear();
    this.lightWaiting = 0;
    this.dirty.clear();
    this.failures.clear();
    this.reportDepth();
    this.stopping ??= Promise.all(this.inFlight.values()).then(() => undefined);
    return this.stopping;
  }

  add(name: string): void {
    if (!this.running) return;
    const timer = this.retryTimers.get(name);
    if (timer !== undefined) {
      clearTimeout(timer);
      this.retryTimers.delete(name);
    }
    if (this.inFlight.has(name)) {
      this.dirty.add(name);
      return;
    }
    if (this.ready.has(name)) return;
    this.enqueue(name);
    this.reportDepth();
    this.pump();
  }

  addAll(names: Iterable<string>): void {
    for (const name of names) this.add(name);
  }

  /** Resolves when nothing waits and nothing runs (retries scheduled for later do not count). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** The delay before the next retry of a name that failed `failures` times in a row. */
  private backoffMs(failures: number): number {
    const initial = this.options.backoffInitialMs ?? 100;
    const max = this.options.backoffMaxMs ?? 300_000;
    return Math.min(max, initial * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  }

  private isIdle(): boolean {
    return this.ready.size === 0 && this.inFlight.size === 0;
  }

  private pump(): void {
    while (this.running && this.inFlight.size < this.options.concurrency) {
      const name = this.dequeue();
      if (name === undefined) break;
      if (this.options.isHeavy?.(name) === true) this.heavyInFlight.add(name);
      this.inFlight.set(name, this.run(name));
    }
    this.reportDepth();
    if (this.isIdle()) this.wakeIdle();
  }

  private enqueue(name: string): void {
    const group = this.options.groupOf?.(name) ?? name;
    const names = this.turns.get(group);
    if (names === undefined) this.turns.set(group, new Set([name]));
    else names.add(name);
    this.ready.add(name);
    if (this.waitingHeavy.has(name)) return;
    const heavy = this.options.isHeavy?.(name) === true;
    this.waitingHeavy.set(name, heavy);
    if (!heavy) this.lightWaiting += 1;
  }

  private leaveWaiting(name: string): void {
    if (this.waitingHeavy.get(name) === false) this.lightWaiting -= 1;
    this.waitingHeavy.delete(name);
  }

  /** Whether `name` may take a worker now: a heavy one only while another worker stays free for the rest. */
  private mayStart(name: string): boolean {
    return !this.heavySlotsTaken() || this.waitingHeavy.get(name) !== true;
  }

  private heavySlotsTaken(): boolean {
    return this.heavyInFlight.size >= Math.max(1, this.options.concurrency - 1);
  }

  /**
   * The first name of the first group whose turn it is and whose name may start now; that group
   * then goes to the back.
   */
  private dequeue(): string | undefined {
    if (this.lightWaiting === 0 && this.heavySlotsTaken()) return undefined;
    for (const [group, names] of this.turns) {
      const name = names.values().next().value as string;
      if (!this.mayStart(name)) continue;
      names.delete(name);
      this.turns.delete(group);
      if (names.size > 0) this.turns.set(group, names);
      this.ready.delete(name);
      this.leaveWaiting(name);
      return name;
    }
    return undefined;
  }

  private async run(name: string): Promise<void> {
    let result: ProcessResult;
    try {
      // Reconciles chain through promises alone: without this, a sweep of thousands of names (or
      // the slices of one large pass) would keep watch events, webhook calls and write responses
      // waiting until the last of them is done. One run per turn: the runs of every worker waiting
      // for the same turn would otherwise start one after another in it, with no I/O between.
      await this.ownTurn();
      result = await this.options.process(name, this.term.signal);
    } catch (error) {
      this.options.log.warn({ name, err: error instanceof Error ? error.message : String(error) }, 'reconcile failed');
      result = 'retry';
    }
    this.inFlight.delete(name);
    this.heavyInFlight.delete(name);
    this.settle(name, result);
    this.pump();
  }

  /** The next turn of the event loop no other run starts in. */
  private ownTurn(): Promise<void> {
    const turn = this.pendingTurn === undefined ? nextTurn() : this.pendingTurn.then(() => nextTurn());
    this.pendingTurn = turn;
    void turn.then(() => {
      if (this.pendingTurn === turn) this.pendingTurn = undefined;
    });
    return turn;
  }

  private settle(name: string, result: ProcessResult): void {
    if (!this.running) return;
    if (result !== 'retry') this.failures.delete(name);
    if (this.dirty.delete(name) || result === 'continue') {
      // A change arrived meanwhile, or the work goes on: run again after those waiting, whatever the result.
      this.enqueue(name);
      return;
    }
    if (result === 'done') return;
    const failures = (this.failures.get(name) ?? 0) + 1;
    this.failures.set(name, failures);
    const delay = this.backoffMs(failures);
    this.retryTimers.set(
      name,
      setTimeout(() => {
        this.retryTimers.delete(name);
        this.add(name);
      }, delay),
    );
  }

  private reportDepth(): void {
    this.options.onDepth?.(this.ready.size);
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
