// A quiet period: no operation, no fault; the checker runs until it finds nothing (converged) or
// the time is up, and what it found then is what the run reports.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { emptyCoverage, inspectCluster, type Coverage } from './checker.js';
import type { Expectations } from './expectations.js';
import { readSnapshot } from './snapshot.js';
import type { ClusterSnapshot } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

export interface QuietResult {
  converged: boolean;
  /** From the start of the quiet period to the first clean check (or the timeout). */
  ms: number;
  violations: Violation[];
  /** What the last check looked at. */
  coverage: Coverage;
  snapshot?: ClusterSnapshot;
}

export async function quietPeriod(api: { core: CoreV1Api; custom: CustomObjectsApi }, expectations: () => Expectations, timeoutMs: number): Promise<QuietResult> {
  const start = Date.now();
  let violations: Violation[];
  let snapshot: ClusterSnapshot | undefined;
  let coverage = emptyCoverage();
  for (;;) {
    try {
      snapshot = await readSnapshot(api.core, api.custom);
      ({ violations, coverage } = inspectCluster(snapshot, expectations()));
      if (violations.length === 0) return { converged: true, ms: Date.now() - start, violations, coverage, snapshot };
    } catch (error) {
      violations = [violation('cluster-unreadable', 'kube-apiserver', error instanceof Error ? error.message : String(error))];
    }
    if (Date.now() - start > timeoutMs) return { converged: false, ms: Date.now() - start, violations, coverage, ...(snapshot ? { snapshot } : {}) };
    await sleep(500);
  }
}
