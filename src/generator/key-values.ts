// Where a generated Secret's or ConfigMap's data comes from, by kustomize's configMapGenerator and
// secretGenerator rules: env files first, then literals, then files; a key given twice is an
// error. Pure: the files' contents are passed in, read beforehand by whoever runs this.
import { isUtf8 } from 'node:buffer';
import { posix } from 'node:path';
import { quote } from '../domain/field-problem.js';
import { GeneratorError, type KeyValueSources } from './config.js';

/** One key and its value, with where it came from (for messages). */
export interface KeyValue {
  key: string;
  value: Buffer;
  from: string;
}

/** The files a config reads, as written in it (env files and the paths of `files`), each once. */
export function filesToRead(sources: KeyValueSources): string[] {
  const paths = [...sources.envs, ...sources.files.map((source, i) => parseFileSource(source, `resource.files[${i}]`).path)];
  return [...new Set(paths)];
}

/** `KEY=VALUE`; the value may hold `=`, and loses one pair of surrounding quotes ('…' or "…"). */
export function parseLiteral(source: string, from: string): KeyValue {
  const at = source.indexOf('=');
  if (at <= 0) throw new GeneratorError(`${from}: ${quote(source)} is not a literal: expected KEY=VALUE`);
  const raw = source.slice(at + 1);
  const quoted = raw.length >= 2 && raw[0] === raw.at(-1) && (raw[0] === '"' || raw[0] === "'");
  return { key: source.slice(0, at), value: Buffer.from(quoted ? raw.slice(1, -1) : raw, 'utf8'), from };
}

/** `path` (the key is its base name) or `key=path`. */
export function parseFileSource(source: string, from: string): { key: string; path: string } {
  const parts = source.split('=');
  if (parts.length === 1) return { key: posix.basename(source) || '.', path: source };
  const [key = '', path = ''] = parts;
  if (parts.length > 2) throw new GeneratorError(`${from}: ${quote(source)} holds more than one '=': a key name or file path cannot contain '='`);
  if (key === '') throw new GeneratorError(`${from}: ${quote(source)} has no key before '='`);
  if (path === '') throw new GeneratorError(`${from}: ${quote(source)} has no file path after '='`);
  return { key, path };
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
// Go's unicode.IsSpace: what kustomize trims from the start of an env file line.
const LEADING_SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** Lines as Go's bufio.ScanLines splits them: at \n, a trailing \r dropped, no empty last line. */
function lines(content: Buffer): Buffer[] {
  const result: Buffer[] = [];
  let start = 0;
  while (start < content.length) {
    const newline = content.indexOf(0x0a, start);
    const end = newline === -1 ? content.length : newline;
    result.push(content.subarray(start, end > start && content[end - 1] === 0x0d ? end - 1 : end));
    start = end + 1;
  }
  return result;
}

/**
 * An env file: one `KEY=VALUE` per line (the value as written, up to the line's end; no `=` is an
 * empty value); blank lines and lines starting with `#` skipped, leading spaces ignored, a UTF-8
 * byte order mark at the start dropped.
 */
export function parseEnvFile(content: Buffer, from: string): KeyValue[] {
  return lines(content).flatMap((bytes, i) => {
    const where = `${from} line ${i + 1}`;
    if (!isUtf8(bytes)) throw new GeneratorError(`${where} is not valid UTF-8`);
    const line = (i === 0 && bytes.subarray(0, 3).equals(BOM) ? bytes.subarray(3) : bytes).toString('utf8').replace(LEADING_SPACE, '');
    if (line === '' || line.startsWith('#')) return [];
    const at = line.indexOf('=');
    const key = at === -1 ? line : line.slice(0, at);
    if (key === '') throw new GeneratorError(`${where} has no key before '='`);
    return [{ key, value: Buffer.from(at === -1 ? '' : line.slice(at + 1), 'utf8'), from: where }];
  });
}

function contentOf(contents: ReadonlyMap<string, Buffer>, path: string, from: string): Buffer {
  const content = contents.get(path);
  if (content === undefined) throw new GeneratorError(`${from}: ${quote(path)} was not read`);
  return content;
}

/** Every key and value of the sources, in kustomize's order; a key given twice is an error naming both sources. */
export function collectKeyValues(sources: KeyValueSources, contents: ReadonlyMap<string, Buffer>, resource: string): KeyValue[] {
  const pairs = [
    ...sources.envs.flatMap((path, i) => parseEnvFile(contentOf(contents, path, `resource.envs[${i}]`), `resource.envs[${i}] ${quote(path)}`)),
    ...sources.literals.map((source, i) => parseLiteral(source, `resource.literals[${i}]`)),
    ...sources.files.map((source, i) => {
      const from = `resource.files[${i}]`;
      const { key, path } = parseFileSource(source, from);
      return { key, value: contentOf(contents, path, from), from: `${from} ${quote(path)}` };
    }),
  ];
  const seen = new Map<string, KeyValue>();
  for (const pair of pairs) {
    const first = seen.get(pair.key);
    if (first !== undefined) throw new GeneratorError(`${resource} repeats the key ${quote(pair.key)}: from ${first.from} and from ${pair.from}`);
    seen.set(pair.key, pair);
  }
  return pairs;
}

/** Base64 as kustomize writes it: one line when short, else lines of 70 characters, each ending in \n. */
export function base64Lines(value: Buffer): string {
  const encoded = value.toString('base64');
  if (encoded.length < 70) return encoded;
  return (encoded.match(/.{1,70}/g) ?? []).map((line) => `${line}\n`).join('');
}

/** A ConfigMap value: text when it is valid UTF-8, else binary (base64, in binaryData). */
export function configMapValue(value: Buffer): { field: 'data' | 'binaryData'; text: string } {
  return isUtf8(value) ? { field: 'data', text: value.toString('utf8') } : { field: 'binaryData', text: base64Lines(value) };
}
