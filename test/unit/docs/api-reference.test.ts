// docs/reference/api.md is generated from the CRDs: it lists every field of every version, and
// it fails here when a CRD changes and the page was not regenerated (`npm run docs:api`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { crdFiles } from '../../../scripts/api-reference.js';
import { apiReference, boundsOf, fieldRows, typeOf } from '../../../scripts/docs/api-reference.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

describe('a field as the reference writes it', () => {
  it.each([
    [{ type: 'string' }, 'string'],
    [{ type: 'integer', format: 'int64' }, 'integer (int64)'],
    [{ type: 'array', items: { type: 'object' } }, 'array of object'],
    [{ type: 'array', items: { type: 'array', items: { type: 'string' } } }, 'array of array of string'],
    [{ type: 'object', additionalProperties: { type: 'string' } }, 'map of string'],
    [{ type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true }, 'object (a complete Kubernetes object)'],
    [{ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, 'object, any fields'],
    [{ 'x-kubernetes-int-or-string': true }, 'integer or string'],
    [{}, 'any'],
  ])('%j is %s', (schema, type) => {
    expect(typeOf(schema)).toBe(type);
  });

  it.each([
    [{ type: 'string', enum: ['ignore', 'strict'] }, 'one of `ignore`, `strict`'],
    [{ type: 'string', maxLength: 63, pattern: '^[a-z]+$' }, 'length ≤ 63; matches `^[a-z]+$`'],
    [{ type: 'array', minItems: 1, maxItems: 10 }, 'items ≥ 1; items ≤ 10'],
    [{ type: 'integer', minimum: 1, maximum: 30 }, '≥ 1; ≤ 30'],
    [{ type: 'object', maxProperties: 64 }, 'entries ≤ 64'],
    [{ type: 'object', 'x-kubernetes-validations': [{ rule: 'has(self.a) != has(self.b)', message: 'set one' }] }, '`has(self.a) != has(self.b)`: set one'],
    [{ type: 'string' }, ''],
  ])('%j is bounded by %s', (schema, bounds) => {
    expect(boundsOf(schema)).toBe(bounds);
  });

  it('flattens nested objects, arrays and maps, with required and defaults', () => {
    const rows = fieldRows({
      type: 'object',
      required: ['a'],
      properties: {
        a: { type: 'string', default: 'x', description: 'A.' },
        list: { type: 'array', items: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } } },
        labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 63 } },
      },
    });
    expect(rows.map((row) => [row.path, row.type, row.required, row.default, row.bounds, row.description])).toEqual([
      ['a', 'string', true, '`x`', '', 'A.'],
      ['list', 'array of object', false, '', '', ''],
      ['list[].n', 'integer', true, '', '', ''],
      ['labels', 'map of string', false, '', '', ''],
      ['labels{}', 'string', false, '', 'length ≤ 63', ''],
    ]);
  });
});

describe('the reference of a CRD with several versions', () => {
  const version = (name: string, storage: boolean, field: string): Record<string, unknown> => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { [field]: { type: 'string', default: 'd', description: `${field} of ${name}` } } } } } },
  });
  const crd = stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { kind: 'Widget', plural: 'widgets' },
      conversion: { strategy: 'Webhook' },
      versions: [version('v1alpha1', false, 'old'), version('v1beta1', true, 'renamed')],
    },
  });
  const page = apiReference([{ file: 'widgets.example.com.yaml', text: crd }]);

  it('has a section per version, each with its own fields, and says which is stored and how they convert', () => {
    expect(page).toContain('Versions: `v1alpha1`, `v1beta1` (stored); conversion between them: Webhook.');
    const [, alpha, beta] = page.split(/^### /m);
    expect(alpha).toMatch(/^`example\.com\/v1alpha1`/);
    expect(alpha).toContain('| `spec.old` | string |  | `d` |  | old of v1alpha1 |');
    expect(alpha).not.toContain('spec.renamed');
    expect(beta).toMatch(/^`example\.com\/v1beta1`/);
    expect(beta).toContain('| `spec.renamed` | string |  | `d` |  | renamed of v1beta1 |');
  });

  it('refuses a file that is not a CRD', () => {
    expect(() => apiReference([{ file: 'x.yaml', text: 'kind: ConfigMap\n' }])).toThrow('x.yaml: not a CustomResourceDefinition');
  });
});

describe('docs/reference/api.md', () => {
  it('is what `npm run docs:api` makes of the CRDs in webhook-config/crd/ (run it after editing a CRD)', async () => {
    const committed = readFileSync(join(ROOT, 'docs/reference/api.md'), 'utf8');
    expect(committed).toBe(apiReference(await crdFiles(ROOT)));
  });

  it('names every field of every version of every CRD', async () => {
    const page = readFileSync(join(ROOT, 'docs/reference/api.md'), 'utf8');
    const { parse } = await import('yaml');
    for (const { text } of await crdFiles(ROOT)) {
      const crd = parse(text) as { spec: { versions: { schema: { openAPIV3Schema: Parameters<typeof fieldRows>[0] } }[] } };
      for (const version of crd.spec.versions) {
        const rows = fieldRows(version.schema.openAPIV3Schema).filter((row) => !['apiVersion', 'kind', 'metadata'].includes(row.path));
        expect(rows.length).toBeGreaterThan(5);
        for (const row of rows) expect(page).toContain(`| \`${row.path}\` |`);
      }
    }
  });
});
