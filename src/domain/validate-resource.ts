// Admission rules for spec.resource: what it is (a v1 Secret or ConfigMap with a name) and
// that this identity never changes.
import { asRecord, asString, keyPath, quote, type FieldProblem, type UnknownRecord } from './field-problem.js';
import { DNS_SUBDOMAIN_RULE, isDnsSubdomain, isLabelValue, isQualifiedName, LABEL_VALUE_RULE, QUALIFIED_NAME_RULE } from './k8s-names.js';
import { validateContent } from './validate-content.js';

const KINDS = ['Secret', 'ConfigMap'] as const;
type Kind = (typeof KINDS)[number];

function isKind(value: unknown): value is Kind {
  return KINDS.includes(value as Kind);
}

function checkName(metadata: UnknownRecord | undefined): FieldProblem[] {
  const name = metadata?.name;
  const path = 'spec.resource.metadata.name';
  if (name === undefined || name === '') {
    const generated =
      metadata?.generateName === undefined
        ? []
        : [{ path: 'spec.resource.metadata.generateName', message: 'is not allowed: every copy needs the same, fixed name' }];
    return [...generated, { path, message: 'is required: the name every copy gets' }];
  }
  if (typeof name !== 'string' || !isDnsSubdomain(name)) {
    return [{ path, message: `${quote(name)} is not a valid name (${DNS_SUBDOMAIN_RULE})` }];
  }
  return [];
}

function checkLabels(metadata: UnknownRecord | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries(asRecord(metadata?.labels) ?? {})) {
    const path = keyPath('spec.resource.metadata.labels', key);
    if (!isQualifiedName(key)) problems.push({ path, message: `${quote(key)} is not a valid label key (${QUALIFIED_NAME_RULE})` });
    if (typeof value !== 'string' || !isLabelValue(value)) {
      problems.push({ path, message: `${quote(value)} is not a valid label value (${LABEL_VALUE_RULE})` });
    }
  }
  for (const [key, value] of Object.entries(asRecord(metadata?.annotations) ?? {})) {
    const path = keyPath('spec.resource.metadata.annotations', key);
    if (!isQualifiedName(key)) problems.push({ path, message: `${quote(key)} is not a valid annotation key (${QUALIFIED_NAME_RULE})` });
    if (typeof value !== 'string') problems.push({ path, message: 'must be a string' });
  }
  return problems;
}

function checkIdentity(resource: UnknownRecord): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const { apiVersion, kind } = resource;
  if (apiVersion === undefined) {
    problems.push({ path: 'spec.resource.apiVersion', message: 'is required: set "v1"' });
  } else if (apiVersion !== 'v1') {
    problems.push({
      path: 'spec.resource.apiVersion',
      message: `${quote(apiVersion)} is not supported: only v1 Secret and ConfigMap are distributed, set "v1"`,
    });
  }
  if (kind === undefined) problems.push({ path: 'spec.resource.kind', message: 'is required: Secret or ConfigMap' });
  else if (!isKind(kind)) problems.push({ path: 'spec.resource.kind', message: `${quote(kind)} is not supported: use Secret or ConfigMap` });
  return problems;
}

/** Rules for spec.resource; `warnings` receives what is allowed but probably not meant. */
export function validateResource(value: unknown, warnings: string[]): FieldProblem[] {
  const resource = asRecord(value);
  if (resource === undefined) {
    return [{ path: 'spec.resource', message: 'is required: a complete v1 Secret or ConfigMap manifest' }];
  }
  const metadata = asRecord(resource.metadata);
  if (asString(metadata?.namespace) !== undefined && metadata?.namespace !== '') {
    warnings.push('spec.resource.metadata.namespace is ignored: copies go to the target namespaces');
  }
  return [
    ...checkIdentity(resource),
    ...checkName(metadata),
    ...checkLabels(metadata),
    ...(isKind(resource.kind) ? validateContent(resource, resource.kind) : []),
  ];
}

interface Identity {
  apiVersion: unknown;
  kind: unknown;
  name: unknown;
  /** Where it is written: spec.resource or spec.source. */
  paths: Record<IdentityField, string>;
}

type IdentityField = 'apiVersion' | 'kind' | 'name';
const IDENTITY_FIELDS: readonly IdentityField[] = ['apiVersion', 'kind', 'name'];
const RESOURCE_PATHS: Record<IdentityField, string> = {
  apiVersion: 'spec.resource.apiVersion',
  kind: 'spec.resource.kind',
  name: 'spec.resource.metadata.name',
};
const SOURCE_PATHS: Record<IdentityField, string> = { apiVersion: 'spec.source.apiVersion', kind: 'spec.source.kind', name: 'spec.source.name' };

/** What the copies are: the template's identity, or the source's (which may move namespaces). */
function identityOf(object: unknown): Identity | undefined {
  const spec = asRecord(asRecord(object)?.spec);
  const source = asRecord(spec?.source);
  if (source !== undefined) return { apiVersion: source.apiVersion, kind: source.kind, name: source.name, paths: SOURCE_PATHS };
  const resource = asRecord(spec?.resource);
  if (resource === undefined) return undefined;
  return { apiVersion: resource.apiVersion, kind: resource.kind, name: asRecord(resource.metadata)?.name, paths: RESOURCE_PATHS };
}

/** On UPDATE: apiVersion, kind and name of the distributed object cannot change. */
export function validateImmutable(object: unknown, oldObject: unknown): FieldProblem[] {
  const before = identityOf(oldObject);
  const after = identityOf(object);
  if (before === undefined || after === undefined) return [];
  return IDENTITY_FIELDS.filter((field) => before[field] !== after[field]).map((field) => ({
    path: after.paths[field],
    message: `is immutable (was ${quote(before[field] ?? '')}): create a new ResourceDistribution for a different object`,
  }));
}
