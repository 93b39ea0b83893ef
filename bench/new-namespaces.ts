// New namespaces created at a fixed rate while D distributions select them, each timed from its
// create response until a watch has seen a copy of every distribution in it: the propagation
// section's measurement, for the product and for its OpenKruise peer alike.
import { performance } from 'node:perf_hooks';
import { ANNOTATION_FROM } from '../src/domain/types.js';
import { GROUP_LABEL, groupDistribution, numberedNames, type BenchKube } from './bench-kube.js';
import { watchObjects, type SeenObject } from './object-watch.js';
import type { BenchSize } from './sizes.js';
import { summarize, type Summary } from './stats.js';
import { waitUntil } from './wait.js';

/** What one side's new namespaces showed. */
export interface NewNamespaces {
  /** Namespace create response -> all D copies visible. */
  latencyMs: Summary;
  /** Namespace create request -> response (includes the namespace webhooks' calls). */
  createLatencyMs: Summary;
  /** First create request -> last copy visible. */
  wallMs: number;
}

export const PROPAGATION_GROUP = 'propagation';

export function propagationDistributionNames(d: number): string[] {
  return Array.from({ length: d }, (_, i) => `bench-prop-${i}`);
}

/** The propagation's distributions, created: alternating kinds over the propagation group. */
export async function createPropagationDistributions(kube: BenchKube, names: readonly string[]): Promise<void> {
  for (const [i, name] of names.entries()) await kube.createDistribution(groupDistribution(name, i % 2 === 0 ? 'ConfigMap' : 'Secret', PROPAGATION_GROUP));
}

/**
 * Creates the size's namespaces at its pace and times each until a watch (`selector`) has seen a
 * copy of every distribution in it. `from` names the distribution a copy comes from (undefined:
 * not a copy of these distributions). `quiet` runs between the watch's start and the first create.
 */
export async function timeNewNamespaces(
  kube: BenchKube,
  size: BenchSize,
  selector: string,
  from: (object: SeenObject) => string | undefined,
  quiet: () => Promise<void> = () => Promise.resolve(),
): Promise<NewNamespaces> {
  const { namespaces: count, distributions: d, ratePerSecond } = size.propagation;
  const ours = new Set(propagationDistributionNames(d));
  const seen = new Map<string, Set<string>>();
  const complete = new Map<string, number>();
  const watch = await watchObjects(kube.kc, ['ConfigMap', 'Secret'], selector, (type, object, atMs) => {
    if (type === 'DELETED' || !ours.has(from(object) ?? '')) return;
    const set = seen.get(object.namespace) ?? new Set<string>();
    set.add(`${object.kind}/${object.name}`);
    seen.set(object.namespace, set);
    if (set.size === d && !complete.has(object.namespace)) complete.set(object.namespace, atMs);
  });
  try {
    const namespaces = numberedNames('bench-prop-ns', 0, count);
    await quiet();
    const started = performance.now();
    const created = await kube.createNamespacesAtRate(namespaces, { [GROUP_LABEL]: PROPAGATION_GROUP }, ratePerSecond);
    await waitUntil(`all ${d} copies in ${count} namespaces`, () => namespaces.every((ns) => complete.has(ns)), 60_000 + count * 500, () => `${complete.size} of ${count} complete`);
    return {
      latencyMs: summarize(namespaces.map((ns) => (complete.get(ns) ?? Number.NaN) - (created.get(ns)?.at ?? Number.NaN))),
      createLatencyMs: summarize([...created.values()].map(({ sentAt, at }) => at - sentAt)),
      wallMs: Math.max(...complete.values()) - started,
    };
  } finally {
    watch.stop();
  }
}

/** A copy's distribution, as OpenKruise and the product both write it: the `resource.from` annotation. */
export const copiedFrom = (object: SeenObject): string | undefined => object.annotations[ANNOTATION_FROM];
