import { open, readFile, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

const POLL_MS = 1_000;
const REPORT_EVERY_MS = 30_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function tryCreate(path: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx');
    await handle.writeFile(String(process.pid));
    await handle.close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function holder(path: string): Promise<number | undefined> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isInteger(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An exclusive lock file holding the owner's pid, so that two concurrent runs do not build the
 * same binaries twice. A lock whose owner died is taken over. Resolves to the release function.
 */
export async function acquireLock(path: string, log: (line: string) => void): Promise<() => Promise<void>> {
  const started = Date.now();
  let reported = Number.NEGATIVE_INFINITY;
  for (;;) {
    if (await tryCreate(path)) return () => rm(path, { force: true });
    const pid = await holder(path);
    // A lock file without a pid yet is being written right now: wait for it like any other.
    if (pid !== undefined && !isAlive(pid)) {
      log(`removing stale build lock of pid ${pid}`);
      await rm(path, { force: true });
      continue;
    }
    if (Date.now() - reported >= REPORT_EVERY_MS) {
      reported = Date.now();
      log(`waiting for another build (pid ${pid ?? '?'}): ${Math.round((reported - started) / 1000)} s`);
    }
    await sleep(POLL_MS);
  }
}
