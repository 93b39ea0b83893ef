// Admission validation of a ResourceDistribution: every DESIGN.md rule that needs no API call,
// all problems at once, each naming the field and saying how to fix it.
import { copyDataValidation } from './copy-data.js';
import { validateCopyMetadata } from './copy-metadata.js';
import { asRecord, quote, type FieldProblem } from './field-problem.js';
import { DNS_SUBDOMAIN_RULE, isDnsSubdomain } from './k8s-names.js';
import { MAX_TEMPLATE_DEPTH, nestingDepthSteps } from './nesting.js';
import type { KindRegistry } from './kinds.js';
import { OBJECT_SYNC_PREFIX } from './object-sync.js';
import type { SchemaValidator } from './schema.js';
import { IMAGE_PULL_SECRET_INJECTIONS, REGISTRY_SECRET_TYPES, SYNC_POLICIES, WRITE_POLICIES } from './types.js';
import { resourceValidation, validateImmutable } from './validate-resource.js';
import { validateSource } from './validate-source.js';
import { runSteps, type Steps } from './steps.js';
import { targetsValidation } from './validate-targets.js';

export type { FieldProblem } from './field-problem.js';

export interface ValidationResult {
  problems: FieldProblem[];
  warnings: string[];
}

/** Copies carry the distribution name as a label value, which Kubernetes limits to 63 characters. */
const MAX_NAME_LENGTH = 63;

function checkName(metadata: Record<string, unknown> | undefined, creating: boolean): FieldProblem[] {
  const name = metadata?.name;
  const path = 'metadata.name';
  if (name === undefined || name === '') return [{ path, message: 'is required (generateName is not supported)' }];
  if (typeof name !== 'string' || !isDnsSubdomain(name)) {
    return [{ path, message: `${quote(name)} is not a valid name (${DNS_SUBDOMAIN_RULE})` }];
  }
  if (name.length > MAX_NAME_LENGTH) {
    return [{ path, message: `is ${name.length} characters long: at most 63, because copies are labelled with it` }];
  }
  // Only new ones: a distribution that predates the rule can still be updated (and deleted).
  if (creating && name.startsWith(OBJECT_SYNC_PREFIX)) {
    return [{ path, message: `"${OBJECT_SYNC_PREFIX}" names are reserved for the distributions of ObjectSyncs: choose another name` }];
  }
  return [];
}

function isRegistryType(type: unknown): boolean {
  return typeof type === 'string' && REGISTRY_SECRET_TYPES.includes(type);
}

/** Injection names the copies in pods: only registry Secrets can be meant (a source's type is checked when read). */
function checkInjection(spec: Record<string, unknown>): FieldProblem[] {
  const value = spec.imagePullSecretInjection;
  const path = 'spec.imagePullSecretInjection';
  if (value === undefined || value === 'Never') return [];
  if (!IMAGE_PULL_SECRET_INJECTIONS.some((mode) => mode === value)) return [{ path, message: `${quote(value)} is not an injection mode: use Never, MatchingImages or Always` }];
  const message = injectedContentProblem(spec);
  return message === undefined ? [] : [{ path, message }];
}

/** Why the copies are not registry Secrets, as far as admission can tell. */
function injectedContentProblem(spec: Record<string, unknown>): string | undefined {
  const copiedAs = asRecord(spec.copyData)?.secretType;
  if (copiedAs !== undefined && !isRegistryType(copiedAs)) {
    return `is only for registry Secrets (${REGISTRY_SECRET_TYPES.join(' or ')}): spec.copyData.secretType makes the copies ${quote(copiedAs)}, which pods cannot pull images with`;
  }
  const resource = asRecord(spec.resource);
  if (resource === undefined) {
    const source = asRecord(spec.source);
    return source?.kind === 'Secret' && source.apiVersion === 'v1' ? undefined : 'is only for a v1 Secret (spec.source names another kind)';
  }
  if (resource.kind === 'Secret' && resource.apiVersion === 'v1' && isRegistryType(copiedAs ?? resource.type)) return undefined;
  return `is only for Secrets of type ${REGISTRY_SECRET_TYPES.join(' or ')}: they are what pods pull images with`;
}

function checkWritePolicy(value: unknown): FieldProblem[] {
  if (value === undefined || WRITE_POLICIES.some((policy) => policy === value)) return [];
  return [{ path: 'spec.writePolicy', message: `${quote(value)} is not a write policy: use ignore, overwrite or strict` }];
}

function checkSyncPolicy(value: unknown): FieldProblem[] {
  if (value === undefined || SYNC_POLICIES.some((policy) => policy === value)) return [];
  return [{ path: 'spec.syncPolicy', message: `${quote(value)} is not a sync policy: use Sync (copies kept equal to the template) or CreateOnce (created where missing, then left to the namespace)` }];
}

/** Schema problems add only what the rules above did not already say about that field. */
function mergeSchemaProblems(own: FieldProblem[], schema: FieldProblem[]): FieldProblem[] {
  const covered = new Set(own.map((problem) => problem.path));
  const extra = schema.filter((problem) => !covered.has(problem.path));
  return [...own, ...extra];
}

/** Exactly one of an inline template (resource) and an object of the cluster to follow (source). */
function* contentSpecValidation(spec: Record<string, unknown>, warnings: string[], kinds: KindRegistry | undefined): Steps<FieldProblem[]> {
  if (spec.source === undefined) return yield* resourceValidation(spec.resource, warnings, kinds);
  if (spec.resource !== undefined) return [{ path: 'spec.source', message: 'cannot be set together with spec.resource: keep one of them' }];
  return validateSource(spec.source, spec.targets, warnings, kinds);
}

/**
 * A template nested too deeply is refused before any other rule looks at it: what comes later
 * (copies, comparisons, hashes) walks it recursively and would fail on every pass.
 */
export function checkNesting(object: unknown): FieldProblem[] {
  return runSteps(nestingValidation(object));
}

/** checkNesting, pausing between the values of a large template. */
export function* nestingValidation(object: unknown): Steps<FieldProblem[]> {
  const resource = asRecord(asRecord(object)?.spec)?.resource;
  if ((yield* nestingDepthSteps(resource, MAX_TEMPLATE_DEPTH)) <= MAX_TEMPLATE_DEPTH) return [];
  return [{ path: 'spec.resource', message: `nested deeper than ${MAX_TEMPLATE_DEPTH} levels: a Kubernetes object needs far fewer` }];
}

export interface ValidationInput {
  object: unknown;
  oldObject?: unknown;
  schema: SchemaValidator;
  namespaceExists?: (name: string) => boolean | undefined;
  /** The kinds distributions may copy (default Secret and ConfigMap). */
  kinds?: KindRegistry;
  /** The caller has refused a template nested too deeply already (see checkNesting): not measured again. */
  nestingChecked?: boolean;
}

/** Every rule, pausing between the costly ones (a distribution may list 10,000 names and patterns). */
export function* validationSteps(input: ValidationInput): Steps<ValidationResult> {
  const object = asRecord(input.object);
  if (object === undefined) return { problems: [{ path: '(object)', message: 'must be a ResourceDistribution object' }], warnings: [] };
  const tooDeep = input.nestingChecked === true ? [] : yield* nestingValidation(object);
  if (tooDeep.length > 0) return { problems: tooDeep, warnings: [] };
  const warnings: string[] = [];
  const spec = asRecord(object.spec);
  const own: FieldProblem[] = [...checkName(asRecord(object.metadata), input.oldObject === undefined)];
  if (spec === undefined) {
    own.push({ path: 'spec', message: 'is required: spec.resource (or spec.source) and spec.targets' });
  } else {
    own.push(...(yield* contentSpecValidation(spec, warnings, input.kinds)), ...(input.oldObject === undefined ? [] : validateImmutable(object, input.oldObject)));
    yield;
    own.push(...(yield* targetsValidation(spec.targets, warnings, input.namespaceExists)));
    own.push(...checkWritePolicy(spec.writePolicy), ...checkSyncPolicy(spec.syncPolicy), ...checkInjection(spec), ...validateCopyMetadata(spec.copyMetadata));
    own.push(...(yield* copyDataValidation(spec, warnings)));
  }
  yield;
  return { problems: mergeSchemaProblems(own, input.schema(object)), warnings };
}

export function validateDistribution(input: ValidationInput): ValidationResult {
  return runSteps(validationSteps(input));
}
