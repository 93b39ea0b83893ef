// 2. Propagation: D distributions select a label; N namespaces carrying it are created (bounded
// concurrency). Per namespace: from its create response to the moment a watch on our copies has
// seen all D of them. Generation is triggered by the namespace webhook; the controller's
// namespace watch races it, whichever writes first wins.
import { performance } from 'node:perf_hooks';
import { LABEL_DISTRIBUTION } from '../src/domain/types.js';
import { GROUP_LABEL, groupDistribution, numberedNames, type BenchKube } from './bench-kube.js';
import { watchObjects } from './object-watch.js';
import { waitForQuiet, type Product } from './product.js';
import type { BenchSize } from './sizes.js';
import { summarize, type Summary } from './stats.js';
import { waitUntil } from './wait.js';

export interface PropagationResult {
  namespaces: number;
  distributions: number;
  clientConcurrency: number;
  /** Namespace create response -> all D copies visible. */
  latencyMs: Summary;
  /** Namespace create request -> response (includes the namespace webhook call). */
  createLatencyMs: Summary;
  /** First create request -> last copy visible. */
  wallMs: number;
  copiesPerSecond: number;
  namespacesCreatePerSecond: number;
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
  const { namespaces: count, distributions: d } = size.propagation;
  const names = Array.from({ length: d }, (_, i) => `bench-prop-${i}`);
  for (const [i, name] of names.entries()) await kube.createDistribution(groupDistribution(name, i % 2 === 0 ? 'ConfigMap' : 'Secret', PROPAGATION_GROUP));
  // The generator matches namespaces against the distributions it has cached.
  await waitUntil('distributions cached by the product', () => names.every((name) => product.controller.caches.distributions.get(name)), 30_000);

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
    await waitForQuiet(product.controller);
    product.controller.requests.reset();
    const started = performance.now();
    const created = await kube.createNamespaces(namespaces, { [GROUP_LABEL]: PROPAGATION_GROUP }, size.clientConcurrency);
    const createdAll = performance.now();
    await waitUntil(`all ${d} copies in ${count} namespaces`, () => namespaces.every((ns) => complete.has(ns)), 60_000 + count * 500, () => `${complete.size} of ${count} complete`);
    const latencies = namespaces.map((ns) => (complete.get(ns) ?? Number.NaN) - (created.get(ns)?.at ?? Number.NaN));
    const createLatencies = [...created.values()].map(({ sentAt, at }) => at - sentAt);
    const wallMs = Math.max(...complete.values()) - started;
    await waitForQuiet(product.controller);
    const tally = product.controller.requests.tally();
    const requests = Object.values(tally.byVerb).reduce((sum, n) => sum + n, 0) - (tally.byVerb.watch ?? 0);
    return {
      namespaces: count,
      distributions: d,
      clientConcurrency: size.clientConcurrency,
      latencyMs: summarize(latencies),
      createLatencyMs: summarize(createLatencies),
      wallMs,
      copiesPerSecond: (count * d) / (wallMs / 1000),
      namespacesCreatePerSecond: count / ((createdAll - started) / 1000),
      requests: tally.byRequest,
      requestsPerCopy: requests / (count * d),
      failedRequests: tally.errors,
    };
  } finally {
    watch.stop();
  }
}
