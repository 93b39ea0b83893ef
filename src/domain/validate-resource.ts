// Admission rules for spec.resource: what it is (an object of an allowed kind, with a name) and
// that this identity never changes.
import { asRecord, asString, keyPath, quote, type FieldProblem, type UnknownRecord } from './field-problem.js';
import { DNS_SUBDOMAIN_RULE, isDnsSubdomain, isLabelValue, isQualifiedName, LABEL_VALUE_RULE, QUALIFIED_NAME_RULE } from './k8s-names.js';
import { apiVersionFor, CORE_REGISTRY, isCoreDataKind, versionOf, type KindRegistry } from './kinds.js';
import { runSteps, type Steps } from './steps.js';
import { contentValidation } from './validate-content.js';

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

/**
 * Ownership metadata is the cluster's, not the template's: a copied finalizer would keep every copy
 * from ever finishing its deletion, and a copied owner reference would hand the copies to another
 * owner (or to the garbage collector). Denied, not stripped: copies are what the template says.
 */
function checkOwnership(metadata: UnknownRecord | undefined): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (Array.isArray(metadata?.finalizers) && metadata.finalizers.length > 0) {
    problems.push({ path: 'spec.resource.metadata.finalizers', message: 'is not allowed: every copy would keep it and never finish deleting when the distribution goes' });
  }
  if (Array.isArray(metadata?.ownerReferences) && metadata.ownerReferences.length > 0) {
    problems.push({ path: 'spec.resource.metadata.ownerReferences', message: 'is not allowed: the distribution owns its copies (remove the field)' });
  }
  return problems;
}

/** The top-level fields of the two kinds whose content is checked here; other kinds' come from the API server's OpenAPI. */
const CORE_FIELDS: Record<'Secret' | 'ConfigMap', readonly string[]> = {
  Secret: ['apiVersion', 'kind', 'metadata', 'type', 'data', 'stringData', 'immutable'],
  ConfigMap: ['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable'],
};

/** A misspelled field would be dropped and an empty object copied everywhere: name it, and what was probably meant. */
function checkFields(resource: UnknownRecord, kind: string, known: readonly string[], leftToOtherRules: readonly string[] = []): FieldProblem[] {
  return Object.keys(resource)
    .filter((field) => !known.includes(field) && !leftToOtherRules.includes(field))
    .map((field) => {
      const meant = known.find((candidate) => candidate.toLowerCase() === field.toLowerCase());
      const hint = meant === undefined ? `a ${kind} has ${known.join(', ')}` : `did you mean ${quote(meant)}?`;
      return { path: `spec.resource.${field}`, message: `is not a field of a ${kind}: ${hint}` };
    });
}

/** The template's fields: Secret and ConfigMap by their rules, other kinds by the fields the cluster publishes for them. */
function* checkBody(resource: UnknownRecord, kinds: KindRegistry): Steps<FieldProblem[]> {
  const apiVersion = asString(resource.apiVersion);
  const kind = asString(resource.kind);
  if (isCoreDataKind(apiVersion, kind)) {
    const core = kind as 'Secret' | 'ConfigMap';
    // The other kind's data field: the content rules say what to write instead.
    return [...checkFields(resource, core, CORE_FIELDS[core], ['binaryData', 'stringData']), ...(yield* contentValidation(resource, core))];
  }
  const known = kinds.find(apiVersion, kind)?.fields?.[versionOf(apiVersion)];
  // The rest of the content is the API server's to check, at the first write.
  return known === undefined || kind === undefined ? [] : checkFields(resource, kind, known);
}

/** An allowed kind, in a version the cluster serves; each problem says what to write instead. */
export function checkKind(apiVersion: unknown, kind: unknown, kinds: KindRegistry, at: 'spec.resource' | 'spec.source'): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (apiVersion === undefined || apiVersion === '') problems.push({ path: `${at}.apiVersion`, message: 'is required, e.g. "v1"' });
  if (kind === undefined || kind === '') problems.push({ path: `${at}.kind`, message: `is required: ${kinds.describe()}` });
  if (problems.length > 0) return problems;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return [{ path: `${at}.kind`, message: 'apiVersion and kind must be strings' }];
  if (kinds.find(apiVersion, kind) !== undefined) return [];
  const [sameName] = kinds.named(kind);
  if (sameName !== undefined) {
    return [{ path: `${at}.apiVersion`, message: `${quote(apiVersion)} is not supported for ${kind}: set ${quote(apiVersionFor(sameName))}` }];
  }
  return [{ path: `${at}.kind`, message: `${quote(kind)} is not supported: use ${kinds.describe()} (allowed by RD_ALLOWED_KINDS)` }];
}

/** Rules for spec.resource; `warnings` receives what is allowed but probably not meant. */
export function validateResource(value: unknown, warnings: string[], kinds: KindRegistry = CORE_REGISTRY): FieldProblem[] {
  return runSteps(resourceValidation(value, warnings, kinds));
}

/** validateResource, pausing between the keys of a large template (see contentValidation). */
export function* resourceValidation(value: unknown, warnings: string[], kinds: KindRegistry = CORE_REGISTRY): Steps<FieldProblem[]> {
  const resource = asRecord(value);
  if (resource === undefined) {
    return [{ path: 'spec.resource', message: `is required: a complete manifest (${kinds.describe()})` }];
  }
  const metadata = asRecord(resource.metadata);
  if (asString(metadata?.namespace) !== undefined && metadata?.namespace !== '') {
    warnings.push('spec.resource.metadata.namespace is ignored: copies go to the target namespaces');
  }
  return [
    ...checkKind(resource.apiVersion, resource.kind, kinds, 'spec.resource'),
    ...checkName(metadata),
    ...checkLabels(metadata),
    ...checkOwnership(metadata),
    ...(yield* checkBody(resource, kinds)),
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
