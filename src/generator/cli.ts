#!/usr/bin/env node
// The ResourceDistributionGenerator as kustomize runs it (an exec KRM function): the ResourceList
// on stdin, the files its config names read from the working directory (the kustomization's,
// where kustomize starts it), the ResourceList with the generated ResourceDistribution on stdout.
// Any problem: a message on stderr and exit code 1, which fails the build.
import { readFile, realpath } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { quote } from '../domain/field-problem.js';
import { GENERATOR_KIND, GeneratorError, parseGeneratorConfig } from './config.js';
import { buildDistribution } from './distribution.js';
import { filesToRead } from './key-values.js';
import { formatResourceList, parseResourceList } from './resource-list.js';
import { isWithin, sourcePath } from './source-path.js';

const NAME = 'resourcedistributiongenerator';

function failedRead(path: string, root: string, error: unknown): GeneratorError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory, not a file' : String(error);
  return new GeneratorError(`cannot read ${quote(path)} in ${root}: ${reason}`);
}

/** Each file by the path written in the config; a symbolic link may not lead out of the directory either. */
async function readSources(root: string, paths: readonly string[]): Promise<Map<string, Buffer>> {
  const realRoot = await realpath(root);
  const contents = new Map<string, Buffer>();
  for (const path of paths) {
    const full = sourcePath(root, path);
    try {
      const real = await realpath(full);
      if (!isWithin(realRoot, real)) throw new GeneratorError(`${quote(path)} leads to ${real}, outside the kustomization directory ${realRoot}`);
      contents.set(path, await readFile(real));
    } catch (error) {
      throw error instanceof GeneratorError ? error : failedRead(path, root, error);
    }
  }
  return contents;
}

async function generate(): Promise<void> {
  const list = parseResourceList(await text(process.stdin));
  const { config, warnings } = parseGeneratorConfig(list.functionConfig);
  const which = `${GENERATOR_KIND} ${config.name}`;
  for (const warning of warnings) process.stderr.write(`${NAME}: ${which}: warning: ${warning}\n`);
  try {
    const contents = await readSources(process.cwd(), filesToRead(config.resource.sources));
    process.stdout.write(formatResourceList([...list.items, buildDistribution(config, contents)]));
  } catch (error) {
    throw error instanceof GeneratorError ? new GeneratorError(`${which}: ${error.message}`) : error;
  }
}

try {
  await generate();
} catch (error) {
  const message = error instanceof GeneratorError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(`${NAME}: ${message}\n`);
  process.exitCode = 1;
}
