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
  /** Next free numbers: names are never reused, so a deleted one's leftovers cannot be mistaken. */
  nextNamespace: number;
  nextDistribution: number;
}

export const NAME_PREFIX = 'soak-';
export const SOURCE_NAMESPACE = 'soak-src';
export const GROUP_LABEL = 'soak.example/group';
export const TIER_LABEL = 'soak.example/tier';
export const MAX_NAMESPACES = 12;
export const MAX_DISTRIBUTIONS = 8;

export function emptyModel(): Model {
  return { namespaces: new Map(), distributions: new Map(), sources: new Map(), nextNamespace: 0, nextDistribution: 0 };
}

export function namespaceName(n: number): string {
  return `${NAME_PREFIX}ns-${n}`;
}
