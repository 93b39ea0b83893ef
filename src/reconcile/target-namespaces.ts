// The namespaces a pass over one distribution looks at: those its rule can target (every one for
// allNamespaces and open-ended rules; otherwise the ones it names and those carrying a label its
// selector requires, from the namespace cache's label index) and those holding its copies (which
// it may have to delete). Planning over these gives the plan planning over every namespace gives.
import { forbiddenFor, isNamesOnly, listedTargets, targetCandidates } from '../domain/targets.js';
import type { NamespaceInfo, Resource, ResourceDistribution } from '../domain/types.js';
import { NAMESPACES_BY_LABEL, type Caches } from '../k8s/caches.js';

type NamespaceCaches = Pick<Caches, 'namespaces' | 'copies'>;

/** `forbidden`: the operator's forbidden namespaces, as the plan is given them. */
export function targetNamespaces(rd: ResourceDistribution, caches: NamespaceCaches, forbidden: readonly string[] = []): NamespaceInfo[] {
  const targets = rd.spec.targets;
  const candidates = isNamesOnly(targets) ? undefined : targetCandidates(targets);
  if (candidates?.every === true) return caches.namespaces.list().map((ns) => ns.info);
  // Names alone: those it may write to (sorted, each once, made once per distribution object and
  // shared with admission's access check); with no copy of it anywhere yet, those that exist are all.
  const names = candidates?.names ?? listedTargets(targets, forbiddenFor(rd, forbidden));
  const copies = caches.copies.byDistribution(rd.metadata.name);
  const labels = candidates?.labels ?? [];
  return labels.length === 0 && copies.length === 0 ? existing(names, caches) : gathered(caches, names, labels, copies);
}

/** The namespaces named, carrying one of the labels, or holding one of the copies: each once. */
function gathered(caches: NamespaceCaches, names: readonly string[], labels: readonly string[], copies: readonly Resource[]): NamespaceInfo[] {
  const found = new Map<string, NamespaceInfo>();
  const add = (name: string | undefined): void => {
    const ns = name === undefined || found.has(name) ? undefined : caches.namespaces.get(name);
    if (ns !== undefined) found.set(ns.info.name, ns.info);
  };
  for (const name of names) add(name);
  for (const label of labels) for (const ns of caches.namespaces.byIndex(NAMESPACES_BY_LABEL, label)) found.set(ns.info.name, ns.info);
  for (const copy of copies) add(copy.metadata.namespace);
  return [...found.values()];
}

/** The namespaces of `names` that the cache holds, in their order. */
function existing(names: readonly string[], caches: NamespaceCaches): NamespaceInfo[] {
  const found: NamespaceInfo[] = [];
  for (const name of names) {
    const ns = caches.namespaces.get(name);
    if (ns !== undefined) found.push(ns.info);
  }
  return found;
}
