// Helper processes of the bench (the load generator, the memory fixture): TypeScript run through
// tsx, one JSON message per stdout line, stderr passed through. Their stdin is a pipe they watch:
// when the bench dies, the pipe closes and they exit too.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface Child {
  process: ChildProcess;
  /** The next message for which `match` holds; rejects if the child exits first or on timeout. */
  next<T>(match: (message: Record<string, unknown>) => boolean, timeoutMs: number): Promise<T>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

export function benchFile(name: string): string {
  return fileURLToPath(new URL(`./${name}`, import.meta.url));
}

export function startChild(file: string, args: readonly string[], nodeFlags: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Child {
  const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', file, ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const messages: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => {
    done = true;
    for (const wake of waiters) wake();
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      messages.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      console.error(`[bench child] ${line}`);
    }
    for (const wake of waiters) wake();
  });

  return {
    process: child,
    exited,
    next: <T>(match: (message: Record<string, unknown>) => boolean, timeoutMs: number) =>
      new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`${file}: no expected message within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
        const finish = (error?: Error, message?: Record<string, unknown>): void => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolve(message as T);
        };
        const check = (): void => {
          const index = messages.findIndex(match);
          if (index >= 0) finish(undefined, messages.splice(index, 1)[0]);
          else if (done) finish(new Error(`${file} exited with code ${String(child.exitCode)} before sending the expected message`));
        };
        waiters.add(check);
        check();
      }),
    stop: async (graceMs = 10_000) => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      child.stdin?.destroy();
    },
  };
}
