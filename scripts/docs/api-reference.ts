// The API reference (docs/reference/api.md), rendered from the CRDs of webhook-config/crd/: every
// field of every version each CRD declares, with its type, default, bounds and description. Pure:
// the caller reads the CRD files and writes the page (`npm run docs:api`); a unit test fails when
// the page and the CRDs disagree.
import { parse } from 'yaml';

interface Schema {
  type?: string;
  format?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  maxLength?: number;
  minLength?: number;
  maxItems?: number;
  minItems?: number;
  maxProperties?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  nullable?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-validations'?: { rule: string; message?: string }[];
}

interface PrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface Version {
  name: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  additionalPrinterColumns?: PrinterColumn[];
  schema?: { openAPIV3Schema?: Schema };
}

interface Crd {
  kind?: string;
  metadata?: { name?: string };
  spec?: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; shortNames?: string[] };
    versions: Version[];
    conversion?: { strategy?: string };
  };
}

/** A field of a schema, flattened: where it is and what it holds. */
export interface FieldRow {
  path: string;
  type: string;
  required: boolean;
  default: string;
  bounds: string;
  description: string;
}

/** A table cell: one line, its pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|').trim();
}

function code(value: unknown): string {
  return `\`${typeof value === 'string' ? value : JSON.stringify(value)}\``;
}

/** The type as a reader writes it: `string`, `integer (int64)`, `array of object`, `map of string`. */
export function typeOf(schema: Schema): string {
  if (schema['x-kubernetes-embedded-resource'] === true) return 'object (a complete Kubernetes object)';
  if (schema['x-kubernetes-int-or-string'] === true) return 'integer or string';
  if (schema.type === 'array') return `array of ${schema.items === undefined ? 'any' : typeOf(schema.items)}`;
  if (schema.type === 'object' && typeof schema.additionalProperties === 'object') return `map of ${typeOf(schema.additionalProperties)}`;
  const base = schema.type ?? 'any';
  const withFormat = schema.format === undefined ? base : `${base} (${schema.format})`;
  return schema.type === 'object' && schema['x-kubernetes-preserve-unknown-fields'] === true ? `${withFormat}, any fields` : withFormat;
}

/** The bounds a schema puts on its value, as the API server enforces them. */
export function boundsOf(schema: Schema): string {
  const bounds: string[] = [];
  if (schema.enum !== undefined) bounds.push(`one of ${schema.enum.map(code).join(', ')}`);
  const limits: ['minLength' | 'maxLength' | 'minItems' | 'maxItems' | 'maxProperties' | 'minimum' | 'maximum', string][] = [
    ['minLength', 'length ≥'],
    ['maxLength', 'length ≤'],
    ['minItems', 'items ≥'],
    ['maxItems', 'items ≤'],
    ['maxProperties', 'entries ≤'],
    ['minimum', '≥'],
    ['maximum', '≤'],
  ];
  for (const [key, words] of limits) if (schema[key] !== undefined) bounds.push(`${words} ${schema[key]}`);
  if (schema.pattern !== undefined) bounds.push(`matches ${code(schema.pattern)}`);
  if (schema.nullable === true) bounds.push('may be null');
  for (const validation of schema['x-kubernetes-validations'] ?? []) bounds.push(`${code(validation.rule)}${validation.message === undefined ? '' : `: ${validation.message}`}`);
  return bounds.join('; ');
}

/** Every field below `schema`, depth first in the schema's order; array items add `[]`, map values `{}`. */
export function fieldRows(schema: Schema, prefix = ''): FieldRow[] {
  const rows: FieldRow[] = [];
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    rows.push({
      path,
      type: typeOf(field),
      required: required.has(name),
      default: field.default === undefined ? '' : code(field.default),
      bounds: boundsOf(field),
      description: field.description ?? '',
    });
    rows.push(...below(field, path));
  }
  return rows;
}

function below(field: Schema, path: string): FieldRow[] {
  if (field['x-kubernetes-embedded-resource'] === true) return [];
  if (field.type === 'array' && field.items !== undefined) return itemRows(field.items, `${path}[]`);
  if (typeof field.additionalProperties === 'object') return itemRows(field.additionalProperties, `${path}{}`);
  return fieldRows(field, path);
}

/** An array's items or a map's values: a row of their own when they carry bounds, then their fields. */
function itemRows(items: Schema, path: string): FieldRow[] {
  const bounds = boundsOf(items);
  const own = bounds === '' && items.description === undefined ? [] : [{ path, type: typeOf(items), required: false, default: items.default === undefined ? '' : code(items.default), bounds, description: items.description ?? '' }];
  return [...own, ...fieldRows(items, path)];
}

function fieldTable(schema: Schema): string[] {
  const rows = fieldRows(schema).filter((row) => !['apiVersion', 'kind', 'metadata'].includes(row.path));
  return [
    '| field | type | required | default | bounds | description |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => `| \`${row.path}\` | ${cell(row.type)} | ${row.required ? 'yes' : ''} | ${cell(row.default)} | ${cell(row.bounds)} | ${cell(row.description)} |`),
  ];
}

function printerColumns(columns: PrinterColumn[]): string[] {
  if (columns.length === 0) return [];
  return [
    '`kubectl get` columns (those of priority 1 with `-o wide`):',
    '',
    '| column | type | from | priority | description |',
    '|---|---|---|---|---|',
    ...columns.map((column) => `| ${column.name} | ${column.type} | \`${cell(column.jsonPath)}\` | ${column.priority ?? 0} | ${cell(column.description ?? '')} |`),
    '',
  ];
}

function versionSection(group: string, version: Version): string[] {
  const schema = version.schema?.openAPIV3Schema ?? {};
  const status = [version.served === true ? 'served' : 'not served', version.storage === true ? 'the storage version' : ''].filter((word) => word !== '').join(', ');
  return [
    `### \`${group}/${version.name}\``,
    '',
    `${status}${version.deprecated === true ? `; deprecated${version.deprecationWarning === undefined ? '' : `: ${version.deprecationWarning}`}` : ''}.`,
    '',
    ...(schema.description === undefined ? [] : [cell(schema.description), '']),
    ...printerColumns(version.additionalPrinterColumns ?? []),
    ...fieldTable(schema),
    '',
  ];
}

function crdSection(file: string, crd: Crd): string[] {
  if (crd.kind !== 'CustomResourceDefinition' || crd.spec === undefined) throw new Error(`${file}: not a CustomResourceDefinition`);
  const { group, scope, names, versions, conversion } = crd.spec;
  const shortNames = names.shortNames === undefined ? '' : `, short name${names.shortNames.length > 1 ? 's' : ''} ${names.shortNames.map(code).join(', ')}`;
  return [
    `## ${names.kind}`,
    '',
    `\`${crd.metadata?.name ?? `${names.plural}.${group}`}\` ([\`webhook-config/crd/${file}\`](../../webhook-config/crd/${file})): ${scope === 'Cluster' ? 'cluster-scoped' : 'namespaced'}, resource \`${names.plural}\`${shortNames}.`,
    `Versions: ${versions.map((version) => `\`${version.name}\`${version.served === true ? '' : ' (not served)'}${version.storage === true ? ' (stored)' : ''}`).join(', ')}${conversion?.strategy === undefined ? '' : `; conversion between them: ${conversion.strategy}`}.`,
    '',
    ...versions.flatMap((version) => versionSection(group, version)),
  ];
}

/** The page, from the CRD files (name and text), in the order given. */
export function apiReference(crds: { file: string; text: string }[]): string {
  const sections = crds.flatMap(({ file, text }) => crdSection(file, parse(text) as Crd));
  return [
    '# API reference',
    '',
    '<!-- Generated from webhook-config/crd/ by `npm run docs:api`: edit the CRDs, not this page. -->',
    '',
    'Every field of every version the CRDs declare, as the API server validates it. What the fields',
    'do is explained in the [concepts](../README.md#concepts); what admission checks beyond the',
    'schema, in the [security model](../security.md).',
    '',
    ...sections,
  ].join('\n').replace(/\n+$/, '\n');
}
