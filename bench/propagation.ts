// 2. Propagation: D distributions select a label; N namespaces carrying it are created at a fixed
// rate, as a deploy pipeline creates them. Per namespace: from its create response to the moment a watch on our copies has
// seen all D of them. Generation is triggered by the namespace webhook; the controller's
// namespace watch races it, whichever writes first wins.
import { performance } from 'node:perf_hooks';
import { LABEL_DISTRIBUTION } from '../src/domain/types.js';
import { GROUP_LABEL, groupDistribution, numberedNames, type BenchKube } from './bench-kube.js';
import { watchObjects } from './object-watch.js';
import { requestsBetween, waitForQuiet, type Product } from './product.js';
import type { BenchSize } from './sizes.js';
import { summarize, type Summary } from './stats.js';
import { waitUntil } from './wait.js';

export interface PropagationResult {
  namespaces: number;
  distributions: number;
  /** Namespaces created per second (paced). */
  ratePerSecond: number;
  /** Namespace create response -> all D copies visible. */
  latencyMs: Summary;
  /** Namespace create request -> response (includes the namespace webhook call). */
  createLatencyMs: Summary;
  /** First create request -> last copy visible. */
  wallMs: number;
  /** The product's API requests from the first namespace until it was quiet again, by `verb resource`. */
  requests: Record<string, number>;
  /** Requests (other than watches) per copy written. */
  requestsPerCopy: number;
  /** Failed requests among them (AlreadyExists when generator and reconciler race). */
  failedRequests: number;
}

export const PROPAGATION_GROUP = 'propagation';

export async function runPropagation(options: { kube: BenchKube; product: Product; size: BenchSize }): Promise<PropagationResult> {
  const { kube, product, size } = options;
  const { namespaces: count, distributions: d, ratePerSecond } = size.propagation;
  const names = Array.from({ length: d }, (_, i) => `bench-prop-${i}`);
  for (const [i, name] of names.entries()) await kube.createDistribution(groupDistribution(name, i % 2 === 0 ? 'ConfigMap' : 'Secret', PROPAGATION_GROUP));
  // A status written for the current generation: the product has every distribution in its caches.
  await kube.waitForDistributions(
    'distributions seen by the product',
    (items) => names.every((name) => items.some((rd) => rd.metadata.name === name && rd.status?.observedGeneration === rd.metadata.generation)),
    30_000,
  );

  const seen = new Map<string, Set<string>>();
  const complete = new Map<string, number>();
  const ours = new Set(names);
  const watch = await watchObjects(kube.kc, ['ConfigMap', 'Secret'], `${LABEL_DISTRIBUTION} in (${names.join(',')})`, (type, object, atMs) => {
    if (type === 'DELETED' || !ours.has(object.labels[LABEL_DISTRIBUTION] ?? '')) return;
    const set = seen.get(object.namespace) ?? new Set<string>();
    set.add(`${object.kind}/${object.name}`);
    seen.set(object.namespace, set);
    if (set.size === d && !complete.has(object.namespace)) complete.set(object.namespace, atMs);
  });
  try {
    const namespaces = numberedNames('bench-prop-ns', 0, count);
    const before = await waitForQuiet(product);
    const started = performance.now();
    const created = await kube.createNamespacesAtRate(namespaces, { [GROUP_LABEL]: PROPAGATION_GROUP }, ratePerSecond);
    await waitUntil(`all ${d} copies in ${count} namespaces`, () => namespaces.every((ns) => complete.has(ns)), 60_000 + count * 500, () => `${complete.size} of ${count} complete`);
    const latencies = namespaces.map((ns) => (complete.get(ns) ?? Number.NaN) - (created.get(ns)?.at ?? Number.NaN));
    const createLatencies = [...created.values()].map(({ sentAt, at }) => at - sentAt);
    const wallMs = Math.max(...complete.values()) - started;
    const requests = requestsBetween(before, await waitForQuiet(product));
    const total = Object.entries(requests.byRequest).reduce((sum, [key, n]) => (key.startsWith('watch ') ? sum : sum + n), 0);
    return {
      namespaces: count,
      distributions: d,
      ratePerSecond,
      latencyMs: summarize(latencies),
      createLatencyMs: summarize(createLatencies),
      wallMs,
      requests: requests.byRequest,
      requestsPerCopy: total / (count * d),
      failedRequests: requests.errors,
    };
  } finally {
    watch.stop();
  }
}
