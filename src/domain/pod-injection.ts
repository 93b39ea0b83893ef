// Which image-pull Secrets a pod gets named, and the JSONPatch that names them: the pure half of
// pod mutation. The patch only adds: names the pod lists stay as they are, no name twice, new ones
// in distribution-name order, and an annotation says what was added. Pure.
import { normalizeImage } from './image-reference.js';
import { list as entries, record, type Unknown } from './pod-references.js';
import { credentialsMatch, type RegistryKey } from './registry-credentials.js';
import { ANNOTATION_INJECTED, LABEL_INJECT, type ResourceDistribution } from './types.js';

/** A distribution that injects, whose copy in the pod's namespace is ours (or about to be written). */
export interface InjectionCandidate {
  distribution: string;
  /** The copy's name. */
  secret: string;
  mode: 'MatchingImages' | 'Always';
  /** Its credential keys (MatchingImages). */
  keys: readonly RegistryKey[];
}

/** How the distribution injects, or undefined when it does not. */
export function injectionMode(rd: ResourceDistribution): InjectionCandidate['mode'] | undefined {
  const mode = rd.spec?.imagePullSecretInjection;
  return mode === 'Always' || mode === 'MatchingImages' ? mode : undefined;
}

export interface JsonPatchOperation {
  op: 'add';
  path: string;
  value: unknown;
}

export interface PodInjection {
  /** The names added, in order. */
  names: string[];
  patch: JsonPatchOperation[];
}

/** The repositories of init and regular containers (what the kubelet pulls before the pod runs). */
export function podRepositories(spec: Unknown | undefined): string[] {
  const images = [...entries(spec?.initContainers), ...entries(spec?.containers)].map((container) => container.image);
  return images.flatMap((image) => (typeof image === 'string' ? (normalizeImage(image) ?? []) : []));
}

/** JSON Pointer escaping of one key. */
const pointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The names to add, in distribution-name order, none twice, none the pod lists already. */
function namesToAdd(spec: Unknown, candidates: readonly InjectionCandidate[]): string[] {
  const listed = new Set(entries(spec.imagePullSecrets).map((entry) => entry.name));
  const repositories = podRepositories(spec);
  const names: string[] = [];
  for (const candidate of [...candidates].sort((a, b) => (a.distribution < b.distribution ? -1 : a.distribution > b.distribution ? 1 : 0))) {
    if (listed.has(candidate.secret)) continue;
    if (candidate.mode === 'MatchingImages' && !repositories.some((repository) => credentialsMatch(candidate.keys, repository))) continue;
    listed.add(candidate.secret);
    names.push(candidate.secret);
  }
  return names;
}

/** The annotation that says what was added (to what an earlier invocation added, if any). */
function annotationPatch(metadata: Unknown | undefined, names: readonly string[]): JsonPatchOperation {
  const annotations = record(metadata?.annotations);
  const earlier = annotations?.[ANNOTATION_INJECTED];
  const value = typeof earlier === 'string' && earlier !== '' ? `${earlier},${names.join(',')}` : names.join(',');
  if (annotations === undefined) return { op: 'add', path: '/metadata/annotations', value: { [ANNOTATION_INJECTED]: value } };
  return { op: 'add', path: `/metadata/annotations/${pointer(ANNOTATION_INJECTED)}`, value };
}

export function podInjection(pod: unknown, candidates: readonly InjectionCandidate[]): PodInjection {
  const metadata = record(record(pod)?.metadata);
  const spec = record(record(pod)?.spec);
  if (record(metadata?.labels)?.[LABEL_INJECT] === 'disabled' || spec === undefined) return { names: [], patch: [] };
  const names = namesToAdd(spec, candidates);
  if (names.length === 0) return { names, patch: [] };
  const patch: JsonPatchOperation[] = Array.isArray(spec.imagePullSecrets)
    ? names.map((name) => ({ op: 'add', path: '/spec/imagePullSecrets/-', value: { name } }))
    : [{ op: 'add', path: '/spec/imagePullSecrets', value: names.map((name) => ({ name })) }];
  return { names, patch: [...patch, annotationPatch(metadata, names)] };
}
