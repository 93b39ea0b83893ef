// ObjectSyncs (README: "ObjectSync (k8s-object-syncer's API)"): each destination namespace holds a
// copy of the source under the destination's name (the source's by default), identical to it, with
// the annotation naming the ObjectSync and no owner reference; `*` is every namespace but the
// system ones and the controller's own; the source's own namespace gets a copy only under another
// name; a deleted source or ObjectSync leaves no copy anywhere; the status counts and InSync say so.
import { objectKey } from './check-copies.js';
import { TEMPLATE_KEY_PREFIX } from './expectations.js';
import { ANNOTATION_OBJECT_SYNC, SYSTEM_NAMESPACES } from './markers.js';
import type { NamespaceSnapshot, ObjectSnapshot, ObjectSyncSnapshot } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

export function objectSyncKey(os: Pick<ObjectSyncSnapshot, 'namespace' | 'name'>): string {
  return `${os.namespace}/${os.name}`;
}

export function sourceNamespaceOf(os: ObjectSyncSnapshot): string {
  return os.spec.source.namespace || os.namespace;
}

/** Per copy name, the namespaces that must hold it; `missing`: listed ones that do not exist (or are terminating). */
export function objectSyncTargets(os: ObjectSyncSnapshot, namespaces: readonly NamespaceSnapshot[], ownNamespace: string): Map<string, { all: Set<string>; missing: Set<string> }> {
  const live = new Set(namespaces.filter((ns) => !ns.terminating).map((ns) => ns.name));
  const everywhere = namespaces.map((ns) => ns.name).filter((name) => !(SYSTEM_NAMESPACES as readonly string[]).includes(name) && name !== ownNamespace);
  const byName = new Map<string, { all: Set<string>; missing: Set<string> }>();
  for (const destination of os.spec.destinations) {
    const copyName = destination.name || os.spec.source.name;
    const set = byName.get(copyName) ?? { all: new Set<string>(), missing: new Set<string>() };
    const names = destination.namespace === '*' || destination.namespace === '' ? everywhere : [destination.namespace];
    for (const name of names) {
      if (name === sourceNamespaceOf(os) && copyName === os.spec.source.name) continue;
      set.all.add(name);
      if (!live.has(name)) set.missing.add(name);
    }
    byName.set(copyName, set);
  }
  return byName;
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  return JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
}

const templateKeys = (map: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(map).filter(([key]) => key.startsWith(TEMPLATE_KEY_PREFIX)));

/** Why `copy` is not a correct copy of `source` for `os` (empty when it is). */
export function objectSyncCopyProblems(os: ObjectSyncSnapshot, source: ObjectSnapshot, copy: ObjectSnapshot): string[] {
  const problems: string[] = [];
  if (copy.annotations[ANNOTATION_OBJECT_SYNC] !== objectSyncKey(os)) return [`annotation ${ANNOTATION_OBJECT_SYNC} is ${String(copy.annotations[ANNOTATION_OBJECT_SYNC])}, not ${objectSyncKey(os)}`];
  if (!sameMap(source.data, copy.data)) problems.push('data differs from the source');
  if (source.type !== undefined && copy.type !== source.type) problems.push(`type ${String(copy.type)}, source's ${source.type}`);
  if (!sameMap(templateKeys(source.labels), templateKeys(copy.labels))) problems.push("labels differ from the source's");
  if (copy.ownerReferences.some((ref) => ref.controller === true)) problems.push('has a controller reference');
  return problems;
}

interface SyncCheck {
  desired: number;
  succeeded: number;
  violations: Violation[];
}

function checkOne(os: ObjectSyncSnapshot, namespaces: readonly NamespaceSnapshot[], objects: ReadonlyMap<string, ObjectSnapshot>, ownNamespace: string): SyncCheck {
  const source = objects.get(objectKey(os.spec.source.kind, sourceNamespaceOf(os), os.spec.source.name));
  const result: SyncCheck = { desired: 0, succeeded: 0, violations: [] };
  for (const [copyName, targets] of objectSyncTargets(os, namespaces, ownNamespace)) {
    result.desired += targets.all.size;
    if (!source) continue;
    for (const ns of [...targets.all].sort()) {
      if (targets.missing.has(ns)) continue;
      const subject = `ObjectSync ${objectSyncKey(os)} in ${ns}`;
      const copy = objects.get(objectKey(os.spec.source.kind, ns, copyName));
      const problems = copy ? objectSyncCopyProblems(os, source, copy) : [`no ${os.spec.source.kind} ${copyName}`];
      if (problems.length === 0) result.succeeded += 1;
      else result.violations.push(violation(copy ? 'sync-copy-wrong' : 'sync-copy-missing', subject, problems.join('; ')));
    }
  }
  return result;
}

function statusProblems(os: ObjectSyncSnapshot, check: SyncCheck): string[] {
  const status = os.status ?? {};
  const problems: string[] = [];
  if (status.observedGeneration !== os.generation) problems.push(`observedGeneration ${String(status.observedGeneration)}, generation ${os.generation}`);
  if (status.desired !== check.desired) problems.push(`desired ${String(status.desired)}, wanted ${check.desired}`);
  if (status.succeeded !== check.succeeded) problems.push(`succeeded ${String(status.succeeded)}, wanted ${check.succeeded}`);
  if (status.failed !== check.desired - check.succeeded) problems.push(`failed ${String(status.failed)}, wanted ${check.desired - check.succeeded}`);
  const inSync = (status.conditions ?? []).find((c) => c.type === 'InSync')?.status;
  const wanted = check.desired === check.succeeded ? 'True' : 'False';
  if (inSync !== wanted) problems.push(`InSync ${String(inSync)}, wanted ${wanted}`);
  return problems;
}

/** Copies carrying an ObjectSync's annotation where it (no longer) writes them. */
function syncStrays(objectSyncs: readonly ObjectSyncSnapshot[], namespaces: readonly NamespaceSnapshot[], objects: readonly ObjectSnapshot[], ownNamespace: string): Violation[] {
  const terminating = new Set(namespaces.filter((ns) => ns.terminating).map((ns) => ns.name));
  const byKey = new Map(objectSyncs.map((os) => [objectSyncKey(os), os]));
  const present = new Set(objects.map((o) => objectKey(o.kind, o.namespace, o.name)));
  const violations: Violation[] = [];
  for (const object of objects) {
    const claimed = object.annotations[ANNOTATION_OBJECT_SYNC];
    if (claimed === undefined || terminating.has(object.namespace)) continue;
    const os = byKey.get(claimed);
    const subject = objectKey(object.kind, object.namespace, object.name);
    // Being deleted: its finalizer holds it until its copies are gone.
    if (os?.deleting) continue;
    if (!os) violations.push(violation('sync-copy-outlived-objectsync', subject, `a copy of ObjectSync ${claimed}, which is gone`));
    else if (!present.has(objectKey(os.spec.source.kind, sourceNamespaceOf(os), os.spec.source.name))) violations.push(violation('sync-copy-outlived-source', subject, `a copy of ObjectSync ${claimed}, whose source is gone`));
    else if (!(objectSyncTargets(os, namespaces, ownNamespace).get(object.name)?.all.has(object.namespace) ?? false)) violations.push(violation('sync-copy-untargeted', subject, `ObjectSync ${claimed} does not copy ${object.name} to ${object.namespace}`));
  }
  return violations;
}

export function checkObjectSyncs(
  objectSyncs: readonly ObjectSyncSnapshot[],
  namespaces: readonly NamespaceSnapshot[],
  objects: ReadonlyMap<string, ObjectSnapshot>,
  ownNamespace: string,
): { violations: Violation[]; checked: number } {
  const violations: Violation[] = [];
  let checked = 0;
  for (const os of objectSyncs) {
    if (os.deleting) continue;
    checked += 1;
    const check = checkOne(os, namespaces, objects, ownNamespace);
    const problems = statusProblems(os, check);
    violations.push(...check.violations, ...(problems.length === 0 ? [] : [violation('sync-status-wrong', `ObjectSync ${objectSyncKey(os)}`, problems.join('; '))]));
  }
  return { violations: [...violations, ...syncStrays(objectSyncs, namespaces, [...objects.values()], ownNamespace)], checked };
}
