// Copies before pods (README: "Guarantees: copies before pods"): when a pod's create returns, the
// copies it references exist. Checked independently of the product's timing: the pod's
// resourceVersion is the etcd revision at which the API server wrote it, after admission; the
// cluster is read exactly as it was at that revision (a list with resourceVersionMatch=Exact). At
// that revision, every Secret or ConfigMap the pod references that a distribution (not being
// deleted, not under writePolicy strict, its source present) or an ObjectSync (its source present)
// then targeted the pod's namespace with must exist in it — a copy, or an object of that name that
// is not ours. A pod created while a fault was under way or within POD_FAULT_GRACE_MS after it
// recovered is not held to it: the pod webhook fails open (a replica killed or frozen, the API
// server restarting) or cannot write (cut off from the API server; its caches resuming).
import { objectKey, wantedOf, indexObjects } from './check-copies.js';
import { objectSyncTargets, sourceNamespaceOf } from './check-object-syncs.js';
import { expectedTargets } from './expected-targets.js';
import type { FaultRun } from './faults.js';
import type { PodPlan } from './pod-plan.js';
import type { ClusterSnapshot, ObjectSnapshot } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

export const POD_FAULT_GRACE_MS = 5_000;

export interface PodAdmission {
  step: number;
  /** When its create returned. */
  at: number;
  plan: PodPlan;
  resourceVersion: string;
  /** The cluster at the pod's revision; undefined when it could not be read (compacted meanwhile). */
  atAdmission?: ClusterSnapshot;
}

/** The references the pod's namespace had to hold at `snapshot`'s revision, and those it did not. */
/** `Kind/name` of every copy the namespace was meant to hold at the snapshot's revision. */
function meantAt(snapshot: ClusterSnapshot, objects: ReadonlyMap<string, ObjectSnapshot>, namespace: string, ownNamespace: string): Set<string> {
  const meant = new Set<string>();
  const targeted = (targets: { all: Set<string>; missing: Set<string> } | undefined): boolean => (targets?.all.has(namespace) ?? false) && !targets?.missing.has(namespace);
  for (const rd of snapshot.distributions) {
    if (rd.deleting || rd.spec.writePolicy === 'strict') continue;
    const wanted = wantedOf(rd, objects);
    if (wanted && targeted(expectedTargets(rd, snapshot.namespaces, ownNamespace))) meant.add(`${wanted.kind}/${wanted.name}`);
  }
  for (const os of snapshot.objectSyncs) {
    if (os.deleting || !objects.has(objectKey(os.spec.source.kind, sourceNamespaceOf(os), os.spec.source.name))) continue;
    for (const [name, targets] of objectSyncTargets(os, snapshot.namespaces, ownNamespace)) if (targeted(targets)) meant.add(`${os.spec.source.kind}/${name}`);
  }
  return meant;
}

export function copiesAtAdmission(snapshot: ClusterSnapshot, plan: PodPlan, ownNamespace: string): { expected: string[]; missing: string[] } {
  const objects = indexObjects(snapshot.objects);
  const meant = meantAt(snapshot, objects, plan.namespace, ownNamespace);
  const expected = plan.refs.map((ref) => `${ref.kind}/${ref.name}`).filter((ref) => meant.has(ref));
  const missing = expected.filter((ref) => {
    const [kind = '', name = ''] = ref.split('/');
    return !objects.has(objectKey(kind, plan.namespace, name));
  });
  return { expected, missing };
}

function nearFault(at: number, faults: readonly FaultRun[]): boolean {
  return faults.some((f) => at >= f.startedAt && at <= f.recoveredAt + POD_FAULT_GRACE_MS);
}

export interface PodCheck {
  violations: Violation[];
  /** Pods held to the promise, and the references they were held to. */
  checked: number;
  references: number;
  /** Not held to it: near a fault, or their revision unreadable. */
  exempt: number;
}

export function checkPods(admissions: readonly PodAdmission[], faults: readonly FaultRun[], ownNamespace: string): PodCheck {
  const result: PodCheck = { violations: [], checked: 0, references: 0, exempt: 0 };
  for (const pod of admissions) {
    if (!pod.atAdmission || nearFault(pod.at, faults)) {
      result.exempt += 1;
      continue;
    }
    const { expected, missing } = copiesAtAdmission(pod.atAdmission, pod.plan, ownNamespace);
    result.checked += 1;
    result.references += expected.length;
    if (missing.length > 0) {
      result.violations.push(violation('pod-before-copies', `${pod.plan.namespace}/${pod.plan.name}`, `admitted at resourceVersion ${pod.resourceVersion} while ${missing.join(', ')} did not exist there`));
    }
  }
  return result;
}
