// Whether a distribution's recorded author may still write the first copy into each namespace that
// holds none of its copies yet (domain/author-targets.ts says when that is asked, and why). Every
// writer of copies goes through it: the reconciler for each slice of its plan, the namespace
// generator and the pod materializer for their one copy.
import { LRUCache } from 'lru-cache';
import { mapBounded } from '../bounded.js';
import { parseAuthor, recordedAuthor, type Author } from '../domain/author.js';
import { authorVerbs, clusterWideFirst, targetDenial, type TargetVerb } from '../domain/author-targets.js';
import type { KindRegistry } from '../domain/kinds.js';
import type { Resource, ResourceDistribution } from '../domain/types.js';
import type { AccessReviewer } from '../k8s/access-review.js';
import { describeApiError } from '../k8s/errors.js';
import type { Logger } from '../log.js';
import type { Planned } from './action-applier.js';

/** A write into a namespace, and what its author must be allowed there. */
export interface TargetWrite {
  namespace: string;
  verbs: readonly TargetVerb[];
}

/** Namespaces the author may not write in, each with the words saying what they may not do. */
export type TargetDenials = ReadonlyMap<string, string>;

/** Asks about `writes` (none: nothing is asked). A question that fails throws. */
export type TargetCheck = (rd: ResourceDistribution, writes: readonly TargetWrite[]) => Promise<TargetDenials>;

export interface TargetCheckDeps {
  reviewer: AccessReviewer;
  kinds: KindRegistry;
  log: Logger;
  /** Questions of one call in flight at once (default 8); the reviewer bounds them for the whole process too. */
  parallelism?: number;
  /** How long a denial holds before a pass asks again (default 60 s, as for sources). */
  denialTtlMs?: number;
  /** Denials remembered at most (default 10,000; the least recently used go first). */
  max?: number;
}

const NONE: TargetDenials = new Map();
const DENIAL_TTL_MS = 60_000;

type KindOf = { group: string; resource: string };

/** The API group and resource of what the distribution writes. */
function kindOf(rd: ResourceDistribution, kinds: KindRegistry): KindOf {
  const named = rd.spec.resource ?? rd.spec.source;
  const found = kinds.find(named?.apiVersion, named?.kind);
  return { group: found?.group ?? '', resource: found?.plural ?? (named?.kind ?? '').toLowerCase() };
}

/**
 * Per verb: one cluster-wide question first where it may answer for all (open-ended targets, or
 * many namespaces), then one per namespace. The reviewer answers from the cluster's RBAC or its
 * cache when it can, so a settled author costs no request. A denial (which RBAC never answers) is
 * remembered for `denialTtlMs`: an author denied in many namespaces costs their questions once
 * in that time, however many passes plan them; a right given back counts at the first pass after.
 */
export function createTargetCheck(deps: TargetCheckDeps): TargetCheck {
  const parallelism = Math.max(1, deps.parallelism ?? 8);
  const denials = new LRUCache<string, true>({ max: deps.max ?? 10_000, ttl: deps.denialTtlMs ?? DENIAL_TTL_MS });

  async function deniedIn(author: { recorded: string; subject: Author }, kind: KindOf, verb: TargetVerb, namespaces: readonly string[], wideFirst: boolean): Promise<string[]> {
    const key = (namespace: string): string => JSON.stringify([author.recorded, verb, kind.group, kind.resource, namespace]);
    const ask = async (namespace: string): Promise<boolean> => {
      if (denials.has(key(namespace))) return false;
      const { allowed } = await deps.reviewer.review({ subject: author.subject, verb, ...kind, namespace });
      if (!allowed) denials.set(key(namespace), true);
      return allowed;
    };
    if (wideFirst && (await ask(''))) return [];
    const answers = await mapBounded(namespaces, parallelism, ask);
    return namespaces.filter((_namespace, i) => !answers[i]);
  }

  /** Per namespace, the verbs the author may not (an unreadable record: none may be). */
  async function deniedVerbsOf(rd: ResourceDistribution, recorded: string, author: Author | 'unreadable', kind: KindOf, writes: readonly TargetWrite[]): Promise<Map<string, TargetVerb[]>> {
    const deniedVerbs = new Map<string, TargetVerb[]>();
    for (const verb of new Set(writes.flatMap((write) => write.verbs))) {
      const namespaces = writes.filter((write) => write.verbs.includes(verb)).map((write) => write.namespace);
      const denied = author === 'unreadable' ? namespaces : await deniedIn({ recorded, subject: author }, kind, verb, namespaces, clusterWideFirst(rd, namespaces.length));
      for (const namespace of denied) deniedVerbs.set(namespace, [...(deniedVerbs.get(namespace) ?? []), verb]);
    }
    return deniedVerbs;
  }

  return async (rd, writes) => {
    const recorded = recordedAuthor(rd);
    if (recorded === undefined || writes.length === 0) return NONE;
    const kind = kindOf(rd, deps.kinds);
    const author = parseAuthor(recorded);
    const deniedVerbs = await deniedVerbsOf(rd, recorded, author, kind, writes);
    if (deniedVerbs.size === 0) return NONE;
    const who = author === 'unreadable' ? 'unreadable' : author.username;
    deps.log.warn({ name: rd.metadata.name, author: who, resource: kind.resource, namespaces: [...deniedVerbs.keys()].slice(0, 10), denied: deniedVerbs.size }, 'author may not write in target namespaces: no copy written there');
    return new Map([...deniedVerbs].map(([namespace, verbs]) => [namespace, targetDenial(author, verbs, kind.resource)]));
  };
}

/**
 * The planned actions, each write its author may not make (see authorVerbs) standing as a refused
 * outcome instead: not attempted, reported under AuthorAccessDenied. A question that fails leaves
 * those writes refused as a transient failure, retried, and the others go ahead.
 */
export async function gatedWrites(check: TargetCheck | undefined, rd: ResourceDistribution, planned: readonly Planned[], existing: (namespace: string) => Resource | undefined): Promise<Planned[]> {
  if (check === undefined) return [...planned];
  const asking = planned.map(({ action }) => authorVerbs(rd, action, existing(action.namespace)));
  const writes = planned.flatMap(({ action }, i) => (asking[i]?.length ? [{ namespace: action.namespace, verbs: asking[i] }] : []));
  if (writes.length === 0) return [...planned];
  const asked = await check(rd, writes).catch((error: unknown) => describeApiError(error).message);
  return planned.map((item, i) => {
    if (!asking[i]?.length) return item;
    const verb = item.action.type === 'update' ? 'update' : 'create';
    if (typeof asked === 'string') {
      return { ...item, refused: { action: item.action, ok: false, verb, message: `could not ask whether the recorded author may write here: ${asked}`, transient: true } };
    }
    const denial = asked.get(item.action.namespace);
    return denial === undefined ? item : { ...item, refused: { action: item.action, ok: false, verb, message: denial, transient: false, denied: true } };
  });
}
