// Whether a write into a target namespace must first ask the recorded author again. Admission
// judged the author against the namespaces that matched then (cluster-wide for open-ended
// targets); a namespace created later under a listed name, labelled to match a selector, or new
// under a pattern or allNamespaces receives a copy with no request to judge. The first copy a
// distribution writes into a namespace is therefore made only if its author may still create it
// there. Where the namespace already holds this distribution's copy nothing is asked: keeping a
// copy in line with a spec that admission reviewed needs no new judgement.
import { ANNOTATION_AUTHOR, type Author } from './author.js';
import { classifyExisting } from './ownership.js';
import { isNamesOnly } from './targets.js';
import type { Action, Resource, ResourceDistribution } from './types.js';

/** What the author must be allowed in a namespace for a write there to go ahead. */
export type TargetVerb = 'create' | 'update' | 'delete';

const NONE: readonly TargetVerb[] = [];
const CREATE: readonly TargetVerb[] = ['create'];
const UPDATE: readonly TargetVerb[] = ['update'];
const REPLACE: readonly TargetVerb[] = ['delete', 'create'];

/**
 * Pure: the verbs the recorded author must hold for `action` in its namespace, given the object
 * that stood there when it was planned. None without a recorded author (a distribution from before
 * authors were recorded), none for anything but a write, none over this distribution's own copy.
 * A create needs `create`; taking over another object (adopted, or under writePolicy overwrite)
 * needs `update`, or `delete` and `create` when it must be replaced.
 */
export function authorVerbs(rd: ResourceDistribution, action: Action, existing: Resource | undefined): readonly TargetVerb[] {
  if (rd.metadata.annotations?.[ANNOTATION_AUTHOR] === undefined) return NONE;
  switch (action.type) {
    case 'create':
      return CREATE;
    case 'update':
    case 'recreate':
      if (existing !== undefined && classifyExisting(rd, existing).kind === 'ours') return NONE;
      return action.type === 'update' ? UPDATE : REPLACE;
    default:
      return NONE;
  }
}

/** Below this many namespaces asking the same verb, asking each is as cheap as asking cluster-wide first (as admission does). */
const CLUSTER_WIDE_FIRST = 3;

/**
 * Pure: whether one cluster-wide question should come first. It answers for every namespace when
 * it is yes: for open-ended targets admission asked exactly that, and it is cached for every new
 * namespace that follows; for many listed namespaces it saves a question each.
 */
export function clusterWideFirst(rd: ResourceDistribution, namespaces: number): boolean {
  return !isNamesOnly(rd.spec.targets) || namespaces >= CLUSTER_WIDE_FIRST;
}

/** The condition's words for a target the author may not write: author, verbs and resource (the namespaces follow them). */
export function targetDenial(author: Author | 'unreadable', verbs: readonly string[], resource: string): string {
  if (author === 'unreadable') return `the recorded author (${ANNOTATION_AUTHOR}) is unreadable: nothing is written on its behalf`;
  return `author "${author.username}" may not ${verbs.join(', ')} ${resource}`;
}
