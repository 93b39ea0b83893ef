// What the replica pods printed, read from the kubelet's log files on the node
// (`<pod logs dir>/<namespace>_<pod>_<uid>/<container>/<restart count>.log`): every instance's,
// also those of containers killed and restarted since, as long as the kubelet keeps their files
// (the last ended instance's at least). Read on from where the last read stopped. What is read is
// also kept, under the same names, in a folder the kubelet does not clean: every instance's log
// outlives the run, for a violation's replay.
import { appendFile, mkdir, open, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { TextSource } from './check-leaks.js';
import { emptyCriLogState, readCriLog, type CriLogState } from './cri-log.js';

interface Followed {
  offset: number;
  state: CriLogState;
}

const entries = (dir: string): Promise<string[]> => readdir(dir).catch(() => []);

/** `<container>/<restart count>.log` files of one pod's folder. */
interface LogFile {
  path: string;
  /** The path under the pod logs folder. */
  relative: string;
  where: string;
}

async function podFiles(dir: string, pod: string): Promise<LogFile[]> {
  const podName = pod.split('_')[1] ?? pod;
  const found: LogFile[] = [];
  for (const container of await entries(join(dir, pod))) {
    const files = (await entries(join(dir, pod, container))).filter((file) => /^\d+\.log$/.test(file));
    found.push(...files.map((file) => ({ path: join(dir, pod, container, file), relative: join(pod, container, file), where: `log of ${podName} (instance ${file.replace('.log', '')})` })));
  }
  return found;
}

async function filesOf(dir: string, namespace: string): Promise<LogFile[]> {
  const pods = (await entries(dir)).filter((name) => name.startsWith(`${namespace}_`));
  return (await Promise.all(pods.map((pod) => podFiles(dir, pod)))).flat();
}

async function readFrom(path: string, offset: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    if (size <= offset) return Buffer.alloc(0);
    const buffer = Buffer.alloc(size - offset);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

export class PodLogs {
  private readonly followed = new Map<string, Followed>();

  /** `keepDir`: where every record read is appended, under the kubelet's names. */
  constructor(
    private readonly dir: string,
    private readonly namespace: string,
    private readonly keepDir: string,
  ) {}

  /** The whole lines printed since the last call, by container instance. */
  async newLines(): Promise<TextSource[]> {
    const sources: TextSource[] = [];
    for (const { path, relative, where } of await filesOf(this.dir, this.namespace)) {
      const was = this.followed.get(path) ?? { offset: 0, state: emptyCriLogState() };
      const read = await readFrom(path, was.offset).catch(() => Buffer.alloc(0));
      // Whole records only (up to the last newline): a record still being written, or a character
      // whose bytes are split, is read whole next time.
      const chunk = read.subarray(0, read.lastIndexOf(0x0a) + 1);
      if (chunk.length === 0) continue;
      const { lines, state } = readCriLog(chunk.toString('utf8'), was.state);
      this.followed.set(path, { offset: was.offset + chunk.length, state });
      const kept = join(this.keepDir, relative);
      await mkdir(dirname(kept), { recursive: true });
      await appendFile(kept, chunk);
      sources.push({ where, lines });
    }
    return sources;
  }
}
