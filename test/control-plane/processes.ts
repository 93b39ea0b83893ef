import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  name: string;
  pid: number;
  /** stdout and stderr of the process. */
  logPath: string;
  exited: Promise<ExitInfo>;
  hasExited(): boolean;
  /** The last bytes of the log, for error messages. */
  tail(bytes?: number): Promise<string>;
  /** SIGTERM to the process group, SIGKILL after `graceMs` (at once if 0); resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /** `signal` (default SIGKILL) to the process group without waiting (for the synchronous `exit` hook). */
  killNow(signal?: NodeJS.Signals): void;
}

/*
 * Runs in the child's own process group (detached). A background reader holds our end of a pipe;
 * when this process dies for any reason, even SIGKILL, the pipe closes and the reader terminates
 * the whole group, so no server outlives the tests. `exec` keeps the server's pid = group id.
 */
const WATCHDOG = 'exec 3<&0; (read -r _ <&3; kill -TERM 0) & exec "$0" "$@" </dev/null 3<&-';

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

export async function readTail(path: string, bytes = 4_000): Promise<string> {
  try {
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, bytes);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      return buffer.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}

function waitWithTimeout(exited: Promise<ExitInfo>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([exited.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

export function startProcess(name: string, command: string, args: readonly string[], dir: string): ManagedProcess {
  const logPath = join(dir, `${name}.log`);
  const logFd = openSync(logPath, 'a');
  const child = spawn('sh', ['-c', WATCHDOG, command, ...args], {
    cwd: dir,
    detached: true,
    stdio: ['pipe', logFd, logFd],
  });
  closeSync(logFd);
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  if (child.pid === undefined) throw new Error(`cannot start ${name} (${command}): ${spawnError?.message ?? 'no pid'}`);
  const pid = child.pid;
  let done = false;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      // Closing our end lets the watchdog finish too.
      child.stdin?.destroy();
      resolve({ code, signal });
    });
  });
  // Writes to a dead child's stdin fail with EPIPE; nothing is written, but never crash on it.
  child.stdin?.on('error', () => undefined);

  const stop = async (graceMs = 5_000): Promise<void> => {
    if (done) return;
    if (graceMs <= 0) {
      signalGroup(pid, 'SIGKILL');
      await exited;
      return;
    }
    signalGroup(pid, 'SIGTERM');
    if (await waitWithTimeout(exited, graceMs)) return;
    signalGroup(pid, 'SIGKILL');
    await exited;
  };
  return {
    name,
    pid,
    logPath,
    exited,
    hasExited: () => done,
    tail: (bytes?: number) => readTail(logPath, bytes),
    stop,
    killNow: (signal: NodeJS.Signals = 'SIGKILL') => {
      if (!done) signalGroup(pid, signal);
    },
  };
}
