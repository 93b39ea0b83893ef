import { isForbiddenSecretType } from '../domain/copy.js';
import { applyCopyData, copyDataProblem } from '../domain/copy-data.js';
import { applyCopyMetadata } from '../domain/copy-metadata.js';
import { isCoreDataKind, type KindRegistry } from '../domain/kinds.js';
import { MAX_TEMPLATE_DEPTH, nestsDeeperThan } from '../domain/nesting.js';
import { isControlledBy } from '../domain/ownership.js';
import { undistributableSource, withSource } from '../domain/source.js';
import type { ResolvedDistribution, Resource, ResourceDistribution, SourceRef } from '../domain/types.js';
import type { SourceCache } from '../k8s/source-cache.js';

/** Templates (or sources) measured already: a pod admission asks of every distribution, and a template is measured once. */
const tooDeep = new WeakMap<object, boolean>();

/** Copying, comparing and hashing a template recurse: one nested too deeply would fail every pass. */
function nestsTooDeeply(resource: Resource): boolean {
  let deep = tooDeep.get(resource);
  if (deep === undefined) tooDeep.set(resource, (deep = nestsDeeperThan(resource, MAX_TEMPLATE_DEPTH)));
  return deep;
}

/**
 * Admission rejects anything else; this guards against objects stored while the webhook was off
 * or before a rule existed (never distribute a forbidden Secret type, whatever got stored or
 * whatever a source became; never a template nested too deeply to copy). Why not, in the words
 * of the status (`what`: the template or the source it came from); undefined when it may be copied.
 */
function whyNotDistributable(rd: ResourceDistribution, kinds: KindRegistry, what: string): string | undefined {
  const resource = rd.spec?.resource;
  if (typeof resource?.metadata?.name !== 'string') return `${what} has no metadata.name`;
  if (nestsTooDeeply(resource)) return `${what} is nested more than ${MAX_TEMPLATE_DEPTH} levels deep`;
  if (kinds.find(resource.apiVersion, resource.kind) === undefined) return `${what}: kind ${resource.kind} of ${resource.apiVersion} is not allowed (RD_ALLOWED_KINDS)`;
  if (isCoreDataKind(resource.apiVersion, resource.kind) && resource.kind === 'Secret' && isForbiddenSecretType(resource.type)) {
    return `${what} is a Secret of type ${resource.type ?? ''}, which is never distributed`;
  }
  return typeof rd.spec.targets === 'object' ? undefined : 'spec.targets is missing';
}

export function isDistributable(rd: ResourceDistribution, kinds: KindRegistry): rd is ResolvedDistribution {
  return whyNotDistributable(rd, kinds, 'spec.resource') === undefined;
}

/**
 * What a distribution copies, at hand: `ready` with the template or the source's content;
 * `pending` while its source has not been read yet; `source-missing` (`ownCopy`: what stands there
 * is this distribution's own copy, left where spec.source moved to); `invalid` (nothing we may
 * copy, and why: the status says so while it stays so).
 */
export type Resolution =
  | { state: 'ready'; rd: ResolvedDistribution }
  | { state: 'pending' }
  | { state: 'source-missing'; ref: SourceRef; ownCopy?: true }
  | { state: 'invalid'; message: string };

/** The last resolution of each source object, reused while the distribution is the same object: the template then is too, and its hash is remembered. */
const resolutions = new WeakMap<Resource, { rd: ResourceDistribution; resolved: ResolvedDistribution }>();

function resolvedFrom(rd: ResourceDistribution, source: Resource): ResolvedDistribution {
  const last = resolutions.get(source);
  if (last?.rd === rd) return last.resolved;
  const resolved = withSource(rd, source);
  resolutions.set(source, { rd, resolved });
  return resolved;
}

/**
 * Copies that spec.copyData leaves without a key their Secret type requires are never written
 * (admission refuses such a template; a source's type is known only once it is read).
 */
function selectionProblem(rd: ResolvedDistribution, what: string): string | undefined {
  if (rd.spec.copyData === undefined) return undefined;
  const problem = copyDataProblem(rd.spec.resource);
  return problem === undefined ? undefined : `${what}: ${problem}`;
}

/** An inline template under copyMetadata and copyData rules, per distribution object: its hash is then remembered too. */
const ruled = new WeakMap<ResourceDistribution, ResolvedDistribution>();

function withRules(rd: ResolvedDistribution): ResolvedDistribution {
  if (rd.spec.copyMetadata === undefined && rd.spec.copyData === undefined) return rd;
  let resolved = ruled.get(rd);
  if (resolved === undefined) {
    const resource = applyCopyData(applyCopyMetadata(rd.spec.resource, rd.spec.copyMetadata), rd.spec.copyData);
    resolved = { ...rd, spec: { ...rd.spec, resource } };
    ruled.set(rd, resolved);
  }
  return resolved;
}

function resolveTemplate(rd: ResourceDistribution, kinds: KindRegistry): Resolution {
  const why = whyNotDistributable(rd, kinds, 'spec.resource');
  if (why !== undefined) return { state: 'invalid', message: why };
  const ruled = withRules(rd as ResolvedDistribution);
  // The rules may have given the copies a type of their own (spec.copyData.secretType): checked as well.
  const problem = (ruled === rd ? undefined : whyNotDistributable(ruled, kinds, 'spec.resource')) ?? selectionProblem(ruled, 'spec.resource');
  return problem === undefined ? { state: 'ready', rd: ruled } : { state: 'invalid', message: problem };
}

export function resolveDistribution(rd: ResourceDistribution, caches: { sources: Pick<SourceCache, 'get'>; kinds: KindRegistry }): Resolution {
  const { sources, kinds } = caches;
  const ref = rd.spec?.source;
  if (ref === undefined) return resolveTemplate(rd, kinds);
  const named = `source ${ref.kind} ${ref.namespace}/${ref.name}`;
  if (kinds.find(ref.apiVersion, ref.kind) === undefined) return { state: 'invalid', message: `${named}: kind ${ref.kind} of ${ref.apiVersion} is not allowed (RD_ALLOWED_KINDS)` };
  const known = sources.get(ref);
  if (!known.synced) return { state: 'pending' };
  if (known.object === undefined) return { state: 'source-missing', ref };
  if (nestsTooDeeply(known.object)) return { state: 'invalid', message: `${named} is nested more than ${MAX_TEMPLATE_DEPTH} levels deep` };
  // Said as found: it exists, and what it is is never copied.
  const forbidden = undistributableSource(ref, known.object);
  if (forbidden !== undefined) return { state: 'invalid', message: forbidden };
  // Copying our own copy would spread a stale copy as if it were the source; it is no source, and
  // it goes (the source's namespace is never a target) once admission allowed its deletion.
  if (isControlledBy(rd, known.object)) return { state: 'source-missing', ref, ownCopy: true };
  const resolved = resolvedFrom(rd, known.object);
  const why = whyNotDistributable(resolved, kinds, named) ?? selectionProblem(resolved, named);
  return why === undefined ? { state: 'ready', rd: resolved } : { state: 'invalid', message: why };
}
