// The independent checker: given what the cluster holds after a quiet period and what the soak
// itself did, every promise of the README that the state breaks. Pure; nothing here reads src/.
import { checkAdoptions } from './check-adoptions.js';
import { checkAuthored } from './check-authored.js';
import { checkCopies, indexObjects, type NamespaceState } from './check-copies.js';
import { checkObjectSyncs } from './check-object-syncs.js';
import { checkStatus } from './check-status.js';
import { checkForeign, checkStrays } from './check-strays.js';
import type { Expectations } from './expectations.js';
import { expectedTargets, type TargetSet } from './expected-targets.js';
import type { ClusterSnapshot } from './snapshot-types.js';
import type { Violation } from './violation.js';

/** What a check looked at, so that a report can show it was not vacuous. */
export interface Coverage {
  distributions: number;
  objectSyncs: number;
  /** Objects made for adoption held to it; copies of the limited author's distributions. */
  adoptions: number;
  authoredCopies: number;
  /** Target namespaces checked, by what each held. */
  targets: Record<NamespaceState, number>;
  /** Objects of the soak's names (copies, sources, foreign objects, orphans). */
  objects: number;
}

export function emptyCoverage(): Coverage {
  return { distributions: 0, objectSyncs: 0, adoptions: 0, authoredCopies: 0, targets: { ok: 0, missing: 0, conflict: 0, wrong: 0, 'namespace-missing': 0 }, objects: 0 };
}

export function inspectCluster(snapshot: ClusterSnapshot, expectations: Expectations): { violations: Violation[]; coverage: Coverage } {
  const objects = indexObjects(snapshot.objects);
  const targets = new Map<string, TargetSet>();
  const violations: Violation[] = [];
  const coverage = emptyCoverage();
  coverage.objects = snapshot.objects.length;
  for (const rd of [...snapshot.distributions].sort((a, b) => a.name.localeCompare(b.name))) {
    const targetSet = expectedTargets(rd, snapshot.namespaces, expectations.ownNamespace);
    targets.set(rd.name, targetSet);
    // A distribution being deleted is the garbage collector's: its copies go with it.
    if (rd.deleting) continue;
    const copies = checkCopies(rd, targetSet, objects);
    violations.push(...copies.violations, ...checkStatus(rd, targetSet, copies));
    coverage.distributions += 1;
    for (const state of copies.states.values()) coverage.targets[state] += 1;
  }
  violations.push(...checkStrays(snapshot, targets, expectations), ...checkForeign(snapshot, objects, expectations));
  const adoptions = checkAdoptions(snapshot, objects, targets, expectations);
  const authored = checkAuthored(snapshot, expectations);
  coverage.adoptions = adoptions.checked;
  coverage.authoredCopies = authored.copies;
  violations.push(...adoptions.violations, ...authored.violations);
  const syncs = checkObjectSyncs(snapshot.objectSyncs, snapshot.namespaces, objects, expectations.ownNamespace);
  coverage.objectSyncs = syncs.checked;
  violations.push(...syncs.violations);
  return { violations, coverage };
}

export function checkCluster(snapshot: ClusterSnapshot, expectations: Expectations): Violation[] {
  return inspectCluster(snapshot, expectations).violations;
}
