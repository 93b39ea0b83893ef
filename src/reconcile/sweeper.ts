// The periodic full sweep: every so often, every distribution is enqueued, whatever the watches
// said. It repairs what a missed event would otherwise leave wrong; when nothing changed it costs
// no API request (reconcile reads caches and writes nothing).
export interface Sweeper {
  start(): void;
  stop(): void;
  /** Enqueues everything now. */
  sweep(): void;
}

export function createSweeper(options: { intervalMs: number; names(): Iterable<string>; enqueue(names: Iterable<string>): void }): Sweeper {
  let timer: NodeJS.Timeout | undefined;
  const sweep = (): void => options.enqueue(options.names());
  return {
    start: () => {
      clearInterval(timer);
      sweep();
      timer = setInterval(sweep, options.intervalMs);
    },
    stop: () => {
      clearInterval(timer);
      timer = undefined;
    },
    sweep,
  };
}
