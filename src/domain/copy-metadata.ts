// Which labels and annotations reach copies. A source object (spec.source, an ObjectSync's) never
// passes on the markers by which other tools claim it: on a copy in another namespace they would
// make that tool treat the copy as its own (Argo CD prunes it and we recreate it, forever; a Helm
// chart shipping that name fails on, or adopts, our copy). A distribution may narrow further with
// spec.copyMetadata: include and exclude lists of keys or anchored key globs. It may also add
// labels and annotations to every copy (`add`), which win over the template's value of that key.
import { asRecord, keyPath, quote, type FieldProblem } from './field-problem.js';
import { compileGlobSet, type GlobSet } from './glob.js';
import { isLabelValue, isQualifiedName, LABEL_VALUE_RULE, QUALIFIED_NAME_RULE } from './k8s-names.js';
import type { CopyMetadataRules, KeyRules, MetadataRules, ObjectMeta, Resource } from './types.js';

interface Marker {
  key: string;
  /** Only with this value (a label others use for other things). */
  value?: string;
}

/**
 * What other tools mark the objects they manage with; never copied from a source. See
 * docs/concepts/copies.md, "Which labels and annotations reach copies", for why each.
 */
export const SOURCE_MARKERS: { labels: readonly Marker[]; annotations: readonly Marker[] } = {
  labels: [
    // Helm: the release that manages the object.
    { key: 'app.kubernetes.io/managed-by', value: 'Helm' },
    // Argo CD's default tracking label (before 3.0), and the key its docs suggest instead; also Helm's release name.
    { key: 'app.kubernetes.io/instance' },
    { key: 'argocd.argoproj.io/instance' },
    // Flux: the Kustomization or HelmRelease that applied the object.
    { key: 'kustomize.toolkit.fluxcd.io/name' },
    { key: 'kustomize.toolkit.fluxcd.io/namespace' },
    { key: 'helm.toolkit.fluxcd.io/name' },
    { key: 'helm.toolkit.fluxcd.io/namespace' },
    // cert-manager: a Secret it manages (for its caches).
    { key: 'controller.cert-manager.io/fao' },
  ],
  annotations: [
    // kubectl apply: the configuration last applied to the source, not to the copy.
    { key: 'kubectl.kubernetes.io/last-applied-configuration' },
    // Helm: the release that owns the object.
    { key: 'meta.helm.sh/release-name' },
    { key: 'meta.helm.sh/release-namespace' },
    // Argo CD's annotation tracking.
    { key: 'argocd.argoproj.io/tracking-id' },
    // cert-manager: the Certificate and issuer a Secret was issued for.
    { key: 'cert-manager.io/certificate-name' },
    { key: 'cert-manager.io/issuer-name' },
    { key: 'cert-manager.io/issuer-kind' },
    { key: 'cert-manager.io/issuer-group' },
  ],
};

type StringMap = Record<string, string> | undefined;

function withoutMarkers(map: StringMap, markers: readonly Marker[]): StringMap {
  if (map === undefined) return undefined;
  const dropped = markers.filter((marker) => marker.key in map && (marker.value === undefined || map[marker.key] === marker.value));
  if (dropped.length === 0) return map;
  const kept = { ...map };
  for (const marker of dropped) delete kept[marker.key];
  return kept;
}

/** A source's metadata without the markers of the tools that manage it. */
export function withoutSourceMarkers(metadata: ObjectMeta): ObjectMeta {
  const labels = withoutMarkers(metadata.labels, SOURCE_MARKERS.labels);
  const annotations = withoutMarkers(metadata.annotations, SOURCE_MARKERS.annotations);
  return labels === metadata.labels && annotations === metadata.annotations ? metadata : { ...metadata, labels, annotations };
}

interface CompiledKeyRules {
  include: GlobSet | undefined;
  exclude: GlobSet;
}

/** Per rules object: a distribution's spec is replaced when it changes, never changed in place. */
const compiledRules = new WeakMap<KeyRules, CompiledKeyRules>();

function compileKeyRules(rules: KeyRules): CompiledKeyRules {
  let compiled = compiledRules.get(rules);
  if (compiled === undefined) {
    const include = rules.include ?? [];
    compiled = { include: include.length > 0 ? compileGlobSet(include) : undefined, exclude: compileGlobSet(rules.exclude ?? []) };
    compiledRules.set(rules, compiled);
  }
  return compiled;
}

export function keyAllowed(key: string, rules: KeyRules | undefined): boolean {
  if (rules === undefined) return true;
  const { include, exclude } = compileKeyRules(rules);
  if (include !== undefined && !include.has(key)) return false;
  return !exclude.has(key);
}

/** The entries of `map` whose keys the rules let through (the same map when none is left out). */
export function filtered(map: StringMap, rules: KeyRules | undefined): StringMap {
  if (map === undefined || rules === undefined) return map;
  const entries = Object.entries(map).filter(([key]) => keyAllowed(key, rules));
  if (entries.length === Object.keys(map).length) return map;
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/** The keys the rules let through, then those they add (which win: an added key is what the author asked every copy to hold). */
function ruled(map: StringMap, rules: MetadataRules | undefined): StringMap {
  const kept = filtered(map, rules);
  const add = rules?.add;
  if (add === undefined || Object.keys(add).length === 0) return kept;
  return { ...kept, ...add };
}

/**
 * The template with only the labels and annotations the rules let through, plus those they add
 * (the same object when nothing changes). Added keys become the template's: the hash covers them
 * and the copy's template-metadata record lists them, so one removed from the rules leaves copies.
 */
export function applyCopyMetadata(resource: Resource, rules: CopyMetadataRules | undefined): Resource {
  const metadata = resource.metadata ?? {};
  const labels = ruled(metadata.labels, rules?.labels);
  const annotations = ruled(metadata.annotations, rules?.annotations);
  if (labels === metadata.labels && annotations === metadata.annotations) return resource;
  const next: ObjectMeta = { ...metadata };
  delete next.labels;
  delete next.annotations;
  return { ...resource, metadata: { ...next, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
}

const MAX_GLOBS = 64;
/** About 50 µs of matching per key at most (bench/glob-cost.ts). */
const MAX_STEPS_PER_KEY = 65_536;

/** What the entries of a key-rules list may be, and what one key may cost to test against them. */
export interface KeySyntax {
  /** An entry: a key with `*` anywhere. */
  entry: RegExp;
  /** What an entry is, for the message of one that is not. */
  describe: string;
  maxKeyLength: number;
  maxStepsPerKey: number;
}

// A qualified key (a DNS-subdomain prefix, a slash, a name) with `*` anywhere.
const KEY_GLOB = /^[A-Za-z0-9*]([-A-Za-z0-9_.*/]{0,315}[A-Za-z0-9*])?$/;
const METADATA_KEYS: KeySyntax = {
  entry: KEY_GLOB,
  describe: 'a label or annotation key, or a glob of one (* for any characters, e.g. "example.com/*")',
  // A qualified key: a 253-character prefix, '/', a 63-character name.
  maxKeyLength: 317,
  maxStepsPerKey: MAX_STEPS_PER_KEY,
};

function checkGlobs(value: unknown, path: string, syntax: KeySyntax): FieldProblem[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return [{ path, message: 'must be a list of keys or key globs' }];
  if (value.length > MAX_GLOBS) return [{ path, message: `has ${value.length} entries: at most ${MAX_GLOBS}` }];
  return value.flatMap((entry: unknown, i): FieldProblem[] =>
    typeof entry === 'string' && syntax.entry.test(entry) && entry.split('/').length <= 2
      ? []
      : [{ path: `${path}[${i}]`, message: `${quote(entry)} is not ${syntax.describe}` }],
  );
}

/** Admission rules for one {include, exclude} object at `path`: its entries, then what testing one key may cost. */
export function keyRulesProblems(rules: Record<string, unknown>, path: string, syntax: KeySyntax): FieldProblem[] {
  const problems = [...checkGlobs(rules.include, `${path}.include`, syntax), ...checkGlobs(rules.exclude, `${path}.exclude`, syntax)];
  return problems.length > 0 ? problems : costProblems(rules, path, syntax);
}

/** Prefixes of the keys we write on copies (markers, records): a distribution never sets them. */
const OUR_KEY_PREFIXES = ['kruise.io/resourcedistribution.', 'resource-distributor.io/'];
const MAX_ADDED = 64;
/** The API server's limit on all annotations of an object together (keys and values). */
const MAX_ANNOTATIONS_BYTES = 256 * 1024;

function checkAddedEntry(kind: 'labels' | 'annotations', key: string, value: unknown, path: string): FieldProblem[] {
  const noun = kind === 'labels' ? 'label' : 'annotation';
  if (!isQualifiedName(key)) return [{ path, message: `${quote(key)} is not a valid ${noun} key (${QUALIFIED_NAME_RULE})` }];
  const ours = OUR_KEY_PREFIXES.find((prefix) => key.startsWith(prefix));
  if (ours !== undefined) return [{ path, message: `is not allowed: keys starting with ${ours} are the markers by which resource-distributor tells its copies and what it wrote there` }];
  if (typeof value !== 'string') return [{ path, message: 'must be a string' }];
  if (kind === 'labels' && !isLabelValue(value)) return [{ path, message: `${quote(value)} is not a valid label value (${LABEL_VALUE_RULE})` }];
  return [];
}

/** spec.copyMetadata.<kind>.add: keys and values as the template's would be checked, never one of our markers. */
function checkAdded(kind: 'labels' | 'annotations', value: unknown, path: string): FieldProblem[] {
  if (value === undefined) return [];
  const added = asRecord(value);
  if (added === undefined) return [{ path, message: 'must be a map of key to value' }];
  const entries = Object.entries(added);
  if (entries.length > MAX_ADDED) return [{ path, message: `has ${entries.length} entries: at most ${MAX_ADDED}` }];
  const problems = entries.flatMap(([key, entry]) => checkAddedEntry(kind, key, entry, keyPath(path, key)));
  if (problems.length > 0 || kind === 'labels') return problems;
  const bytes = entries.reduce((sum, [key, entry]) => sum + Buffer.byteLength(key) + Buffer.byteLength(String(entry)), 0);
  return bytes <= MAX_ANNOTATIONS_BYTES ? [] : [{ path, message: `holds ${bytes} bytes of keys and values: an object's annotations may hold at most ${MAX_ANNOTATIONS_BYTES}` }];
}

/** Admission rules for spec.copyMetadata. */
export function validateCopyMetadata(value: unknown): FieldProblem[] {
  if (value === undefined) return [];
  const rules = asRecord(value);
  if (rules === undefined) return [{ path: 'spec.copyMetadata', message: 'must be an object: {labels: {include, exclude, add}, annotations: {include, exclude, add}}' }];
  return (['labels', 'annotations'] as const).flatMap((kind) => {
    const path = `spec.copyMetadata.${kind}`;
    const lists = rules[kind];
    if (lists === undefined) return [];
    const record = asRecord(lists);
    if (record === undefined) return [{ path, message: 'must be an object: {include: [...], exclude: [...], add: {key: value}}' }];
    return [...checkAdded(kind, record.add, `${path}.add`), ...keyRulesProblems(record, path, METADATA_KEYS)];
  });
}

/**
 * What testing one key against the globs may cost, bounded before any key is tested: every key of
 * a source's labels and annotations (or data) is tested on every render.
 */
function costProblems(rules: KeyRules, path: string, syntax: KeySyntax): FieldProblem[] {
  const { maxKeyLength, maxStepsPerKey } = syntax;
  const steps = compileGlobSet(rules.include ?? []).worstSteps(maxKeyLength) + compileGlobSet(rules.exclude ?? []).worstSteps(maxKeyLength);
  if (steps <= maxStepsPerKey) return [];
  const message = `its globs could take ${steps} comparisons to test one key, more than the ${maxStepsPerKey} allowed: use fewer '*' in a glob, or fewer globs that share their start or that start and end with '*'`;
  return [{ path, message }];
}
