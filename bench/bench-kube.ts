// What the benchmark does to the cluster, as an admin would: namespaces, distributions, plain
// ConfigMaps (the baseline). Every batch runs with bounded concurrency so that a 2-core machine
// measures the product rather than a flood of its own making.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION, type ResolvedDistribution, type ResourceDistribution } from '../src/domain/types.js';
import { isAlreadyExists, isConflict } from '../src/k8s/errors.js';
import { mapBounded } from '../src/bounded.js';
import { distribution } from '../test/unit/builders.js';
import { KeptAliveConnection } from './kept-alive.js';

const RD = { group: GROUP, version: VERSION, plural: PLURAL };

/** Label every namespace of the benchmark carries; its value names the group (propagation, fleet...). */
export const GROUP_LABEL = 'bench.resource-distributor.io/group';

function plain<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** A ConfigMap or Secret distribution of a few hundred bytes to every namespace of `group`. */
export function groupDistribution(name: string, kind: 'ConfigMap' | 'Secret', group: string, revision = 1): ResolvedDistribution {
  const content = {
    'revision': String(revision),
    'settings.properties': `feature.a=on\nfeature.b=off\nlimit=${100 * revision}\n`,
    'endpoint': `https://service-${revision}.example.internal:8443/api`,
  };
  const builder = distribution(name).matchLabels({ [GROUP_LABEL]: group });
  const rd = (kind === 'Secret' ? builder.secret(name, content) : builder.configMap(name, content)).build();
  return { ...rd, metadata: { name } };
}

export class BenchKube {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  private connection: KeptAliveConnection | undefined;

  constructor(readonly kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  /**
   * Creates `names` with `concurrency` requests in flight (existing ones are left as they are).
   * Returns, per name, when its create request left and when its response arrived (performance.now() ms).
   */
  async createNamespaces(names: readonly string[], labels: Record<string, string>, concurrency: number): Promise<Map<string, { sentAt: number; at: number }>> {
    const created = new Map<string, { sentAt: number; at: number }>();
    await mapBounded(names, concurrency, async (name) => {
      try {
        const sentAt = performance.now();
        await this.core.createNamespace({ body: { metadata: { name, labels } } });
        created.set(name, { sentAt, at: performance.now() });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
      }
    });
    return created;
  }

  /** Creates `names` at a fixed rate (one every 1000/perSecond ms, whatever the answers take), as a deploy pipeline would. */
  async createNamespacesAtRate(names: readonly string[], labels: Record<string, string>, perSecond: number): Promise<Map<string, { sentAt: number; at: number }>> {
    const created = new Map<string, { sentAt: number; at: number }>();
    const start = performance.now();
    await Promise.all(
      names.map(async (name, i) => {
        await sleep(Math.max(0, start + (i * 1000) / perSecond - performance.now()));
        const sentAt = performance.now();
        await this.core.createNamespace({ body: { metadata: { name, labels } } });
        created.set(name, { sentAt, at: performance.now() });
      }),
    );
    return created;
  }

  async countNamespaces(): Promise<number> {
    return (await this.core.listNamespace()).items.length;
  }

  async createDistribution(rd: ResourceDistribution): Promise<void> {
    await this.custom.createClusterCustomObject({ ...RD, body: rd });
  }

  async getDistribution(name: string): Promise<ResourceDistribution> {
    return plain<ResourceDistribution>(await this.custom.getClusterCustomObject({ ...RD, name }));
  }

  /** Deletes it; its copies go with it (the garbage collector follows their ownerReferences). */
  async deleteDistribution(name: string): Promise<void> {
    await this.custom.deleteClusterCustomObject({ ...RD, name });
  }

  async listDistributions(): Promise<ResourceDistribution[]> {
    const list = plain<{ items: ResourceDistribution[] }>(await this.custom.listClusterCustomObject({ ...RD }));
    return list.items;
  }

  /**
   * Read-modify-write of the spec, retried on conflicts (the controller writes status meanwhile),
   * over a kept-alive connection the read has opened (see kept-alive.ts). Returns when the last
   * replace was sent (performance.now()): the change's own request, the read before it aside.
   */
  async updateDistribution(name: string, change: (rd: ResourceDistribution) => void): Promise<number> {
    const path = `/apis/${GROUP}/${VERSION}/${PLURAL}/${encodeURIComponent(name)}`;
    const connection = await this.keptAlive();
    for (let attempt = 1; ; attempt++) {
      const rd = await connection.get<ResourceDistribution>(path);
      change(rd);
      let sent = 0;
      try {
        await connection.put(path, rd, () => (sent = performance.now()));
        return sent;
      } catch (error) {
        if (!isConflict(error) || attempt >= 10) throw error;
      }
    }
  }

  /** Polls until `done` holds for the listed distributions (status written by the controller). */
  async waitForDistributions(what: string, done: (items: ResourceDistribution[]) => boolean, timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!done(await this.listDistributions())) {
      if (performance.now() > deadline) throw new Error(`${what}: not reached within ${Math.round(timeoutMs / 1000)} s`);
      await sleep(250);
    }
  }

  /** Creates plain ConfigMaps (one per namespace); returns each one's resourceVersion by namespace. */
  async createConfigMaps(namespaces: readonly string[], build: (namespace: string) => V1ConfigMap, concurrency: number): Promise<Map<string, string>> {
    const versions = new Map<string, string>();
    await mapBounded(namespaces, concurrency, async (namespace) => {
      const created = await this.core.createNamespacedConfigMap({ namespace, body: build(namespace) });
      versions.set(namespace, created.metadata?.resourceVersion ?? '');
    });
    return versions;
  }

  /**
   * Replaces it over a kept-alive connection that a read of it has opened (see kept-alive.ts),
   * whatever resourceVersion it stands at. Returns when the replace was sent (performance.now()).
   */
  async replaceConfigMap(body: V1ConfigMap): Promise<number> {
    const path = `/api/v1/namespaces/${encodeURIComponent(body.metadata?.namespace ?? '')}/configmaps/${encodeURIComponent(body.metadata?.name ?? '')}`;
    const connection = await this.keptAlive();
    await connection.get<V1ConfigMap>(path);
    let sent = 0;
    await connection.put(path, body, () => (sent = performance.now()));
    return sent;
  }

  /** Closes the kept-alive connection, if one was opened. */
  close(): void {
    this.connection?.close();
    this.connection = undefined;
  }

  private async keptAlive(): Promise<KeptAliveConnection> {
    this.connection ??= await KeptAliveConnection.open(this.kc);
    return this.connection;
  }
}

/** `prefix-0000`, `prefix-0001`, ... for indexes from..to-1 (sortable, DNS labels). */
export function numberedNames(prefix: string, from: number, to: number): string[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => `${prefix}-${String(from + i).padStart(4, '0')}`);
}
