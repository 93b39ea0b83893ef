// The independent checker: given what the cluster holds after a quiet period and what the soak
// itself did, every promise of the README that the state breaks. Pure; nothing here reads src/.
import { checkCopies, indexObjects } from './check-copies.js';
import { checkStatus } from './check-status.js';
import { checkForeign, checkStrays } from './check-strays.js';
import type { Expectations } from './expectations.js';
import { expectedTargets, type TargetSet } from './expected-targets.js';
import type { ClusterSnapshot } from './snapshot-types.js';
import type { Violation } from './violation.js';

export function checkCluster(snapshot: ClusterSnapshot, expectations: Expectations): Violation[] {
  const objects = indexObjects(snapshot.objects);
  const targets = new Map<string, TargetSet>();
  const violations: Violation[] = [];
  for (const rd of [...snapshot.distributions].sort((a, b) => a.name.localeCompare(b.name))) {
    const targetSet = expectedTargets(rd, snapshot.namespaces, expectations.ownNamespace);
    targets.set(rd.name, targetSet);
    // A distribution being deleted is the garbage collector's: its copies go with it.
    if (rd.deleting) continue;
    const copies = checkCopies(rd, targetSet, objects);
    violations.push(...copies.violations, ...checkStatus(rd, targetSet, copies));
  }
  violations.push(...checkStrays(snapshot, targets, expectations), ...checkForeign(snapshot, objects, expectations));
  return violations;
}
