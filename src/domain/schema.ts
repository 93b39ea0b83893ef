// Validation of a ResourceDistribution against the CRD's openAPIV3Schema (the same schema the
// API server enforces), compiled once. The schema object is passed in: reading it is I/O.
import { Ajv, type ErrorObject } from 'ajv';
import formatsPlugin from 'ajv-formats';

export interface SchemaProblem {
  path: string;
  message: string;
}

export type SchemaValidator = (object: unknown) => SchemaProblem[];

/** Extensions the API server understands; to ajv they are annotations. */
const KUBERNETES_KEYWORDS = [
  'x-kubernetes-embedded-resource',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];

// ajv-formats is CommonJS: under nodenext its default import is the module object.
const addFormats = formatsPlugin as unknown as typeof formatsPlugin.default;

function integerWithin(bits: 32 | 64): (value: number) => boolean {
  const limit = 2 ** (bits - 1);
  return (value) => Number.isInteger(value) && value >= -limit && value < limit;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `/spec/targets/includedNamespaces/list/1/name` -> `spec.targets.includedNamespaces.list[1].name`. */
export function toFieldPath(pointer: string): string {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  let path = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) path += path === '' ? segment : `.${segment}`;
    else path += `[${JSON.stringify(segment)}]`;
  }
  return path;
}

function describe(error: ErrorObject): SchemaProblem {
  const base = toFieldPath(error.instancePath);
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
    return { path: base === '' ? missing : `${base}.${missing}`, message: 'required field is missing' };
  }
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues ?? [];
    return { path: base, message: `must be one of: ${allowed.map(String).join(', ')}` };
  }
  return { path: base === '' ? '(object)' : base, message: error.message ?? `fails ${error.keyword}` };
}

export function compileSpecValidator(openAPIV3Schema: object): SchemaValidator {
  const ajv = new Ajv({ allErrors: true, strictTypes: false, keywords: KUBERNETES_KEYWORDS });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: integerWithin(32) });
  ajv.addFormat('int64', { type: 'number', validate: integerWithin(64) });
  const validate = ajv.compile(openAPIV3Schema);
  return (object) => {
    if (validate(object)) return [];
    // One problem per field: a float in an int32 field is "not an integer", not also "not int32".
    const byPath = new Map<string, SchemaProblem>();
    for (const problem of (validate.errors ?? []).map(describe)) {
      if (!byPath.has(problem.path)) byPath.set(problem.path, problem);
    }
    return [...byPath.values()];
  };
}
