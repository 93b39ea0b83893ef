// The two replicas the soak runs the product as, whichever way they run: pods on a node of the
// soak's own (pod-replicas.ts, the default as root) or local processes behind a proxy
// (replicas.ts). The faults, the rounds and the report see only this.
import type { ReplicaMode } from './args.js';
import type { TextSource } from './check-leaks.js';
import type { Violation } from './violation.js';

/** A replica as leader election knows it: its identity is its POD_NAME, the Lease's holderIdentity. */
export interface ReplicaRef {
  identity: string;
}

export interface ProductSummary {
  mode: ReplicaMode;
  /** Processes started, or container instances (each pod's first, and one per restart). */
  started: number;
  /** Ended by the soak: SIGKILL during the run, SIGTERM at its end. */
  endedBySoak: number;
  /** Exits the soak did not cause, each described. */
  unexpected: string[];
}

export interface SoakReplicas {
  readonly mode: ReplicaMode;
  /** The replicas running now. */
  current(): Promise<ReplicaRef[]>;
  /** SIGKILL to the replica's process (as the OOM killer would); resolves once it is back and Ready. */
  kill(replica: ReplicaRef): Promise<void>;
  /** SIGSTOP for `ms`, then SIGCONT; resolves once it is Ready again. */
  freeze(replica: ReplicaRef, ms: number): Promise<void>;
  /** Once a round's operations are done: both replicas run again, whatever stopped one. */
  heal(): Promise<void>;
  /** `resource_distributor_api_requests_total` by `<verb> <resource>`, of every running process, keyed by process. */
  apiRequests(): Promise<Map<string, Record<string, number>>>;
  /** The lines the replicas printed since the last call, by replica. */
  newLogLines(): Promise<TextSource[]>;
  /** Every exit so far that the soak did not cause. */
  unexpectedExits(): Promise<Violation[]>;
  /** SIGTERM to every replica, as a rolling update stops one: each must exit 0 (README: "Rolling updates and faults"). */
  stopGracefully(): Promise<Violation[]>;
  summary(): Promise<ProductSummary>;
  /** Stops whatever still runs; once, however often it is called. */
  close(): Promise<void>;
}
