// The before/after tables of the migration pages hold what `resource-distributor convert` prints:
// each left-hand side, converted, is the right-hand side (the distributions' specs, and names
// where the page uses the converter's names).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { convertManifests } from '../../../src/convert/convert.js';
import { parseManifests } from '../../../src/convert/manifests.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The YAML of each side of each `<table>` of a page: [before, after]. */
function sideBySide(path: string): [string, string][] {
  const text = readFileSync(`${ROOT}/${path}`, 'utf8');
  return [...text.matchAll(/<table>([\s\S]*?)<\/table>/g)].map((table) => {
    const blocks = [...(table[1] ?? '').matchAll(/```yaml\n([\s\S]*?)```/g)].map((block) => block[1] ?? '');
    if (blocks.length !== 2) throw new Error(`${path}: a table without two YAML blocks`);
    return [blocks[0] ?? '', blocks[1] ?? ''];
  });
}

function converted(before: string): { metadata: { name: string }; spec: unknown }[] {
  return convertManifests(parseManifests(before, 'page')).distributions.map((distribution) => distribution.object);
}

function documented(after: string): { metadata: { name: string }; spec: unknown }[] {
  return parseAllDocuments(after).map((document) => document.toJS() as { metadata: { name: string }; spec: unknown });
}

describe('the migration page from replicator, reflector and Kyverno', () => {
  const tables = sideBySide('docs/tasks/migrate-from-replicator-reflector-kyverno.md');

  it('has a table per tool', () => {
    expect(tables).toHaveLength(3);
  });

  it.each(tables.map((table, index) => [index + 1, ...table]))('table %i: the converter prints the right-hand side', (_, before, after) => {
    expect(converted(before)).toEqual(documented(after));
  });
});

describe('the Kyverno example of "Migrate from other tools", written by hand', () => {
  it('is what the converter makes of the rule, but for the name', () => {
    const [[before, after] = ['', '']] = sideBySide('docs/tasks/migrate.md');
    expect(converted(before).map((distribution) => distribution.spec)).toEqual(documented(after).map((distribution) => distribution.spec));
  });
});
