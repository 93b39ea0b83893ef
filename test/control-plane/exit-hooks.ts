/**
 * Tears running control planes down when the process that started them goes away: `exit` (sync:
 * SIGKILL and remove the temp dir) and SIGINT/SIGTERM/SIGHUP (the graceful stop first). Children
 * also have a watchdog of their own (see processes.ts) for the case where this process is killed
 * outright.
 */
export interface Teardown {
  /** Graceful, may take seconds. */
  stop(): Promise<void>;
  /** Last resort from the `exit` event: synchronous only. */
  killNow(): void;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const SIGNAL_STOP_TIMEOUT_MS = 10_000;

const live = new Set<Teardown>();
let installed = false;

function onExit(): void {
  for (const teardown of live) teardown.killNow();
  live.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  // When nobody else handles the signal, restore its default effect (terminate) after cleanup;
  // otherwise the other handler (a test runner, scripts/dev.ts) decides when to exit.
  const alone = process.listenerCount(signal) === 1;
  const pending = [...live].map((teardown) => teardown.stop());
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, SIGNAL_STOP_TIMEOUT_MS).unref());
  void Promise.race([Promise.allSettled(pending), deadline]).then(() => {
    if (alone) {
      uninstall();
      process.kill(process.pid, signal);
    }
  });
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', onExit);
  for (const signal of SIGNALS) process.on(signal, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off('exit', onExit);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

/** Registers a running control plane; the returned function unregisters it (after its stop). */
export function registerTeardown(teardown: Teardown): () => void {
  live.add(teardown);
  install();
  return () => {
    live.delete(teardown);
    if (live.size === 0) uninstall();
  };
}
