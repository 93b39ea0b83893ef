// What the soak means the cluster to hold: its namespaces, distributions and source objects, as
// the operations intended them (whether or not the API server took them: the next operation's
// choice must not depend on timing, so that a seed replays the same sequence).
import type { CopyKind, Targets, Template } from './snapshot-types.js';

export type WritePolicy = 'ignore' | 'overwrite' | 'strict' | undefined;

export interface ModelDistribution {
  name: string;
  kind: CopyKind;
  /** The copies' name: the template's, or the source's. */
  copyName: string;
  template?: Template;
  /** spec.source: this name in SOURCE_NAMESPACE. */
  source?: string;
  targets: Targets;
  writePolicy: WritePolicy;
  /** Created, changed and deleted as AUTHOR, who may write only where authorMayWrite says. */
  byAuthor?: boolean;
}

/** An ObjectSync in SOURCE_NAMESPACE, copying its source (of the same name in model.sources). */
export interface ModelObjectSync {
  name: string;
  kind: CopyKind;
  source: string;
  /** `*` for every namespace; `name` renames the copies. */
  destinations: { namespace: string; name?: string }[];
}

export interface ModelSource {
  kind: CopyKind;
  name: string;
  exists: boolean;
  data: Record<string, string>;
  labels: Record<string, string>;
}

export interface Model {
  namespaces: Map<string, Record<string, string>>;
  distributions: Map<string, ModelDistribution>;
  sources: Map<string, ModelSource>;
  objectSyncs: Map<string, ModelObjectSync>;
  /** Next free numbers: names are never reused, so a deleted one's leftovers cannot be mistaken. */
  nextNamespace: number;
  nextDistribution: number;
  nextObjectSync: number;
  nextPod: number;
}

export const NAME_PREFIX = 'soak-';
export const SOURCE_NAMESPACE = 'soak-src';
export const GROUP_LABEL = 'soak.example/group';
export const TIER_LABEL = 'soak.example/tier';
export const MAX_NAMESPACES = 12;
export const MAX_DISTRIBUTIONS = 8;
export const MAX_OBJECT_SYNCS = 3;

/** The RBAC-limited user some distributions are written as (impersonated by the admin). */
export const AUTHOR = 'soak-author';

export function emptyModel(): Model {
  return { namespaces: new Map(), distributions: new Map(), sources: new Map(), objectSyncs: new Map(), nextNamespace: 0, nextDistribution: 0, nextObjectSync: 0, nextPod: 0 };
}

export function namespaceName(n: number): string {
  return `${NAME_PREFIX}ns-${n}`;
}

/**
 * Whether AUTHOR may write Secrets and ConfigMaps in a namespace: every third one, by its number
 * (the soak binds the author's Role there as it creates it; names are never reused).
 */
export function authorMayWrite(namespace: string): boolean {
  const n = /^soak-ns-(\d+)$/.exec(namespace)?.[1];
  return n !== undefined && Number(n) % 3 === 0;
}
