#!/usr/bin/env node
// The ResourceDistributionGenerator as kustomize runs it (an exec KRM function): the ResourceList
// on stdin, the files its config names read from the working directory (the kustomization's,
// where kustomize starts it), the ResourceList with the generated ResourceDistribution on stdout.
// Any problem: a message on stderr and exit code 1, which fails the build.
import { text } from 'node:stream/consumers';
import { GENERATOR_KIND, GeneratorError, parseGeneratorConfig } from './config.js';
import { buildDistribution } from './distribution.js';
import { filesToRead } from './key-values.js';
import { formatResourceList, parseResourceList } from './resource-list.js';
import { readSources } from './source-files.js';

const NAME = 'resourcedistributiongenerator';

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
