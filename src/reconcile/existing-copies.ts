// What stands under the template's name in each target namespace. Our copies come from the cache;
// a namespace without one there usually holds nothing, so the reconciler creates at once and reads
// only when the create answers AlreadyExists (one request per new copy instead of two). Where a
// read found an object outside our cache (a foreign object, or a copy whose label was removed),
// later passes read before writing, so a settled conflict costs one GET per pass and never a
// failed write; under writePolicy strict every unknown namespace is read first, since one
// conflict anywhere forbids every write; and so is every namespace of a distribution whose status
// counts copies the cache does not hold (see readsFirst).
import { forbiddenFor, targetsInSteps } from '../domain/targets.js';
import { kindKeyOf, type KindKey } from '../domain/kinds.js';
import { LABEL_DISTRIBUTION, type NamespaceInfo, type ResolvedDistribution, type Resource } from '../domain/types.js';
import type { Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { describeApiError, type ApiErrorInfo } from '../k8s/errors.js';
import { mapBounded } from '../bounded.js';
import { inTurns } from './plan-in-turns.js';

export interface ExistingCopies {
  /** namespace -> the same-named object of the template's kind there. */
  existing: Map<string, Resource>;
  /** namespace -> why it could not be read. */
  failures: Map<string, ApiErrorInfo>;
  /** Namespaces planned as empty without a read: a create there that meets AlreadyExists is read and planned again. */
  unread: Set<string>;
  /** The distribution's cached copies of the template's kind and name (any others are strays). */
  ownCopies: number;
}

export interface ExistingCopiesReader {
  /** `within`: the namespaces of a pass over some only (`namespaces` then holds no others). */
  read(rd: ResolvedDistribution, kind: KindKey, namespaces: readonly NamespaceInfo[], within?: ReadonlySet<string>): Promise<ExistingCopies>;
  /** Reads `namespaces` now (after a create met AlreadyExists). */
  reread(rd: ResolvedDistribution, kind: KindKey, namespaces: readonly string[]): Promise<Pick<ExistingCopies, 'existing' | 'failures'>>;
  /** The distribution is gone: drop what was remembered of it. */
  forget(name: string): void;
}

export interface ExistingCopiesDeps {
  api: ClusterApi;
  caches: Pick<Caches, 'copies'>;
  parallelism: number;
  forbiddenNamespaces: readonly string[];
}

/**
 * Our copies in namespaces no longer targeted (the plan deletes them): within some namespaces,
 * looked up there; otherwise looked for only when the cache holds more of the distribution's
 * copies than its targets do.
 */
function addUntargeted(caches: ExistingCopiesDeps['caches'], rd: ResolvedDistribution, kind: KindKey, result: ExistingCopies, within: ReadonlySet<string> | undefined): void {
  const name = rd.spec.resource.metadata.name ?? '';
  let candidates: Iterable<Resource | undefined> = [];
  if (within !== undefined) candidates = [...within].map((namespace) => caches.copies.get({ kind, namespace, name }));
  else if (caches.copies.countOf(rd.metadata.name) > result.ownCopies) candidates = caches.copies.byDistribution(rd.metadata.name);
  const isOwn = (copy: Resource): boolean =>
    copy.metadata.labels?.[LABEL_DISTRIBUTION] === rd.metadata.name && kindKeyOf(copy.apiVersion, copy.kind) === kind && copy.metadata.name === name;
  for (const copy of candidates) {
    const namespace = copy?.metadata.namespace ?? '';
    if (copy === undefined || result.existing.has(namespace) || !isOwn(copy)) continue;
    result.existing.set(namespace, copy);
    result.ownCopies += 1;
  }
}

export function createExistingCopiesReader(deps: ExistingCopiesDeps): ExistingCopiesReader {
  const { api, caches } = deps;
  /** distribution name -> namespaces where the last read found an object our cache does not hold. */
  const uncachedObjects = new Map<string, Set<string>>();

  async function get(rd: ResolvedDistribution, kind: KindKey, namespaces: readonly string[], into: Pick<ExistingCopies, 'existing' | 'failures'>): Promise<void> {
    const name = rd.spec.resource.metadata.name ?? '';
    const seen = uncachedObjects.get(rd.metadata.name) ?? new Set<string>();
    await mapBounded(namespaces, deps.parallelism, async (namespace) => {
      try {
        const found = await api.getCopy({ kind, namespace, name });
        if (found) into.existing.set(namespace, found);
        if (found && !caches.copies.get({ kind, namespace, name })) seen.add(namespace);
        else seen.delete(namespace);
      } catch (error) {
        into.failures.set(namespace, describeApiError(error));
      }
    });
    if (seen.size > 0) uncachedObjects.set(rd.metadata.name, seen);
    else uncachedObjects.delete(rd.metadata.name);
  }

  /**
   * Strict reads every namespace it does not know, and so does a distribution whose status counts
   * more copies than the cache holds (copies made by another controller, e.g. OpenKruise's, which
   * carry no label of ours: each is then taken over by one update, without a failed create first).
   * Otherwise only namespaces known to hold something are read.
   */
  function readsFirst(rd: ResolvedDistribution): (namespace: string) => boolean {
    if (rd.spec.writePolicy === 'strict') return () => true;
    if ((rd.status?.succeeded ?? 0) > caches.copies.countOf(rd.metadata.name)) return () => true;
    const known = uncachedObjects.get(rd.metadata.name);
    return (namespace) => known?.has(namespace) === true;
  }

  return {
    async read(rd, kind, namespaces, within) {
      const name = rd.spec.resource.metadata.name ?? '';
      const result: ExistingCopies = { existing: new Map(), failures: new Map(), unread: new Set(), ownCopies: 0 };
      // Over every namespace of a cluster, patterns tried against each name take a while: in turns.
      const { targeted } = await inTurns(targetsInSteps(rd.spec.targets, namespaces, forbiddenFor(rd, deps.forbiddenNamespaces)));
      const readFirst = readsFirst(rd);
      const toRead: string[] = [];
      for (const namespace of targeted) {
        const cached = caches.copies.get({ kind, namespace, name });
        if (cached) {
          result.existing.set(namespace, cached);
          if (cached.metadata.labels?.[LABEL_DISTRIBUTION] === rd.metadata.name) result.ownCopies += 1;
        } else if (readFirst(namespace)) toRead.push(namespace);
        else result.unread.add(namespace);
      }
      addUntargeted(caches, rd, kind, result, within);
      await get(rd, kind, toRead, result);
      return result;
    },
    async reread(rd, kind, namespaces) {
      const result = { existing: new Map<string, Resource>(), failures: new Map<string, ApiErrorInfo>() };
      await get(rd, kind, namespaces, result);
      return result;
    },
    forget: (name) => {
      uncachedObjects.delete(name);
    },
  };
}
