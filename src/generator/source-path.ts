// Files are read from the kustomization's directory and below, as kustomize itself reads them
// (its root-only load restriction): a kustomization cannot read the rest of the machine.
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { quote } from '../domain/field-problem.js';
import { GeneratorError } from './config.js';

/** Whether `path` (absolute) is `root` or below it. */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/** The absolute path of a file the config names (relative to `root`, the kustomization directory); an error when outside it. */
export function sourcePath(root: string, path: string): string {
  if (/^https?:\/\//.test(path)) throw new GeneratorError(`${quote(path)}: remote files are not read, only files within the kustomization directory`);
  const full = resolve(root, path);
  if (!isWithin(root, full)) {
    throw new GeneratorError(`${quote(path)} is outside the kustomization directory ${root}: files are read only from within it`);
  }
  return full;
}
