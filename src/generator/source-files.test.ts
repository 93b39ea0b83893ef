import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notRegular, readSources, tooLarge } from './source-files.js';

type Kind = 'file' | 'directory' | 'fifo' | 'socket' | 'char' | 'block' | 'other';
const statsOf = (kind: Kind) => ({
  isFile: () => kind === 'file',
  isDirectory: () => kind === 'directory',
  isFIFO: () => kind === 'fifo',
  isSocket: () => kind === 'socket',
  isCharacterDevice: () => kind === 'char',
  isBlockDevice: () => kind === 'block',
});

describe('what a generator may read', () => {
  it.each<[Kind, string | undefined]>([
    ['file', undefined],
    ['directory', 'a directory'],
    ['fifo', 'a FIFO (named pipe)'],
    ['socket', 'a socket'],
    ['char', 'a character device'],
    ['block', 'a block device'],
    ['other', 'something else'],
  ])('%s: %s', (kind, said) => {
    expect(notRegular(statsOf(kind))).toBe(said);
  });

  it.each([
    [0, undefined],
    [1024 * 1024, undefined],
    [1024 * 1024 + 1, '1048577 bytes, over the 1 MiB (1048576 bytes) a Secret or ConfigMap may hold: split it'],
    [300 * 1000 * 1000, '300000000 bytes, over the 1 MiB (1048576 bytes) a Secret or ConfigMap may hold: split it'],
  ])('%i bytes: %s', (size, said) => {
    expect(tooLarge(size)).toBe(said);
  });
});

describe('readSources', () => {
  let root = '';
  let socketServer: Server | undefined;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'rd-sources-'));
    await writeFile(join(root, 'app.properties'), 'FOO=bar\n');
    await writeFile(join(root, 'exact.bin'), Buffer.alloc(1024 * 1024, 1));
    // Sparse: 300 MB long, nothing written to disk.
    const big = await open(join(root, 'big.bin'), 'w');
    await big.truncate(300 * 1000 * 1000);
    await big.close();
    execFileSync('mkfifo', [join(root, 'pipe')]);
    await mkdir(join(root, 'config'));
    socketServer = createServer();
    await new Promise<void>((resolve) => socketServer?.listen(join(root, 'socket'), resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => socketServer?.close(resolve));
    await rm(root, { recursive: true, force: true });
  });

  it('reads regular files, up to 1 MiB each', async () => {
    const contents = await readSources(root, ['app.properties', 'exact.bin']);
    expect(contents.get('app.properties')?.toString('utf8')).toBe('FOO=bar\n');
    expect(contents.get('exact.bin')?.length).toBe(1024 * 1024);
  });

  it.each([
    ['pipe', 'a FIFO (named pipe), not a regular file'],
    ['socket', 'a socket or a device, not a regular file'],
    ['missing.txt', 'no such file'],
    ['config', 'a directory, not a regular file'],
    ['big.bin', '300000000 bytes, over the 1 MiB (1048576 bytes) a Secret or ConfigMap may hold: split it'],
    ['/dev/zero', 'outside the kustomization directory'],
  ])('refuses %s before reading it: %s', async (path, message) => {
    const before = process.memoryUsage().arrayBuffers;
    await expect(readSources(root, [path])).rejects.toThrow(message);
    // Nothing of it was read (a 300 MB read would show here).
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
  });
});
