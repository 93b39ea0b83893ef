// Admission refusals (README: "Guarantees under random faults"). The distributions and ObjectSyncs
// webhooks fail closed, and the API server sends each call once: a call in flight to a replica
// killed (SIGKILL) or frozen (SIGSTOP), or routed to it before it leaves the endpoints, fails, and
// the change is refused with "failed calling webhook". That is tolerated only for an operation
// that ran while such a fault was under way: from the fault's start until the replica was back
// (replaced and Ready, or continued and Ready again). Any other refusal of a change the admin may
// make — a failed call at another time, or a denial — is a violation. The limited author's changes
// may be denied (what they may do is checked on the cluster, see check-authored.ts).
import type { FaultKind, FaultRun } from './faults.js';
import { violation, type Violation } from './violation.js';

export interface Refusal {
  step: number;
  op: string;
  asAuthor: boolean;
  message: string;
  startedAt: number;
  endedAt: number;
}

/** The faults that take a replica away while the API server may still route calls to it. */
export const REPLICA_FAULTS: readonly FaultKind[] = ['kill-leader', 'kill-follower', 'stop-leader'];

const FAILED_CALL = /failed calling webhook/;
const DENIED = /admission webhook "[^"]+" denied the request/;

export type RefusalKind = 'failed-call' | 'denied';

export function refusalKind(message: string): RefusalKind | undefined {
  if (FAILED_CALL.test(message)) return 'failed-call';
  if (DENIED.test(message)) return 'denied';
  return undefined;
}

function duringReplicaFault(refusal: Refusal, faults: readonly FaultRun[]): boolean {
  return faults.some((f) => REPLICA_FAULTS.includes(f.kind) && refusal.startedAt <= f.recoveredAt && refusal.endedAt >= f.startedAt);
}

export function checkRefusals(refusals: readonly Refusal[], faults: readonly FaultRun[]): { violations: Violation[]; tolerated: number } {
  const violations: Violation[] = [];
  let tolerated = 0;
  for (const refusal of refusals) {
    const kind = refusalKind(refusal.message);
    if (kind === undefined || (kind === 'denied' && refusal.asAuthor)) continue;
    if (kind === 'failed-call' && duringReplicaFault(refusal, faults)) {
      tolerated += 1;
      continue;
    }
    const when = kind === 'failed-call' ? 'while no replica was killed or frozen' : 'though the admin may make it';
    violations.push(violation(kind === 'failed-call' ? 'admission-failed' : 'admission-denied', `step ${refusal.step} ${refusal.op}`, `refused ${when}: ${refusal.message.slice(0, 300)}`));
  }
  return { violations, tolerated };
}
