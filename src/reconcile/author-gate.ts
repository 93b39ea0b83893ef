// Whether a distribution's recorded author may still read its source, asked again whenever the
// source becomes another object or another version of it: admission reviewed the author against
// the source as it was then (or as it was not: a source may be created after its distribution),
// and the controller's own rights must not stand in for the author's afterwards. Every writer of
// copies (reconciler, namespace generator, pod materializer) goes through it.
import { LRUCache } from 'lru-cache';
import { recordedAuthor, sourceDecision, sourceDenial, type Author, type RememberedVerdict } from '../domain/author.js';
import type { KindRegistry } from '../domain/kinds.js';
import type { Resource, ResourceDistribution, SourceRef } from '../domain/types.js';
import type { AccessReviewer } from '../k8s/access-review.js';
import type { SourceCache } from '../k8s/source-cache.js';
import type { Logger } from '../log.js';
import { createTargetCheck, type TargetCheck } from './author-targets.js';

export type AuthorVerdict = { allowed: true } | { allowed: false; message: string };

export interface AuthorGate {
  /** Whether the author recorded on `rd` may read `source`, the object its copies would be made of now. */
  check(rd: ResourceDistribution, source: Resource): Promise<AuthorVerdict>;
  /** Where the recorded author may not make the first copy (see author-targets). */
  targets: TargetCheck;
  forget(name: string): void;
}

export interface AuthorGateDeps {
  reviewer: AccessReviewer;
  kinds: KindRegistry;
  log: Logger;
  /** Distributions whose last answer is remembered (default 10,000; the least recently used go first). */
  max?: number;
  /** How long a denial holds before the next pass asks again (default 60 s): a right given back takes effect without a change of the source. */
  denialTtlMs?: number;
}

const DENIAL_TTL_MS = 60_000;

const ALLOWED: AuthorVerdict = { allowed: true };

/**
 * One remembered answer per distribution, for the source version it was asked about: a source that
 * stays as it is costs nothing; a new object or version costs one question, answered by the
 * reviewer's own cache or the cluster's RBAC when they can. A denial is asked again at the first
 * pass after `denialTtlMs` (the periodic sweep at the latest). A failed question throws (transient:
 * the caller retries) and nothing is copied meanwhile.
 */
export function createAuthorGate(deps: AuthorGateDeps): AuthorGate {
  const remembered = new LRUCache<string, RememberedVerdict>({ max: deps.max ?? 10_000 });
  const denialTtl = deps.denialTtlMs ?? DENIAL_TTL_MS;
  const remember = (name: string, verdict: RememberedVerdict): void => void remembered.set(name, verdict, verdict.allowed ? {} : { ttl: denialTtl });

  const verdictOf = (answer: RememberedVerdict): AuthorVerdict => (answer.allowed ? ALLOWED : { allowed: false, message: answer.message ?? '' });

  /** Asks whether `author` may get the source, and remembers the answer for this version of it. */
  async function ask(rd: ResourceDistribution, ref: SourceRef, key: string, author: Author): Promise<AuthorVerdict> {
    const kind = deps.kinds.find(ref.apiVersion, ref.kind);
    const resource = kind?.plural ?? ref.kind.toLowerCase();
    const answer = await deps.reviewer.review({ subject: author, verb: 'get', group: kind?.group ?? '', resource, namespace: ref.namespace, name: ref.name });
    const verdict: RememberedVerdict = answer.allowed ? { key, allowed: true } : { key, allowed: false, message: sourceDenial(author, { resource, namespace: ref.namespace, name: ref.name }) };
    remember(rd.metadata.name, verdict);
    if (!answer.allowed) deps.log.warn({ name: rd.metadata.name, author: author.username, source: `${ref.namespace}/${ref.name}` }, 'author may not read the source: nothing copied');
    return verdictOf(verdict);
  }

  async function check(rd: ResourceDistribution, source: Resource): Promise<AuthorVerdict> {
    const ref = rd.spec.source;
    if (ref === undefined) return ALLOWED;
    const version = { uid: source.metadata.uid ?? '', resourceVersion: source.metadata.resourceVersion ?? '' };
    const decision = sourceDecision(recordedAuthor(rd), version, remembered.get(rd.metadata.name));
    switch (decision.kind) {
      case 'unchecked':
        return ALLOWED;
      case 'known':
        return decision.allowed ? ALLOWED : { allowed: false, message: decision.message ?? '' };
      case 'refuse':
        remember(rd.metadata.name, { key: decision.key, allowed: false, message: decision.message });
        return { allowed: false, message: decision.message };
      case 'ask':
        return ask(rd, ref, decision.key, decision.author);
    }
  }

  return { check, targets: createTargetCheck(deps), forget: (name) => void remembered.delete(name) };
}

/** The source object a resolved distribution's copies are made of, as the source cache holds it. */
export function sourceObject(rd: ResourceDistribution, sources: Pick<SourceCache, 'get'>): Resource | undefined {
  const known = rd.spec.source === undefined ? undefined : sources.get(rd.spec.source);
  return known?.synced === true ? known.object : undefined;
}

/**
 * The distributions whose copies may be written on their authors' behalf (those without a source
 * or a recorded author all may). For the writers outside the reconciler: a denied one is left to
 * the reconciler, which reports it; a question that fails leaves it out too.
 */
export async function permitted<T extends ResourceDistribution>(gate: AuthorGate | undefined, sources: Pick<SourceCache, 'get'>, distributions: readonly T[]): Promise<T[]> {
  if (gate === undefined) return [...distributions];
  const verdicts = await Promise.all(
    distributions.map(async (rd) => {
      const source = sourceObject(rd, sources);
      if (source === undefined) return true;
      return (await gate.check(rd, source).catch(() => ({ allowed: false }))).allowed;
    }),
  );
  return distributions.filter((_rd, i) => verdicts[i]);
}
