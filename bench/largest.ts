// 7. The largest distribution: what the CRD's bounds and the request size limits let a user write
// (see largest-shape.ts), admitted (7a) and reconciled (7b), each against a baseline measured in
// the same run; and how long hostile requests hold every other webhook call up (7c, loop-held.ts). Last in the run: its objects are deleted before it ends, but the other sections'
// figures must not include their cost.
import type { BenchKube } from './bench-kube.js';
import type { Fleet } from './fleet.js';
import { runLargestAdmission, type LargestAdmissionResult } from './largest-admission.js';
import { runLargestReconcile, type LargestReconcileResult } from './largest-reconcile.js';
import { runLoopHeld, type LoopHeldResult } from './loop-held.js';
import type { Product } from './product.js';
import type { BenchSize } from './sizes.js';

export interface LargestResult {
  admission: LargestAdmissionResult;
  reconcile: LargestReconcileResult;
  loopHeld: LoopHeldResult;
}

export async function runLargest(options: { kube: BenchKube; product: Product; fleet: Fleet; size: BenchSize }): Promise<LargestResult> {
  const { kube, product, fleet, size } = options;
  const admission = await runLargestAdmission({ product, requests: size.largest.admissionRequests });
  const loopHeld = await runLoopHeld({ product, rounds: Math.max(3, size.largest.rounds) });
  const reconcile = await runLargestReconcile({ kube, product, fleet, namespaces: size.largest.namespaces, rounds: size.largest.rounds });
  return { admission, reconcile, loopHeld };
}
