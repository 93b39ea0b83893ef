import { isForbiddenSecretType } from '../domain/copy.js';
import { applyCopyMetadata } from '../domain/copy-metadata.js';
import { isCoreDataKind, type KindRegistry } from '../domain/kinds.js';
import { MAX_TEMPLATE_DEPTH, nestsDeeperThan } from '../domain/nesting.js';
import { isControlledBy } from '../domain/ownership.js';
import { withSource } from '../domain/source.js';
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
 * whatever a source became; never a template nested too deeply to copy).
 */
export function isDistributable(rd: ResourceDistribution, kinds: KindRegistry): rd is ResolvedDistribution {
  const resource = rd.spec?.resource;
  return (
    typeof resource?.metadata?.name === 'string' &&
    !nestsTooDeeply(resource) &&
    kinds.find(resource.apiVersion, resource.kind) !== undefined &&
    !(isCoreDataKind(resource.apiVersion, resource.kind) && resource.kind === 'Secret' && isForbiddenSecretType(resource.type)) &&
    typeof rd.spec.targets === 'object'
  );
}

/**
 * What a distribution copies, at hand: `ready` with the template or the source's content;
 * `pending` while its source has not been read yet; `source-missing` (`ownCopy`: what stands there
 * is this distribution's own copy, left where spec.source moved to); `invalid` (nothing we may copy).
 */
export type Resolution =
  | { state: 'ready'; rd: ResolvedDistribution }
  | { state: 'pending' }
  | { state: 'source-missing'; ref: SourceRef; ownCopy?: true }
  | { state: 'invalid' };

/** The last resolution of each source object, reused while the distribution is the same object: the template then is too, and its hash is remembered. */
const resolutions = new WeakMap<Resource, { rd: ResourceDistribution; resolved: ResolvedDistribution }>();

function resolvedFrom(rd: ResourceDistribution, source: Resource): ResolvedDistribution {
  const last = resolutions.get(source);
  if (last?.rd === rd) return last.resolved;
  const resolved = withSource(rd, source);
  resolutions.set(source, { rd, resolved });
  return resolved;
}

/** An inline template under copyMetadata rules, per distribution object: its hash is then remembered too. */
const ruled = new WeakMap<ResourceDistribution, ResolvedDistribution>();

function withRules(rd: ResolvedDistribution): ResolvedDistribution {
  if (rd.spec.copyMetadata === undefined) return rd;
  let resolved = ruled.get(rd);
  if (resolved === undefined) {
    resolved = { ...rd, spec: { ...rd.spec, resource: applyCopyMetadata(rd.spec.resource, rd.spec.copyMetadata) } };
    ruled.set(rd, resolved);
  }
  return resolved;
}

export function resolveDistribution(rd: ResourceDistribution, caches: { sources: Pick<SourceCache, 'get'>; kinds: KindRegistry }): Resolution {
  const { sources, kinds } = caches;
  const ref = rd.spec?.source;
  if (ref === undefined) return isDistributable(rd, kinds) ? { state: 'ready', rd: withRules(rd) } : { state: 'invalid' };
  if (kinds.find(ref.apiVersion, ref.kind) === undefined) return { state: 'invalid' };
  const known = sources.get(ref);
  if (!known.synced) return { state: 'pending' };
  if (known.object === undefined) return { state: 'source-missing', ref };
  if (nestsTooDeeply(known.object)) return { state: 'invalid' };
  // Copying our own copy would spread a stale copy as if it were the source; it is no source, and
  // it goes (the source's namespace is never a target) once admission allowed its deletion.
  if (isControlledBy(rd, known.object)) return { state: 'source-missing', ref, ownCopy: true };
  const resolved = resolvedFrom(rd, known.object);
  return isDistributable(resolved, kinds) ? { state: 'ready', rd: resolved } : { state: 'invalid' };
}
