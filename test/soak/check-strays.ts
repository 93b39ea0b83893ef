// What must not be there, and what must stay as it is: no copy where nothing targets it (except
// those of a distribution deleted with --cascade=orphan, which keep no owner), and nothing the soak
// wrote itself overwritten or deleted while no writePolicy allowed it (README: "Objects that are
// not ours", "Removing a distribution, keeping its copies").
import { objectKey } from './check-copies.js';
import type { Expectations, ForeignObject } from './expectations.js';
import type { TargetSet } from './expected-targets.js';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, ANNOTATION_OBJECT_SYNC, LABEL_DISTRIBUTION, RD_KIND } from './markers.js';
import type { ClusterSnapshot, ObjectSnapshot } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

/**
 * The distribution an object claims to be a copy of, by our annotation or label. An ObjectSync's
 * copies are checked with their ObjectSync; an object waiting to be adopted (annotated and
 * labelled by its owner, not taken over yet) is its owner's, not a copy.
 */
function claimedBy(object: ObjectSnapshot): string | undefined {
  if (object.annotations[ANNOTATION_OBJECT_SYNC] !== undefined) return undefined;
  const from = object.annotations[ANNOTATION_FROM];
  if (from === undefined && object.annotations[ANNOTATION_ADOPT] !== undefined) return undefined;
  return from ?? object.labels[LABEL_DISTRIBUTION];
}

function strayProblem(object: ObjectSnapshot, claimed: string, targets: ReadonlyMap<string, TargetSet>, expectations: Expectations): Violation | undefined {
  const subject = objectKey(object.kind, object.namespace, object.name);
  const targetSet = targets.get(claimed);
  if (targetSet) {
    if (targetSet.all.has(object.namespace)) return undefined;
    return violation('copy-untargeted', subject, `a copy of ${claimed}, which does not target ${object.namespace}`);
  }
  if (!expectations.orphaned.has(claimed)) return violation('copy-outlived-distribution', subject, `a copy of ${claimed}, deleted without --cascade=orphan`);
  const owner = object.ownerReferences.find((ref) => ref.kind === RD_KIND && ref.name === claimed);
  return owner ? violation('orphan-still-owned', subject, `still owned by the deleted ${claimed} (uid ${owner.uid})`) : undefined;
}

/**
 * Copies outside their distribution's targets. `targets` holds every distribution that exists
 * (being deleted or not); namespaces being deleted are left to the namespace controller.
 */
export function checkStrays(snapshot: ClusterSnapshot, targets: ReadonlyMap<string, TargetSet>, expectations: Expectations): Violation[] {
  const terminating = new Set(snapshot.namespaces.filter((ns) => ns.terminating).map((ns) => ns.name));
  const violations: Violation[] = [];
  for (const object of snapshot.objects) {
    const claimed = claimedBy(object);
    if (claimed === undefined || terminating.has(object.namespace)) continue;
    const problem = strayProblem(object, claimed, targets, expectations);
    if (problem) violations.push(problem);
  }
  return violations;
}

function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  return JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
}

function foreignProblem(foreign: ForeignObject, found: ObjectSnapshot | undefined): string | undefined {
  if (!found) return 'deleted';
  if (found.uid !== foreign.uid) return `replaced (uid ${foreign.uid} -> ${found.uid})`;
  if (!sameMap(foreign.data, found.data)) return 'data changed';
  const labels = Object.entries(foreign.labels).filter(([key, value]) => found.labels[key] !== value);
  if (labels.length > 0) return `labels changed: ${labels.map(([key]) => key).join(', ')}`;
  if (found.annotations[ANNOTATION_FROM] !== undefined) return `made a copy of ${found.annotations[ANNOTATION_FROM]}`;
  return undefined;
}

/** Objects the soak made without our markers stay as made, unless a writePolicy overwrite could take them. */
export function checkForeign(snapshot: ClusterSnapshot, objects: ReadonlyMap<string, ObjectSnapshot>, expectations: Expectations): Violation[] {
  const live = new Set(snapshot.namespaces.filter((ns) => !ns.terminating).map((ns) => ns.name));
  const violations: Violation[] = [];
  for (const foreign of expectations.foreign) {
    if (foreign.mayBeTakenOver || !live.has(foreign.namespace)) continue;
    const key = objectKey(foreign.kind, foreign.namespace, foreign.name);
    const problem = foreignProblem(foreign, objects.get(key));
    if (problem) violations.push(violation('foreign-overwritten', key, `an object the soak made without our markers was ${problem}`));
  }
  return violations;
}
