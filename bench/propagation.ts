// 2. Propagation: D distributions select a label; N namespaces carrying it are created at a fixed
// rate, as a deploy pipeline creates them. Per namespace: from its create response to the moment a watch on our copies has
// seen all D of them. Generation is triggered by the namespace webhook; the controller's
// namespace watch races it, whichever writes first wins. The peer (kruise-propagation.ts) does
// the same on a plane of its own.
import { LABEL_DISTRIBUTION } from '../src/domain/types.js';
import type { BenchKube } from './bench-kube.js';
import type { KruisePeerResult } from './kruise-peer.js';
import { runKruisePropagation } from './kruise-propagation.js';
import { copiedFrom, createPropagationDistributions, propagationDistributionNames, timeNewNamespaces, type NewNamespaces } from './new-namespaces.js';
import { requestsBetween, waitForQuiet, type Product } from './product.js';
import type { Scrape } from './scrape.js';
import type { BenchSize } from './sizes.js';

export interface PropagationResult extends NewNamespaces {
  namespaces: number;
  distributions: number;
  /** Namespaces created per second (paced). */
  ratePerSecond: number;
  /** The product's API requests from the first namespace until it was quiet again, by `verb resource`. */
  requests: Record<string, number>;
  /** Requests (other than watches) per copy written. */
  requestsPerCopy: number;
  /** Failed requests among them (AlreadyExists when generator and reconciler race). */
  failedRequests: number;
  /** OpenKruise's kruise-manager doing the same on its own plane (absent in reports made before it). */
  kruise?: KruisePeerResult<NewNamespaces>;
}

export async function runPropagation(options: { kube: BenchKube; product: Product; size: BenchSize; kruise: boolean }): Promise<PropagationResult> {
  const { kube, product, size } = options;
  const { namespaces: count, distributions: d, ratePerSecond } = size.propagation;
  const names = propagationDistributionNames(d);
  await createPropagationDistributions(kube, names);
  // A status written for the current generation: the product has every distribution in its caches.
  await kube.waitForDistributions(
    'distributions seen by the product',
    (items) => names.every((name) => items.some((rd) => rd.metadata.name === name && rd.status?.observedGeneration === rd.metadata.generation)),
    30_000,
  );
  // Set by the quiet step, which runs once the watch is up and before the first namespace.
  let before!: Scrape;
  const timed = await timeNewNamespaces(kube, size, `${LABEL_DISTRIBUTION} in (${names.join(',')})`, copiedFrom, async () => {
    before = await waitForQuiet(product);
  });
  const requests = requestsBetween(before, await waitForQuiet(product));
  const total = Object.entries(requests.byRequest).reduce((sum, [key, n]) => (key.startsWith('watch ') ? sum : sum + n), 0);
  return {
    ...timed,
    namespaces: count,
    distributions: d,
    ratePerSecond,
    requests: requests.byRequest,
    requestsPerCopy: total / (count * d),
    failedRequests: requests.errors,
    kruise: options.kruise ? await runKruisePropagation(size) : { state: 'skipped', reason: '--no-kruise' },
  };
}
