// "No replica exited except when killed", for replicas that are pods: the kubelet restarts a
// container whatever ended it, so what the soak did is matched against what the pods' status
// records: each container's restartCount, and the last instance that ended (its containerID, exit
// code and reason). Pure; the soak observes the pods after every kill and at every quiet period.
import { violation, type Violation } from './violation.js';

export interface TerminatedInstance {
  /** `containerd://<id>` */
  containerId: string;
  exitCode: number;
  reason?: string;
  finishedAt?: string;
}

/** A replica pod's container as its status showed it. */
export interface ReplicaObservation {
  pod: string;
  uid: string;
  restartCount: number;
  lastTerminated?: TerminatedInstance;
}

/** A signal the soak sent to a container instance's main process. */
export interface Signalled {
  uid: string;
  containerId: string;
  signal: 'SIGKILL' | 'SIGTERM';
}

/** What a process killed with SIGKILL exits with (128 + 9). */
export const KILLED_EXIT_CODE = 137;

function described(t: TerminatedInstance): string {
  return `exit code ${t.exitCode}${t.reason ? ` (${t.reason})` : ''}${t.finishedAt ? ` at ${t.finishedAt}` : ''}`;
}

/** One pod's violations: more restarts than exits the soak caused, an instance that ended unsignalled, a SIGKILL or SIGTERM that ended otherwise. */
function checkReplica(seen: ReplicaObservation, signalled: readonly Signalled[]): Violation[] {
  const mine = signalled.filter((s) => s.uid === seen.uid);
  const found: Violation[] = [];
  if (seen.restartCount > mine.length) {
    const last = seen.lastTerminated ? `; last ended: ${described(seen.lastTerminated)}` : '';
    found.push(violation('replica-exited', seen.pod, `restarted ${seen.restartCount} times, but the soak killed or stopped it ${mine.length} times${last}`));
  }
  const ended = seen.lastTerminated;
  if (!ended) return found;
  const cause = mine.find((s) => s.containerId === ended.containerId);
  if (!cause) found.push(violation('replica-exited', `${seen.pod} ${ended.containerId.slice(-12)}`, `ended with ${described(ended)} without being killed`));
  else if (cause.signal === 'SIGTERM' && ended.exitCode !== 0) found.push(violation('replica-stop-failed', `${seen.pod} ${ended.containerId.slice(-12)}`, `ended with ${described(ended)} on SIGTERM`));
  else if (cause.signal === 'SIGKILL' && ended.exitCode !== KILLED_EXIT_CODE) found.push(violation('replica-exited', `${seen.pod} ${ended.containerId.slice(-12)}`, `ended with ${described(ended)} before the soak's SIGKILL took it`));
  return found;
}

/**
 * Every violation of "no replica exited except when killed" that the pods' status shows, given
 * the pods the soak installed (`installed`, by uid) and the signals it sent: a pod gone or a pod
 * that replaced one (the ReplicaSet's, after an eviction or a deletion the soak did not make) is
 * one too.
 */
export function checkRestarts(installed: ReadonlyMap<string, string>, observed: readonly ReplicaObservation[], signalled: readonly Signalled[]): Violation[] {
  const found: Violation[] = [];
  for (const [uid, pod] of installed) if (!observed.some((o) => o.uid === uid)) found.push(violation('replica-gone', pod, 'the pod is gone, though the soak never deleted it'));
  for (const seen of observed) {
    if (!installed.has(seen.uid)) found.push(violation('replica-replaced', seen.pod, 'a pod the soak did not install (a replica was replaced)'));
    found.push(...checkReplica(seen, signalled));
  }
  return found;
}

/** Container instances started: each pod's first, plus one per restart. */
export function instancesStarted(observed: readonly ReplicaObservation[]): number {
  return observed.reduce((sum, o) => sum + o.restartCount + 1, 0);
}
