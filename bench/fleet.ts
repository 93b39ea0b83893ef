// The fleet: many namespaces sharing one label, targeted by up to 10 distributions. Fan-out,
// steady state and memory all work on it, growing it as they need.
import { performance } from 'node:perf_hooks';
import type { ResolvedDistribution } from '../src/domain/types.js';
import { GROUP_LABEL, groupDistribution, numberedNames, type BenchKube } from './bench-kube.js';

export const FLEET_GROUP = 'fleet';

export function fleetDistributionName(index: number): string {
  return `bench-fleet-${index}`;
}

/** Alternating kinds: distribution 0 (the fan-out one) is a ConfigMap. */
export function fleetDistribution(index: number, revision = 1): ResolvedDistribution {
  return groupDistribution(fleetDistributionName(index), index % 2 === 0 ? 'ConfigMap' : 'Secret', FLEET_GROUP, revision);
}

export class Fleet {
  private size = 0;
  private distributions = 0;

  constructor(
    private readonly kube: BenchKube,
    private readonly concurrency: number,
  ) {}

  get namespaces(): string[] {
    return numberedNames('bench-fleet-ns', 0, this.size);
  }

  get distributionNames(): string[] {
    return Array.from({ length: this.distributions }, (_, i) => fleetDistributionName(i));
  }

  /** Creates the namespaces the fleet lacks to reach `count`; returns how long that took. */
  async grow(count: number): Promise<{ created: number; ms: number }> {
    if (count <= this.size) return { created: 0, ms: 0 };
    const started = performance.now();
    const created = await this.kube.createNamespaces(numberedNames('bench-fleet-ns', this.size, count), { [GROUP_LABEL]: FLEET_GROUP }, this.concurrency);
    this.size = count;
    return { created: created.size, ms: performance.now() - started };
  }

  /** Creates distributions up to `count` (indexes this.distributions..count-1); returns the new names. */
  async addDistributions(count: number): Promise<string[]> {
    const added: string[] = [];
    for (let i = this.distributions; i < count; i++) {
      await this.kube.createDistribution(fleetDistribution(i));
      added.push(fleetDistributionName(i));
    }
    this.distributions = Math.max(this.distributions, count);
    return added;
  }

  /** Resolves once every fleet distribution reports all fleet namespaces as succeeded for its current generation. */
  async waitConverged(timeoutMs: number): Promise<void> {
    const names = new Set(this.distributionNames);
    const size = this.size;
    await this.kube.waitForDistributions(
      `${names.size} fleet distributions converged over ${size} namespaces`,
      (items) => {
        const ours = items.filter((rd) => names.has(rd.metadata.name));
        return (
          ours.length === names.size &&
          ours.every((rd) => rd.status?.observedGeneration === rd.metadata.generation && rd.status?.succeeded === size && rd.status.desired === size)
        );
      },
      timeoutMs,
    );
  }
}
