// The namespaces a pass over one distribution looks at: those its rule can target (every one for
// allNamespaces and open-ended rules; otherwise the ones it names and those carrying a label its
// selector requires, from the namespace cache's label index) and those holding its copies (which
// it may have to delete). Planning over these gives the plan planning over every namespace gives.
import { isStrictlySorted, targetCandidates } from '../domain/targets.js';
import type { NamespaceInfo, ResourceDistribution } from '../domain/types.js';
import { NAMESPACES_BY_LABEL, type Caches } from '../k8s/caches.js';

export function targetNamespaces(rd: ResourceDistribution, caches: Pick<Caches, 'namespaces' | 'copies'>): NamespaceInfo[] {
  const candidates = targetCandidates(rd.spec.targets);
  if (candidates.every) return caches.namespaces.list().map((ns) => ns.info);
  const copies = caches.copies.byDistribution(rd.metadata.name);
  // Names alone, written in order (as long lists usually are): each once already, no map of them needed.
  if (candidates.labels.length === 0 && copies.length === 0 && isStrictlySorted(candidates.names)) {
    const listed: NamespaceInfo[] = [];
    for (const name of candidates.names) {
      const ns = caches.namespaces.get(name);
      if (ns !== undefined) listed.push(ns.info);
    }
    return listed;
  }
  const found = new Map<string, NamespaceInfo>();
  const add = (name: string | undefined): void => {
    const ns = name === undefined || found.has(name) ? undefined : caches.namespaces.get(name);
    if (ns !== undefined) found.set(ns.info.name, ns.info);
  };
  for (const name of candidates.names) add(name);
  for (const label of candidates.labels) for (const ns of caches.namespaces.byIndex(NAMESPACES_BY_LABEL, label)) found.set(ns.info.name, ns.info);
  for (const copy of copies) add(copy.metadata.namespace);
  return [...found.values()];
}
