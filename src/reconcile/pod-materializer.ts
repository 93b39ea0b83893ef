// "Copies before pods": when a pod is admitted, the Secrets and ConfigMaps it references that a
// distribution targets in its namespace but that are missing or stale there are written before
// the admission answers. Nothing pending (the caches say so) costs no API request at all and
// answers synchronously. Runs on every replica; writes through the shared copy writer.
import type { Clock } from '../domain/clock.js';
import { pendingCopies, referencedBy } from '../domain/pending-copies.js';
import type { PodReferences } from '../domain/pod-references.js';
import type { NamespaceInfo, ResolvedDistribution } from '../domain/types.js';
import { kindKeyOf } from '../domain/kinds.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import type { CopyWriter } from './copy-writer.js';
import { permitted, type AuthorGate } from './author-gate.js';
import { resolveDistribution } from './distributable.js';
import type { DistributionCatalog } from './distribution-catalog.js';
import { podNamespace } from './pod-namespace.js';
import { writeOneCopy, type OneCopyResult } from './write-one-copy.js';

export interface MaterializeResult {
  /** Copies that were missing or stale (as far as the caches knew) when the pod came. */
  pending: number;
  /** Of those, in place when the answer went out: written, or found written by another writer (or an object that is not ours). */
  inPlace: number;
  /** Not in place by the time the answer was due (failed, lost its races, or still in flight). */
  missing: number;
}

export interface PodMaterializer {
  /** `dryRun`: count what is pending, write nothing. `signal`: the answer is due; stop waiting. */
  materialize(namespace: string, refs: PodReferences, options: { dryRun: boolean; signal: AbortSignal }): MaterializeResult | Promise<MaterializeResult>;
}

export interface PodMaterializerDeps {
  api: Pick<ClusterApi, 'getNamespace' | 'getCopy'>;
  caches: Pick<Caches, 'namespaces' | 'copies' | 'sources' | 'kinds'>;
  catalog: Pick<DistributionCatalog, 'referencing'>;
  writer: CopyWriter;
  clock: Clock;
  log: Logger;
  metrics: Pick<Metrics, 'podMaterialized' | 'podMaterializeDuration'>;
  forbiddenNamespaces: readonly string[];
  /** The longest a pod's admission waits for its copies (then it is allowed all the same). */
  waitMs: number;
  /** Whether authors may still read their sources (none: every copy is written). */
  authors?: AuthorGate;
}

const NOTHING: MaterializeResult = { pending: 0, inPlace: 0, missing: 0 };

/** Resolves with `fallback` once `signal` aborts, if `work` has not settled by then. */
function until<T>(work: Promise<T>, signal: AbortSignal, fallback: T): Promise<T> {
  if (signal.aborted) return Promise.resolve(fallback);
  return new Promise((resolve) => {
    const stop = (): void => resolve(fallback);
    signal.addEventListener('abort', stop, { once: true });
    void work.then((value) => {
      signal.removeEventListener('abort', stop);
      resolve(value);
    });
  });
}

export function createPodMaterializer(deps: PodMaterializerDeps): PodMaterializer {
  const { caches, log } = deps;

  function resolved(refs: PodReferences): ResolvedDistribution[] {
    return referencedBy(deps.catalog.referencing(refs), refs).flatMap((rd) => {
      const resolution = resolveDistribution(rd, caches);
      return resolution.state === 'ready' ? [resolution.rd] : [];
    });
  }

  function pending(distributions: readonly ResolvedDistribution[], ns: NamespaceInfo): ResolvedDistribution[] {
    return pendingCopies({
      distributions,
      namespace: ns,
      existing: (rd) => caches.copies.get({ kind: kindKeyOf(rd.spec.resource.apiVersion, rd.spec.resource.kind), namespace: ns.name, name: rd.spec.resource.metadata.name ?? '' }),
      forbidden: deps.forbiddenNamespaces,
      now: deps.clock(),
    });
  }

  async function write(copies: readonly ResolvedDistribution[], ns: NamespaceInfo, signal: AbortSignal): Promise<MaterializeResult> {
    const started = deps.clock().getTime();
    const results: OneCopyResult[] = [];
    // A copy its author may no longer read the source of is not written (the reconciler reports it): it counts as missing.
    const all = permitted(deps.authors, deps.caches.sources, copies).then((allowed) =>
      Promise.all(
        allowed.map(async (rd) => {
          const result = await writeOneCopy(deps, rd, ns);
          results.push(result);
          deps.metrics.podMaterialized.inc({ result });
          return result;
        }),
      ),
    );
    await until(all, AbortSignal.any([signal, AbortSignal.timeout(deps.waitMs)]), []);
    deps.metrics.podMaterializeDuration.observe((deps.clock().getTime() - started) / 1000);
    const inPlace = results.filter((result) => result === 'written' || result === 'unchanged').length;
    if (inPlace < copies.length) log.warn({ ns: ns.name, pending: copies.length, inPlace }, 'pod admitted before all its copies were written');
    else log.info({ ns: ns.name, copies: copies.length }, 'copies written before a pod was admitted');
    return { pending: copies.length, inPlace, missing: copies.length - inPlace };
  }

  function materializeIn(ns: NamespaceInfo, distributions: readonly ResolvedDistribution[], options: { dryRun: boolean; signal: AbortSignal }): MaterializeResult | Promise<MaterializeResult> {
    const copies = pending(distributions, ns);
    if (copies.length === 0) return NOTHING;
    if (options.dryRun) return { pending: copies.length, inPlace: 0, missing: copies.length };
    return write(copies, ns, options.signal);
  }

  return {
    materialize: (namespace, refs, options) => {
      const distributions = resolved(refs);
      if (distributions.length === 0) return NOTHING;
      const ns = podNamespace(deps, namespace);
      if (!(ns instanceof Promise)) return materializeIn(ns, distributions, options);
      return ns.then((found) => (found === undefined ? NOTHING : materializeIn(found, distributions, options)));
    },
  };
}
