// The faults: a replica killed (-9) while leading or following, then replaced (a process) or
// restarted by the kubelet (a pod); a replica stopped (SIGSTOP) for longer than its Lease, then
// continued; kube-apiserver or etcd killed and restarted; the replicas cut off from the API server
// (every connection dropped, watches included) for a moment, also with etcd compacted meanwhile
// so that their watches resume from a revision that is gone (410 Gone: the API server runs
// without its watch cache, as in test/e2e/faults.test.ts). The replicas reach the API server only
// through a proxy the soak holds: on 127.0.0.1 for processes; on the machine end of the node's
// link for pods, whose connections to the `kubernetes` Service are sent there.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoordinationV1Api } from '@kubernetes/client-node';
import type { ControlPlane } from '../control-plane/index.js';
import type { Prng } from './prng.js';
import type { ReplicaRef, SoakReplicas } from './soak-replicas.js';
import type { TcpProxy } from '../e2e/support/tcp-proxy.js';

export const FAULT_KINDS = ['kill-leader', 'kill-follower', 'stop-leader', 'restart-apiserver', 'restart-etcd', 'partition', 'partition-compacted'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultContext {
  plane: ControlPlane;
  replicas: SoakReplicas;
  coordination: CoordinationV1Api;
  lease: { namespace: string; name: string; durationMs: number };
  /** The replicas reach the API server only through this proxy. */
  apiProxy: TcpProxy;
  log: (line: string) => void;
}

export interface FaultRun {
  kind: FaultKind;
  /** Who it hit (a replica's identity, or the server). */
  target: string;
  startedAt: number;
  /** Once what was broken runs again (replaced, continued, restarted and ready). */
  recoveredAt: number;
}

export function chooseFault(prng: Prng): FaultKind {
  return prng.pick(FAULT_KINDS);
}

async function leaseHolder(context: FaultContext): Promise<string | undefined> {
  try {
    return (await context.coordination.readNamespacedLease(context.lease)).spec?.holderIdentity ?? undefined;
  } catch {
    return undefined;
  }
}

/** The live replica holding the Lease (`leader`) or not; any live one if the Lease names none of them. */
async function replicaFor(context: FaultContext, leader: boolean): Promise<ReplicaRef | undefined> {
  const holder = await leaseHolder(context);
  const live = await context.replicas.current();
  return live.find((r) => (r.identity === holder) === leader) ?? live[0];
}

/** SIGKILL; recovered once the replica is back (replaced, or restarted by the kubelet) and Ready. */
async function killAndReplace(context: FaultContext, leader: boolean): Promise<string> {
  const victim = await replicaFor(context, leader);
  if (!victim) return 'none';
  await context.replicas.kill(victim);
  return victim.identity;
}

/** SIGSTOP longer than the Lease, then SIGCONT; recovered once it answers /readyz again (its endpoint is back). */
async function stopBeyondLease(context: FaultContext): Promise<string> {
  const victim = await replicaFor(context, true);
  if (!victim) return 'none';
  await context.replicas.freeze(victim, context.lease.durationMs + 2_000);
  return victim.identity;
}

/** Compacts etcd to its current revision: every older resourceVersion is gone. */
async function compactEtcd(etcdUrl: string): Promise<void> {
  const post = async (path: string, body: unknown): Promise<unknown> => {
    const response = await fetch(`${etcdUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
    if (!response.ok) throw new Error(`etcd ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  const range = (await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 })) as { header: { revision: string } };
  await post('/v3/kv/compaction', { revision: range.header.revision, physical: true });
}

/** Every connection of the replicas to the API server dropped, new ones held for 2 s. */
async function partition(context: FaultContext, compact: boolean): Promise<string> {
  context.apiProxy.partition();
  await sleep(1_000);
  if (compact) await compactEtcd(context.plane.etcdUrl);
  await sleep(1_000);
  context.apiProxy.heal();
  return 'replicas to kube-apiserver';
}

export async function runFault(kind: FaultKind, context: FaultContext): Promise<FaultRun> {
  const startedAt = Date.now();
  context.log(`fault: ${kind}`);
  let target: string;
  switch (kind) {
    case 'kill-leader':
    case 'kill-follower':
      target = await killAndReplace(context, kind === 'kill-leader');
      break;
    case 'stop-leader':
      target = await stopBeyondLease(context);
      break;
    case 'restart-apiserver':
      target = 'kube-apiserver';
      await context.plane.restart('kube-apiserver', { crash: true });
      break;
    case 'restart-etcd':
      target = 'etcd';
      await context.plane.restart('etcd', { crash: true, downMs: 1_000 });
      break;
    case 'partition':
    case 'partition-compacted':
      target = await partition(context, kind === 'partition-compacted');
      break;
  }
  return { kind, target, startedAt, recoveredAt: Date.now() };
}
