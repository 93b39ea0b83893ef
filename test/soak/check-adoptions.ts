// Adoption by consent (README: "Objects that are not ours"): an object annotated
// `resource-distributor.io/adopt: <distribution>` and labelled with the distribution's label is
// taken over at once, in place (same uid), under any writePolicy — where the distribution targets
// it and can write (not while strict waits on a conflict, nor while its source is missing).
import { isOurs, objectKey, wantedOf } from './check-copies.js';
import type { Expectations } from './expectations.js';
import type { TargetSet } from './expected-targets.js';
import type { ClusterSnapshot, ObjectSnapshot } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

/** The violations, and how many objects made for adoption were held to it. */
export function checkAdoptions(snapshot: ClusterSnapshot, objects: ReadonlyMap<string, ObjectSnapshot>, targets: ReadonlyMap<string, TargetSet>, expectations: Expectations): { violations: Violation[]; checked: number } {
  const violations: Violation[] = [];
  let checked = 0;
  for (const adoptable of expectations.adoptable) {
    const key = objectKey(adoptable.kind, adoptable.namespace, adoptable.name);
    const found = objects.get(key);
    const targetSet = targets.get(adoptable.distribution);
    if (!found || !targetSet?.all.has(adoptable.namespace) || targetSet.missing.has(adoptable.namespace)) continue;
    checked += 1;
    if (found.uid !== adoptable.uid) {
      violations.push(violation('adoption-not-in-place', key, `the object made for adoption by ${adoptable.distribution} (uid ${adoptable.uid}) was replaced by ${found.uid}`));
      continue;
    }
    const rd = snapshot.distributions.find((d) => d.name === adoptable.distribution);
    if (!rd || rd.deleting || rd.spec.writePolicy === 'strict' || wantedOf(rd, objects) === undefined) continue;
    if (!isOurs(rd, found)) violations.push(violation('adoption-missed', key, `annotated and labelled for ${rd.name}, which targets ${adoptable.namespace}, yet not taken over`));
  }
  return { violations, checked };
}
