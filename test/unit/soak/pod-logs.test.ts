// The replicas' logs as the soak reads them from the kubelet's files: each read returns the lines
// printed since the last, and every record read is kept, so that an instance's whole log outlives
// the kubelet's removal of its file.
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PodLogs } from '../../soak/pod-logs.js';

let root: string | undefined;
afterEach(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

const record = (text: string): string => `2026-11-29T10:42:17.974000000Z stdout F ${text}\n`;

describe('PodLogs', () => {
  it('reads each instance on from where it stopped, and keeps every instance whole after the kubelet removed its file', async () => {
    root = await mkdtemp(join(tmpdir(), 'pod-logs-'));
    const kubelet = join(root, 'kubelet');
    const keep = join(root, 'kept');
    const container = join(kubelet, 'soak-system_rd-0_uid-1', 'resource-distributor');
    await mkdir(container, { recursive: true });
    // Another namespace's pod is not read.
    await mkdir(join(kubelet, 'other_pod_uid-2', 'c'), { recursive: true });
    await writeFile(join(kubelet, 'other_pod_uid-2', 'c', '0.log'), record('not ours'));
    const logs = new PodLogs(kubelet, 'soak-system', keep);

    await writeFile(join(container, '0.log'), record('started') + record('pass done'));
    expect(await logs.newLines()).toEqual([{ where: 'log of rd-0 (instance 0)', lines: ['started', 'pass done'] }]);
    // A record still being written is read whole next time.
    await appendFile(join(container, '0.log'), record('killed soon') + '2026-11-29T10:42:18Z stdout F half');
    expect(await logs.newLines()).toEqual([{ where: 'log of rd-0 (instance 0)', lines: ['killed soon'] }]);

    // Restarted: the kubelet writes 1.log, and removes 0.log later.
    await rm(join(container, '0.log'));
    await writeFile(join(container, '1.log'), record('started again'));
    expect(await logs.newLines()).toEqual([{ where: 'log of rd-0 (instance 1)', lines: ['started again'] }]);

    const kept = join(keep, 'soak-system_rd-0_uid-1', 'resource-distributor');
    expect(await readFile(join(kept, '0.log'), 'utf8')).toBe(record('started') + record('pass done') + record('killed soon'));
    expect(await readFile(join(kept, '1.log'), 'utf8')).toBe(record('started again'));
  });
});
