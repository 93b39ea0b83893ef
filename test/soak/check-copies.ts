// Every targeted namespace holds exactly what the distribution copies, with the product's markers
// (README: "What a copy looks like", "Objects that are not ours", "Copying an existing object").
import { templateHash } from './canonical-hash.js';
import { TEMPLATE_KEY_PREFIX } from './expectations.js';
import type { TargetSet } from './expected-targets.js';
import { ANNOTATION_FROM, ANNOTATION_HASH, ANNOTATION_TIMESTAMP, LABEL_DISTRIBUTION, RD_KIND, RD_OWNER_API_VERSIONS } from './markers.js';
import type { CopyKind, DistributionSnapshot, ObjectSnapshot } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

/** What a correct copy carries besides the markers. */
export interface Wanted {
  kind: CopyKind;
  name: string;
  data: Record<string, string>;
  type?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The hashcode annotation's value, when it can be computed independently (spec.resource). */
  hash?: string;
}

export type NamespaceState = 'ok' | 'missing' | 'conflict' | 'wrong' | 'namespace-missing';

export interface CopyCheck {
  states: Map<string, NamespaceState>;
  violations: Violation[];
  /** spec.source names an object that does not exist. */
  sourceMissing: boolean;
}

export function objectKey(kind: string, namespace: string, name: string): string {
  return `${namespace}/${kind}/${name}`;
}

export function indexObjects(objects: readonly ObjectSnapshot[]): Map<string, ObjectSnapshot> {
  return new Map(objects.map((o) => [objectKey(o.kind, o.namespace, o.name), o]));
}

/** What the distribution copies, or undefined when its source is missing. */
export function wantedOf(rd: DistributionSnapshot, objects: ReadonlyMap<string, ObjectSnapshot>): Wanted | undefined {
  const { resource, source } = rd.spec;
  if (resource) {
    const type = resource.kind === 'Secret' ? (resource.type ?? 'Opaque') : undefined;
    return {
      kind: resource.kind,
      name: resource.metadata.name,
      data: resource.data ?? {},
      ...(type === undefined ? {} : { type }),
      labels: resource.metadata.labels ?? {},
      annotations: resource.metadata.annotations ?? {},
      hash: templateHash(resource),
    };
  }
  if (!source) return undefined;
  const found = objects.get(objectKey(source.kind, source.namespace, source.name));
  if (!found) return undefined;
  return { kind: found.kind, name: found.name, data: found.data, ...(found.type === undefined ? {} : { type: found.type }), labels: found.labels, annotations: found.annotations };
}

/** Ours: `from` names the distribution and the controller reference, if any, does too. */
export function isOurs(rd: DistributionSnapshot, object: ObjectSnapshot): boolean {
  if (object.annotations[ANNOTATION_FROM] !== rd.name) return false;
  const controller = object.ownerReferences.find((ref) => ref.controller === true);
  return controller === undefined || (controller.kind === RD_KIND && controller.name === rd.name);
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

function templateKeys(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([key]) => key.startsWith(TEMPLATE_KEY_PREFIX)));
}

function missingEntries(wanted: Record<string, string>, actual: Record<string, string>): string[] {
  return Object.entries(wanted)
    .filter(([key, value]) => actual[key] !== value)
    .map(([key]) => key);
}

function contentProblems(wanted: Wanted, copy: ObjectSnapshot): string[] {
  const problems: string[] = [];
  if (!sameMap(wanted.data, copy.data)) problems.push(`data keys ${JSON.stringify(Object.keys(copy.data).sort())} or values differ from what is copied`);
  if (wanted.type !== undefined && copy.type !== wanted.type) problems.push(`type ${String(copy.type)}, wanted ${wanted.type}`);
  if (!sameMap(templateKeys(wanted.labels), templateKeys(copy.labels))) problems.push('carries template labels the template no longer has');
  if (!sameMap(templateKeys(wanted.annotations), templateKeys(copy.annotations))) problems.push('carries template annotations the template no longer has');
  return problems;
}

function markerProblems(rd: DistributionSnapshot, wanted: Wanted, copy: ObjectSnapshot): string[] {
  const problems: string[] = [];
  const labels = missingEntries({ ...wanted.labels, [LABEL_DISTRIBUTION]: rd.name }, copy.labels);
  if (labels.length > 0) problems.push(`labels missing or different: ${labels.join(', ')}`);
  const annotations = missingEntries({ ...wanted.annotations, [ANNOTATION_FROM]: rd.name }, copy.annotations);
  if (annotations.length > 0) problems.push(`annotations missing or different: ${annotations.join(', ')}`);
  const hash = copy.annotations[ANNOTATION_HASH];
  if (hash === undefined || (wanted.hash !== undefined && hash !== wanted.hash)) problems.push(`hashcode ${String(hash)}, wanted ${wanted.hash ?? 'one'}`);
  if (copy.annotations[ANNOTATION_TIMESTAMP] === undefined) problems.push('no distributed.timestamp annotation');
  const controller = controllerProblem(rd, copy);
  if (controller) problems.push(controller);
  return problems;
}

/** Exactly one controller reference: this distribution, by uid, blocking its deletion. */
function controllerProblem(rd: DistributionSnapshot, copy: ObjectSnapshot): string | undefined {
  const controller = copy.ownerReferences.filter((ref) => ref.controller === true);
  const [ref] = controller;
  const right = controller.length === 1 && RD_OWNER_API_VERSIONS.includes(ref?.apiVersion ?? '') && ref?.kind === RD_KIND && ref.uid === rd.uid && ref.blockOwnerDeletion === true;
  return right ? undefined : `controller reference ${JSON.stringify(controller)} is not this distribution's (uid ${rd.uid})`;
}

/** Why `copy` is not a correct copy of `rd` (empty when it is). */
export function copyProblems(rd: DistributionSnapshot, wanted: Wanted, copy: ObjectSnapshot): string[] {
  return [...contentProblems(wanted, copy), ...markerProblems(rd, wanted, copy)];
}

function stateOf(rd: DistributionSnapshot, wanted: Wanted, copy: ObjectSnapshot | undefined): { state: NamespaceState; problems: string[] } {
  if (!copy) return { state: 'missing', problems: [] };
  if (!isOurs(rd, copy)) return { state: 'conflict', problems: [] };
  const problems = copyProblems(rd, wanted, copy);
  return { state: problems.length === 0 ? 'ok' : 'wrong', problems };
}

/** Whether the product had to leave namespaces unwritten: strict with a conflict somewhere. */
function strictBlocked(rd: DistributionSnapshot, states: ReadonlyMap<string, NamespaceState>): boolean {
  return rd.spec.writePolicy === 'strict' && [...states.values()].includes('conflict');
}

function stateViolations(rd: DistributionSnapshot, wanted: Wanted, states: ReadonlyMap<string, NamespaceState>, problems: ReadonlyMap<string, string[]>): Violation[] {
  const violations: Violation[] = [];
  const blocked = strictBlocked(rd, states);
  for (const [ns, state] of states) {
    const subject = `${rd.name} in ${ns}`;
    if (state === 'conflict' && rd.spec.writePolicy === 'overwrite') violations.push(violation('foreign-not-taken-over', subject, 'writePolicy overwrite, yet the object there is not a copy'));
    if (blocked) continue;
    if (state === 'missing') violations.push(violation('copy-missing', subject, `no ${wanted.kind} ${wanted.name}`));
    if (state === 'wrong') violations.push(violation('copy-wrong', subject, (problems.get(ns) ?? []).join('; ')));
  }
  return violations;
}

export function checkCopies(rd: DistributionSnapshot, targets: TargetSet, objects: ReadonlyMap<string, ObjectSnapshot>): CopyCheck {
  const wanted = wantedOf(rd, objects);
  const states = new Map<string, NamespaceState>();
  if (!wanted) {
    for (const ns of targets.all) states.set(ns, targets.missing.has(ns) ? 'namespace-missing' : 'missing');
    return { states, violations: [], sourceMissing: rd.spec.source !== undefined };
  }
  const problemsByNamespace = new Map<string, string[]>();
  for (const ns of [...targets.all].sort()) {
    if (targets.missing.has(ns)) {
      states.set(ns, 'namespace-missing');
      continue;
    }
    const { state, problems } = stateOf(rd, wanted, objects.get(objectKey(wanted.kind, ns, wanted.name)));
    states.set(ns, state);
    problemsByNamespace.set(ns, problems);
  }
  return { states, violations: stateViolations(rd, wanted, states, problemsByNamespace), sourceMissing: false };
}
