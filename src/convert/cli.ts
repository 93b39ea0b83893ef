#!/usr/bin/env node
// `resource-distributor convert [--strict] FILE|- ...`: the distributions that replace
// replicator's and reflector's annotations and Kyverno's generate rules in the manifests given,
// on stdout; what cannot be converted on stderr (and as comments in the output). Exit code 1 on an
// unreadable input, and with --strict when anything was not converted.
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { convertManifests } from './convert.js';
import { formatFinding } from './findings.js';
import { ManifestError, type Manifest, parseManifests } from './manifests.js';
import { formatConversion } from './output.js';

const NAME = 'resource-distributor';
const USAGE = `usage: ${NAME} convert [--strict] FILE|- ...\n`;

class UsageError extends Error {}

function argumentsOf(argv: readonly string[]): { strict: boolean; inputs: string[] } {
  const [command, ...rest] = argv;
  if (command !== 'convert') throw new UsageError(command === undefined ? 'no command' : `unknown command "${command}"`);
  const strict = rest.includes('--strict');
  const inputs = rest.filter((argument) => argument !== '--strict');
  const unknown = inputs.find((input) => input.startsWith('-') && input !== '-');
  if (unknown !== undefined) throw new UsageError(`unknown option "${unknown}"`);
  if (inputs.length === 0) throw new UsageError('no input: name files, or - for stdin');
  return { strict, inputs };
}

async function readInput(input: string): Promise<Manifest[]> {
  if (input === '-') return parseManifests(await text(process.stdin), 'stdin');
  let content: string;
  try {
    content = await readFile(input, 'utf8');
  } catch (error) {
    throw new ManifestError(`cannot read ${input}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  return parseManifests(content, input);
}

async function run(): Promise<number> {
  const { strict, inputs } = argumentsOf(process.argv.slice(2));
  const objects: Manifest[] = [];
  for (const input of inputs) objects.push(...(await readInput(input)));
  const conversion = convertManifests(objects);
  process.stdout.write(formatConversion(conversion));
  for (const finding of conversion.findings) process.stderr.write(`${NAME} convert: ${formatFinding(finding)}\n`);
  return strict && conversion.findings.some((finding) => finding.level === 'unconverted') ? 2 : 0;
}

try {
  process.exitCode = await run();
} catch (error) {
  if (error instanceof UsageError) process.stderr.write(`${NAME}: ${error.message}\n${USAGE}`);
  else process.stderr.write(`${NAME}: ${error instanceof ManifestError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
}
