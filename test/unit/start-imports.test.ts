import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Every package the process loads at start stays in its memory for its whole life: a library needed
// only now and then (making a certificate, an exec credential plugin) is imported when needed.
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

// `import type` and `export type` are erased; any other import or re-export (`import { type A }`
// included, under verbatimModuleSyntax) loads its module. Dynamic `import()` is not matched.
const LOADING_IMPORT = /^\s*(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?'([^']+)'/gm;

function importsOf(source: string): string[] {
  return [...source.matchAll(LOADING_IMPORT)].map((match) => match[1] ?? '');
}

/** The packages (not `node:` built-ins) loaded by the static imports reachable from `entry`. */
function packagesLoadedFrom(entry: string): string[] {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of importsOf(readFileSync(file, 'utf8'))) {
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
      else if (!specifier.startsWith('node:')) packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier));
    }
  };
  visit(entry);
  return [...packages].sort();
}

describe('what the process loads at start', () => {
  it.each([
    ["import { a } from './a.js';", ['./a.js']],
    ["import type { A } from 'x';", []],
    ["export type { A } from './a.js';", []],
    ["import { type A, b } from 'x';", ['x']],
    ["import {\n  a,\n  b,\n} from '@scope/pkg/sub';", ['@scope/pkg/sub']],
    ["export { a } from './a.js';", ['./a.js']],
    ["import 'side-effect';", ['side-effect']],
    ["  const lib = await import('selfsigned');", []],
    ["export const NAME = 'x';", []],
  ])('reads the imports of %j', (source, specifiers) => {
    expect(importsOf(source)).toEqual(specifiers);
  });

  it('is these packages only: the certificate maker and the client library load when used', () => {
    expect(packagesLoadedFrom(resolve(SRC, 'main.ts'))).toEqual(['@hono/node-server', 'ajv', 'ajv-formats', 'hono', 'lru-cache', 'pino', 'prom-client', 'yaml']);
  });
});
