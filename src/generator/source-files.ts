// Reading the files a generator config names: each must be a regular file within the kustomization
// directory and no larger than a Secret or ConfigMap may be, all checked on the open file before a
// byte is read. A FIFO would block the read forever (kustomize waits with it), and a 300 MB file
// would be read whole and its base64 built before the size check refused it.
import { constants, type Stats } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { quote } from '../domain/field-problem.js';
import { MAX_SIZE } from '../domain/validate-content.js';
import { GeneratorError } from './config.js';
import { isWithin, sourcePath } from './source-path.js';

/** What a file that is not a regular one is, in words; undefined for a regular file. */
export function notRegular(stats: Pick<Stats, 'isFile' | 'isDirectory' | 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice'>): string | undefined {
  if (stats.isFile()) return undefined;
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'something else';
}

/** Why a file of `size` bytes cannot be a source; undefined when it may be. */
export function tooLarge(size: number): string | undefined {
  if (size <= MAX_SIZE) return undefined;
  return `${size} bytes, over the 1 MiB (${MAX_SIZE} bytes) a Secret or ConfigMap may hold: split it`;
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'a directory, not a regular file',
  EACCES: 'permission denied',
  // What opening a socket gives.
  ENXIO: 'a socket or a device, not a regular file',
};

function failedRead(path: string, root: string, error: unknown): GeneratorError {
  const code = (error as NodeJS.ErrnoException).code;
  return new GeneratorError(`cannot read ${quote(path)} in ${root}: ${READ_ERRORS[code ?? ''] ?? String(error)}`);
}

/** At most `limit` + 1 bytes: a file that grew after it was measured is still refused, never read whole. */
async function readBounded(handle: FileHandle, limit: number): Promise<Buffer> {
  const buffer = Buffer.alloc(limit + 1);
  let length = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0 || (length += bytesRead) === buffer.length) return buffer.subarray(0, length);
  }
}

/** One file, checked on its open descriptor (what is measured is what is read). */
async function readOne(real: string, path: string, root: string): Promise<Buffer> {
  // Non-blocking: opening a FIFO waits for a writer otherwise, before its type could be seen.
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    const other = notRegular(stats);
    const refusal = other === undefined ? tooLarge(stats.size) : `${other}, not a regular file`;
    if (refusal !== undefined) throw new GeneratorError(`cannot read ${quote(path)} in ${root}: ${refusal}`);
    const content = await readBounded(handle, MAX_SIZE);
    const grown = tooLarge(content.length);
    if (grown !== undefined) throw new GeneratorError(`cannot read ${quote(path)} in ${root}: more than ${MAX_SIZE} bytes (it grew while read), over the 1 MiB limit`);
    return content;
  } finally {
    await handle.close();
  }
}

/** Each file by the path written in the config; a symbolic link may not lead out of the directory either. */
export async function readSources(root: string, paths: readonly string[]): Promise<Map<string, Buffer>> {
  const realRoot = await realpath(root);
  const contents = new Map<string, Buffer>();
  for (const path of paths) {
    const full = sourcePath(root, path);
    try {
      const real = await realpath(full);
      if (!isWithin(realRoot, real)) throw new GeneratorError(`${quote(path)} leads to ${real}, outside the kustomization directory ${realRoot}`);
      contents.set(path, await readOne(real, path, root));
    } catch (error) {
      throw error instanceof GeneratorError ? error : failedRead(path, root, error);
    }
  }
  return contents;
}
