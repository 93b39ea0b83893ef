// The default as root: the product's two replicas as pods on a node of the soak's own, installed
// with the Helm chart from the image the Dockerfile builds. The faults reach a replica as they
// would on any node: its container's main process, found on the machine through the container's
// cgroup (host-pid.ts), gets SIGKILL (the kubelet restarts the container) or SIGSTOP and later
// SIGCONT. Whether a replica exited only when killed comes from the pods' status (restarts.ts),
// what it printed from the kubelet's log files (pod-logs.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { CoreV1Api, V1ContainerStateTerminated, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { TextSource } from './check-leaks.js';
import { containerIdOf, hostPidOf } from './host-pid.js';
import type { PodLogs } from './pod-logs.js';
import { apiRequestCounts, get } from './replicas.js';
import { checkRestarts, instancesStarted, type ReplicaObservation, type Signalled, type TerminatedInstance } from './restarts.js';
import type { ProductSummary, ReplicaRef, SoakReplicas } from './soak-replicas.js';
import type { Violation } from './violation.js';

/** The container port of the chart's pods (webhooks, probes, /metrics). */
const HTTPS_PORT = 9443;
const BACK_TIMEOUT_MS = 90_000;

export interface PodReplicaOptions {
  core: CoreV1Api;
  namespace: string;
  /** The chart's pods: `app.kubernetes.io/name=resource-distributor`. */
  labelSelector: string;
  logs: PodLogs;
  /** A bearer token whose user may get /metrics (the chart's pods answer no one else). */
  scrapeToken: string;
  log: (line: string) => void;
}

function containerOf(pod: V1Pod): V1ContainerStatus | undefined {
  return pod.status?.containerStatuses?.[0];
}

function isReady(pod: V1Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function terminatedOf(ended: V1ContainerStateTerminated | undefined): TerminatedInstance | undefined {
  if (!ended?.containerID) return undefined;
  return { containerId: ended.containerID, exitCode: ended.exitCode, ...(ended.reason ? { reason: ended.reason } : {}), ...(ended.finishedAt ? { finishedAt: new Date(ended.finishedAt).toISOString() } : {}) };
}

function observationOf(pod: V1Pod): ReplicaObservation {
  const container = containerOf(pod);
  const lastTerminated = terminatedOf(container?.lastState?.terminated);
  return { pod: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '', restartCount: container?.restartCount ?? 0, ...(lastTerminated ? { lastTerminated } : {}) };
}

/** Polls `probe` until it returns a value; rejects with `what` after `timeoutMs`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = BACK_TIMEOUT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}

interface Running {
  pod: V1Pod;
  container: V1ContainerStatus & { containerID: string };
  pid: number;
}

export class PodReplicas implements SoakReplicas {
  readonly mode = 'pods' as const;
  /** The pods the chart made, by uid: none may go or be replaced. */
  private readonly installed = new Map<string, string>();
  private readonly signalled: Signalled[] = [];
  /** Lines read from the log files between two calls of newLogLines (after a kill). */
  private readonly pending: TextSource[] = [];

  private constructor(private readonly options: PodReplicaOptions) {}

  /** Once the chart's pods are Ready: the two it made are the replicas for the whole run. */
  static async create(options: PodReplicaOptions): Promise<PodReplicas> {
    const replicas = new PodReplicas(options);
    const pods = await until('both replica pods Ready', async () => {
      const found = await replicas.pods();
      return found.length === 2 && found.every(isReady) ? found : undefined;
    });
    for (const pod of pods) replicas.installed.set(pod.metadata?.uid ?? '', pod.metadata?.name ?? '');
    return replicas;
  }

  private async pods(): Promise<V1Pod[]> {
    const { core, namespace, labelSelector } = this.options;
    return (await core.listNamespacedPod({ namespace, labelSelector })).items;
  }

  private async pod(name: string): Promise<V1Pod> {
    return this.options.core.readNamespacedPod({ namespace: this.options.namespace, name });
  }

  async current(): Promise<ReplicaRef[]> {
    return (await this.pods()).filter((pod) => !pod.metadata?.deletionTimestamp).map((pod) => ({ identity: pod.metadata?.name ?? '' }));
  }

  /** The replica's container once it runs, with its main process's pid on the machine. */
  private running(identity: string): Promise<Running> {
    return until(`${identity}'s container running`, async () => {
      const pod = await this.pod(identity);
      const container = containerOf(pod);
      if (!container?.state?.running || !container.containerID) return undefined;
      const pid = await hostPidOf(container.containerID);
      return pid === undefined ? undefined : { pod, container: { ...container, containerID: container.containerID }, pid };
    });
  }

  private signal(target: Running, signal: 'SIGKILL' | 'SIGTERM'): void {
    this.signalled.push({ uid: target.pod.metadata?.uid ?? '', containerId: target.container.containerID, signal });
    process.kill(target.pid, signal);
  }

  /** Until the kubelet has restarted the container (restartCount past `before`) and the pod is Ready. */
  private restarted(identity: string, before: number): Promise<V1Pod> {
    return until(`${identity} restarted and Ready`, async () => {
      const pod = await this.pod(identity);
      return (containerOf(pod)?.restartCount ?? 0) > before && isReady(pod) ? pod : undefined;
    });
  }

  async kill(replica: ReplicaRef): Promise<void> {
    const target = await this.running(replica.identity);
    this.signal(target, 'SIGKILL');
    await this.restarted(replica.identity, target.container.restartCount);
    // The killed instance's file is complete now: read before the kubelet may remove it.
    this.pending.push(...(await this.options.logs.newLines()));
  }

  /** Ready as the kubelet reports it, and answering /readyz on its address (its endpoint serves). */
  private async serving(identity: string): Promise<boolean> {
    const pod = await this.pod(identity);
    const ip = pod.status?.podIP;
    return isReady(pod) && ip !== undefined && (await get(HTTPS_PORT, '/readyz', 1_000, ip))?.status === 200;
  }

  async freeze(replica: ReplicaRef, ms: number): Promise<void> {
    const target = await this.running(replica.identity);
    process.kill(target.pid, 'SIGSTOP');
    try {
      await sleep(ms);
    } finally {
      // Gone meanwhile (the kubelet killed it): then there is nothing to continue.
      try {
        process.kill(target.pid, 'SIGCONT');
      } catch {
        this.options.log(`${replica.identity}: its process was gone before SIGCONT`);
      }
    }
    await until(`${replica.identity} Ready after SIGCONT`, async () => ((await this.serving(replica.identity)) ? true : undefined));
  }

  /** The kubelet restarts what exited: waits (60 s at most) for both replicas to be Ready. */
  async heal(): Promise<void> {
    await until('both replicas Ready', async () => {
      const pods = await this.pods();
      return pods.length === 2 && pods.every(isReady) ? true : undefined;
    }, 60_000).catch((error: unknown) => this.options.log(String(error)));
  }

  async apiRequests(): Promise<Map<string, Record<string, number>>> {
    const counts = new Map<string, Record<string, number>>();
    for (const pod of await this.pods()) {
      const container = containerOf(pod);
      const ip = pod.status?.podIP;
      if (!ip || !container?.state?.running || !container.containerID) continue;
      const answer = await get(HTTPS_PORT, '/metrics', 2_000, ip, { authorization: `Bearer ${this.options.scrapeToken}` });
      if (answer?.status === 200) counts.set(`${pod.metadata?.name ?? ''} ${containerIdOf(container.containerID).slice(0, 12)}`, apiRequestCounts(answer.body));
    }
    return counts;
  }

  async newLogLines(): Promise<TextSource[]> {
    return [...this.pending.splice(0), ...(await this.options.logs.newLines())];
  }

  private async observe(): Promise<ReplicaObservation[]> {
    return (await this.pods()).map(observationOf);
  }

  async unexpectedExits(): Promise<Violation[]> {
    return checkRestarts(this.installed, await this.observe(), this.signalled);
  }

  /**
   * SIGTERM to each replica's process, as the kubelet stops a container: each must end with exit
   * code 0, which its pod's status records; then the kubelet restarts it, as after a kill.
   */
  async stopGracefully(): Promise<Violation[]> {
    await Promise.all(
      [...this.installed.values()].map(async (identity) => {
        const target = await this.running(identity);
        this.signal(target, 'SIGTERM');
        await until(`${identity} ended on SIGTERM and restarted`, async () => {
          const container = containerOf(await this.pod(identity));
          const ended = container?.lastState?.terminated;
          return ended?.containerID === target.container.containerID && (container?.restartCount ?? 0) > target.container.restartCount ? true : undefined;
        });
      }),
    );
    this.pending.push(...(await this.options.logs.newLines()));
    return this.unexpectedExits();
  }

  async summary(): Promise<ProductSummary> {
    const observed = await this.observe();
    const unexpected = checkRestarts(this.installed, observed, this.signalled).map((v) => `${v.subject}: ${v.detail}`);
    return { mode: this.mode, started: instancesStarted(observed), endedBySoak: this.signalled.length, unexpected };
  }

  /** The node and the control plane go with the soak's world (setup.ts). */
  async close(): Promise<void> {
    return Promise.resolve();
  }
}
