// Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules: a lease held by
// someone else is taken only after it went unrenewed for its duration *as observed locally*
// (immune to clock skew between replicas); the leader renews every retry period and steps down
// if no renewal succeeded within the renew deadline; stopping releases the lease at once.
import type { Clock } from '../domain/clock.js';
import type { Logger } from '../log.js';
import type { ClusterApi, LeaseObject, LeaseSpec } from './cluster-api.js';
import { describeApiError } from './errors.js';

export interface LeaseStore {
  get(): Promise<LeaseObject | undefined>;
  create(lease: LeaseObject): Promise<LeaseObject>;
  replace(lease: LeaseObject): Promise<LeaseObject>;
}

export function leaseStoreFromApi(api: ClusterApi, namespace: string, name: string): LeaseStore {
  return {
    get: () => api.getLease(namespace, name),
    create: (lease) => api.createLease(lease),
    replace: (lease) => api.replaceLease(lease),
  };
}

/** Which Lease, who we are, and client-go's three timings (renewDeadline < leaseDuration). */
export interface LeaseSettings {
  leaseName: string;
  leaseNamespace: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface LeaderElectionOptions extends LeaseSettings {
  store: LeaseStore;
  clock: Clock;
  log: Logger;
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

/** MicroTime: RFC 3339 with exactly six fractional digits, as the API server parses it. */
export function toMicroTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function sameRecord(a: LeaseSpec | undefined, b: LeaseSpec): boolean {
  return (
    a !== undefined &&
    a.holderIdentity === b.holderIdentity &&
    a.renewTime === b.renewTime &&
    a.leaseDurationSeconds === b.leaseDurationSeconds
  );
}

export class LeaderElector {
  private leader = false;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private observed: LeaseSpec | undefined;
  private observedAt = 0;
  private current: LeaseObject | undefined;
  private attempt: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeaderElectionOptions) {}

  isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
    await this.attempt;
    const wasLeader = this.leader;
    this.leader = false;
    // Also when the round that stop() waited for had just acquired the lease: nobody else could
    // take it before it expires otherwise.
    if (this.current?.spec.holderIdentity === this.options.identity) await this.release();
    if (wasLeader) this.options.onStoppedLeading();
  }

  /** One acquire-or-renew round; exposed for tests. Returns whether we hold the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.options.clock();
    const existing = await this.options.store.get();
    if (!existing) return this.create(now);
    if (!sameRecord(this.observed, existing.spec)) {
      this.observed = existing.spec;
      this.observedAt = now.getTime();
    }
    const holder = existing.spec.holderIdentity;
    const durationMs = (existing.spec.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== this.options.identity && this.observedAt + durationMs > now.getTime()) {
      // Someone else holds it now (we were deemed gone): stop writing at once, not at our deadline.
      this.current = undefined;
      this.stepDown();
      return false;
    }
    const spec: LeaseSpec = { ...existing.spec, ...this.ownRecord(now) };
    if (holder !== this.options.identity) {
      spec.acquireTime = toMicroTime(now);
      spec.leaseTransitions = (existing.spec.leaseTransitions ?? 0) + 1;
    }
    return this.write(() => this.options.store.replace({ metadata: existing.metadata, spec }), now);
  }

  private ownRecord(now: Date): LeaseSpec {
    return {
      holderIdentity: this.options.identity,
      leaseDurationSeconds: Math.max(1, Math.ceil(this.options.leaseDurationMs / 1000)),
      renewTime: toMicroTime(now),
    };
  }

  private create(now: Date): Promise<boolean> {
    const lease: LeaseObject = {
      metadata: { name: this.options.leaseName, namespace: this.options.leaseNamespace },
      spec: { ...this.ownRecord(now), acquireTime: toMicroTime(now), leaseTransitions: 0 },
    };
    return this.write(() => this.options.store.create(lease), now);
  }

  private async write(send: () => Promise<LeaseObject>, now: Date): Promise<boolean> {
    try {
      const written = await send();
      this.current = written;
      this.observed = written.spec;
      this.observedAt = now.getTime();
      return true;
    } catch (error) {
      // Conflict / AlreadyExists: another replica wrote first; anything else: try again next round.
      const info = describeApiError(error);
      this.options.log.debug({ code: info.code, reason: info.reason }, 'lease write failed');
      return false;
    }
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.attempt = this.round();
    }, delayMs);
  }

  private async round(): Promise<void> {
    let held = false;
    const startedAt = this.options.clock().getTime();
    try {
      held = await this.tryAcquireOrRenew();
    } catch (error) {
      const info = describeApiError(error);
      this.options.log.warn({ code: info.code, reason: info.reason, err: info.message }, 'lease request failed');
    }
    if (!this.running) return;
    if (held) this.renewed(startedAt);
    const jitter = this.leader ? 1 : 1 + Math.random() * 0.2;
    this.schedule(this.options.retryPeriodMs * jitter);
  }

  private renewed(startedAt: number): void {
    clearTimeout(this.deadline);
    // Whatever happens to the next requests (even hanging ones), leadership ends at the deadline,
    // counted from when the successful renewal was sent.
    const elapsed = this.options.clock().getTime() - startedAt;
    this.deadline = setTimeout(() => this.stepDown(), Math.max(0, this.options.renewDeadlineMs - elapsed));
    if (this.leader) return;
    this.leader = true;
    this.options.log.info({ identity: this.options.identity, lease: this.options.leaseName }, 'became leader');
    this.options.onStartedLeading();
  }

  private stepDown(): void {
    clearTimeout(this.deadline);
    if (!this.leader) return;
    this.leader = false;
    this.options.log.warn({ identity: this.options.identity, lease: this.options.leaseName }, 'lost leadership');
    this.options.onStoppedLeading();
  }

  private async release(): Promise<void> {
    const lease = this.current;
    if (!lease) return;
    this.current = undefined;
    const now = toMicroTime(this.options.clock());
    try {
      await this.options.store.replace({
        metadata: lease.metadata,
        spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now },
      });
      this.options.log.info({ identity: this.options.identity, lease: this.options.leaseName }, 'lease released');
    } catch (error) {
      const info = describeApiError(error);
      // 409: the lease changed since our last write, so it is no longer ours to release.
      const level = info.code === 409 ? 'debug' : 'warn';
      this.options.log[level]({ code: info.code, reason: info.reason, err: info.message }, 'lease release failed');
    }
  }
}
