// Pod mutation: which distributed image-pull Secrets a pod being created gets named. Reads only the
// caches (no API request, but for a namespace created a moment ago and not cached yet); the
// decision itself is pure (domain/pod-injection.ts). Registry keys are parsed once per template
// content and remembered (keys only: credentials are never kept).
import { classifyExisting } from '../domain/copy.js';
import { templateHash } from '../domain/hash.js';
import { isCoreDataKind, kindKeyOf } from '../domain/kinds.js';
import { injectionMode, podInjection, type InjectionCandidate, type PodInjection } from '../domain/pod-injection.js';
import { registryKeys, type RegistryKey } from '../domain/registry-credentials.js';
import { reportedConflict } from '../domain/status.js';
import { forbiddenFor, isTargeted } from '../domain/targets.js';
import { LABEL_INJECT, REGISTRY_SECRET_TYPES, type NamespaceInfo, type ResolvedDistribution, type ResourceDistribution } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { Caches } from '../k8s/caches.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { resolveDistribution } from './distributable.js';
import type { DistributionCatalog } from './distribution-catalog.js';
import { podNamespace } from './pod-namespace.js';

export interface PodInjector {
  inject(namespace: string, pod: unknown): PodInjection | Promise<PodInjection>;
}

export interface PodInjectorDeps {
  api: Pick<ClusterApi, 'getNamespace'>;
  caches: Pick<Caches, 'namespaces' | 'copies' | 'sources' | 'kinds'>;
  catalog: Pick<DistributionCatalog, 'injecting' | 'injectingInto'>;
  log: Logger;
  forbiddenNamespaces: readonly string[];
}

const NONE: PodInjection = { names: [], patch: [] };

const MAX_REMEMBERED = 1024;

export function createPodInjector(deps: PodInjectorDeps): PodInjector {
  const { caches } = deps;
  /** template hash -> its registry keys. */
  const keysByHash = new Map<string, RegistryKey[]>();

  function keysOf(rd: ResolvedDistribution): RegistryKey[] {
    const hash = templateHash(rd.spec.resource);
    let keys = keysByHash.get(hash);
    if (keys === undefined) {
      keys = registryKeys(rd.spec.resource.type, rd.spec.resource.data);
      if (keysByHash.size >= MAX_REMEMBERED) keysByHash.delete(keysByHash.keys().next().value ?? '');
      keysByHash.set(hash, keys);
    }
    return keys;
  }

  /**
   * The copy there is ours, or not written yet (copies before pods writes it before the pod
   * starts): never an object we do not own. Such an object is outside the caches (they hold our
   * copies only): the distribution's status names the namespaces where one stands in the way.
   */
  function copyUsable(rd: ResolvedDistribution, ns: NamespaceInfo): boolean {
    const { apiVersion, kind, metadata } = rd.spec.resource;
    const existing = caches.copies.get({ kind: kindKeyOf(apiVersion, kind), namespace: ns.name, name: metadata.name ?? '' });
    if (existing !== undefined) return classifyExisting(rd, existing).kind === 'ours';
    return !(reportedConflict(rd.status)?.failedNamespace ?? []).includes(ns.name);
  }

  /** The distribution, resolved, if it injects into `ns` a registry Secret whose copy there may be named. */
  function injecting(rd: ResourceDistribution, ns: NamespaceInfo): ResolvedDistribution | undefined {
    if (injectionMode(rd) === undefined || rd.metadata.deletionTimestamp !== undefined) return undefined;
    if (!isTargeted(rd.spec.targets, ns, forbiddenFor(rd, deps.forbiddenNamespaces))) return undefined;
    const resolution = resolveDistribution(rd, caches);
    if (resolution.state !== 'ready') return undefined;
    const { resource } = resolution.rd.spec;
    const registry = resource.kind === 'Secret' && isCoreDataKind(resource.apiVersion, resource.kind) && REGISTRY_SECRET_TYPES.includes(resource.type ?? '');
    return registry && copyUsable(resolution.rd, ns) ? resolution.rd : undefined;
  }

  function candidates(ns: NamespaceInfo): InjectionCandidate[] {
    return deps.catalog.injectingInto(ns).flatMap((rd): InjectionCandidate[] => {
      const mode = injectionMode(rd);
      const resolved = injecting(rd, ns);
      if (mode === undefined || resolved === undefined) return [];
      return [{ distribution: rd.metadata.name, secret: resolved.spec.resource.metadata.name ?? '', mode, keys: mode === 'MatchingImages' ? keysOf(resolved) : [] }];
    });
  }

  function injectIn(ns: NamespaceInfo, pod: unknown): PodInjection {
    if (ns.labels[LABEL_INJECT] === 'disabled') return NONE;
    return podInjection(pod, candidates(ns));
  }

  return {
    inject: (namespace, pod) => {
      // A namespace not cached yet is read only if anything injects at all.
      if (caches.namespaces.get(namespace) === undefined && deps.catalog.injecting().length === 0) return NONE;
      const ns = podNamespace(deps, namespace);
      if (!(ns instanceof Promise)) return injectIn(ns, pod);
      return ns.then((found) => (found === undefined ? NONE : injectIn(found, pod)));
    },
  };
}
