// Pods as workloads write them: in a namespace the soak made, referencing Secrets and ConfigMaps
// by name through an env var, envFrom or a volume. They never run (the soak has no node): what
// matters is their admission (README: "Guarantees: copies before pods").
import { type Model } from './model.js';
import type { Prng } from './prng.js';
import { expectedTargets } from './expected-targets.js';
import type { CopyKind, NamespaceSnapshot } from './snapshot-types.js';

export interface PodRef {
  kind: CopyKind;
  name: string;
  how: 'env' | 'envFrom' | 'volume';
}

export interface PodPlan {
  namespace: string;
  name: string;
  refs: PodRef[];
}

function namespacesOf(model: Model, extra?: { name: string; labels: Record<string, string> }): NamespaceSnapshot[] {
  const all = [...model.namespaces].map(([name, labels]) => ({ name, labels, terminating: false }));
  return extra ? [...all, { ...extra, terminating: false }] : all;
}

/** The copies the model means `namespace` to hold: of distributions and of ObjectSyncs. */
export function meantCopies(model: Model, namespace: string, labels?: Record<string, string>): { kind: CopyKind; name: string }[] {
  const namespaces = namespacesOf(model, labels === undefined ? undefined : { name: namespace, labels });
  const copies: { kind: CopyKind; name: string }[] = [];
  for (const rd of model.distributions.values()) {
    const spec = { targets: rd.targets, ...(rd.source ? { source: { apiVersion: 'v1' as const, kind: rd.kind, namespace: 'soak-src', name: rd.source } } : {}) };
    const targets = expectedTargets({ name: rd.name, uid: '', generation: 0, deleting: false, spec }, namespaces, '');
    if (targets.all.has(namespace)) copies.push({ kind: rd.kind, name: rd.copyName });
  }
  for (const os of model.objectSyncs.values()) {
    for (const d of os.destinations) if (d.namespace === '*' || d.namespace === namespace) copies.push({ kind: os.kind, name: d.name ?? os.source });
  }
  return copies;
}

/** A pod referencing one or two of the copies meant for its namespace, and sometimes a name nothing distributes. */
export function planPod(model: Model, prng: Prng, namespace: string, labels?: Record<string, string>): PodPlan {
  const meant = meantCopies(model, namespace, labels);
  const refs: PodRef[] = [];
  for (let i = Math.min(meant.length, prng.int(1, 2)); i > 0; i--) {
    const copy = prng.pick(meant);
    if (!refs.some((r) => r.kind === copy.kind && r.name === copy.name)) refs.push({ ...copy, how: prng.pick(['env', 'envFrom', 'volume'] as const) });
  }
  if (refs.length === 0 || prng.chance(0.2)) refs.push({ kind: prng.chance(0.5) ? 'Secret' : 'ConfigMap', name: 'soak-nothing', how: 'volume' });
  return { namespace, name: `soak-pod-${model.nextPod}`, refs };
}
