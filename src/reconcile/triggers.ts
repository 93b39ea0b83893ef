// Which distributions a change concerns. Pure: (old, new) object -> names to enqueue. Watch
// callbacks call these and enqueue; they never decide anything else.
import { kindKeyOf, type KindKey, type KindRegistry } from '../domain/kinds.js';
import { reportedDistributionsOf, type ObjectSync } from '../domain/object-sync.js';
import { sourceKey } from '../domain/source.js';
import { forbiddenFor, isTargeted } from '../domain/targets.js';
import {
  ANNOTATION_FROM,
  LABEL_DISTRIBUTION,
  type NamespaceInfo,
  type Resource,
  type ResourceDistribution,
  type SourceRef,
} from '../domain/types.js';

export interface Change<T> {
  old?: T;
  current?: T;
}

function unique(names: readonly (string | undefined)[]): string[] {
  return [...new Set(names.filter((name): name is string => typeof name === 'string' && name.length > 0))].sort();
}

interface ChangedMeta {
  uid?: string;
  generation?: number;
  deletionTimestamp?: string;
  finalizers?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function sameStrings(a: Readonly<Record<string, string>> = {}, b: Readonly<Record<string, string>> = {}): boolean {
  const entries = Object.entries(a);
  return entries.length === Object.keys(b).length && entries.every(([key, value]) => b[key] === value);
}

/**
 * Only the status (or resourceVersion, managedFields) changed: what the reconciler writes itself
 * after each pass. The API server bumps `generation` on every other change but those to metadata,
 * so these are compared one by one. A change of its own status must not start a pass: over a
 * distribution of 10,000 namespaces each status write would bring a pass over all of them.
 */
export function statusOnly(change: Change<{ metadata: ChangedMeta }>): boolean {
  const { old, current } = change;
  if (old === undefined || current === undefined) return false;
  const [a, b] = [old.metadata, current.metadata];
  return (
    a.uid === b.uid &&
    a.generation !== undefined &&
    a.generation === b.generation &&
    a.deletionTimestamp === b.deletionTimestamp &&
    (a.finalizers ?? []).join('\n') === (b.finalizers ?? []).join('\n') &&
    sameStrings(a.labels, b.labels) &&
    sameStrings(a.annotations, b.annotations)
  );
}

/** A distribution concerns itself (created, changed, deleted: reconcile decides what that means), unless only its status changed. */
export function distributionTriggers(change: Change<ResourceDistribution>): string[] {
  if (statusOnly(change)) return [];
  return unique([change.old?.metadata.name, change.current?.metadata.name]);
}

/** An ObjectSync concerns the distributions it stands for, before and after (a destination renamed leaves one behind), unless only its status changed. */
export function objectSyncTriggers(change: Change<ObjectSync>, kinds: KindRegistry): string[] {
  if (statusOnly(change)) return [];
  const names = [change.old, change.current].flatMap((os) => (os === undefined ? [] : reportedDistributionsOf(os, kinds).map((rd) => rd.metadata.name)));
  return unique(names);
}

function sameNamespaceInfo(a: NamespaceInfo, b: NamespaceInfo): boolean {
  return a.terminating === b.terminating && sameStrings(a.labels, b.labels);
}

function listsByName(rd: ResourceDistribution, namespace: string): boolean {
  return (rd.spec?.targets?.includedNamespaces?.list ?? []).some((entry) => entry.name === namespace);
}

function concerns(rd: ResourceDistribution, ns: NamespaceInfo | undefined, forbidden: readonly string[]): boolean {
  if (ns === undefined || rd.spec?.targets === undefined) return false;
  return isTargeted(rd.spec.targets, ns, forbiddenFor(rd, forbidden));
}

/**
 * A namespace concerns every distribution that targets it before or after the change (copies to
 * write or remove), and every distribution that lists it by name (it may have appeared or gone
 * missing). A change that leaves labels and termination alone concerns nobody.
 */
export function namespaceTriggers(
  change: Change<NamespaceInfo>,
  distributions: readonly ResourceDistribution[],
  forbidden: readonly string[] = [],
): string[] {
  const { old, current } = change;
  if (old !== undefined && current !== undefined && sameNamespaceInfo(old, current)) return [];
  const name = current?.name ?? old?.name;
  if (name === undefined) return [];
  return unique(
    distributions
      .filter((rd) => concerns(rd, old, forbidden) || concerns(rd, current, forbidden) || listsByName(rd, name))
      .map((rd) => rd.metadata.name),
  );
}

/** A source concerns every distribution that copies it. */
export function sourceTriggers(key: string, distributions: readonly ResourceDistribution[]): string[] {
  return unique(distributions.filter((rd) => rd.spec?.source !== undefined && sourceKey(rd.spec.source) === key).map((rd) => rd.metadata.name));
}

/** The sources the distributions name, of the kinds allowed: the ones to watch. */
export function sourcesOf(distributions: readonly ResourceDistribution[], kinds?: KindRegistry): SourceRef[] {
  return distributions.flatMap((rd) => (rd.spec?.source === undefined || (kinds !== undefined && kinds.find(rd.spec.source.apiVersion, rd.spec.source.kind) === undefined) ? [] : [rd.spec.source]));
}

/** A copy concerns the distribution its label names and the one its `from` annotation names, before and after. */
export function copyTriggers(change: Change<Resource>): string[] {
  const names: (string | undefined)[] = [];
  for (const object of [change.old, change.current]) {
    names.push(object?.metadata.labels?.[LABEL_DISTRIBUTION], object?.metadata.annotations?.[ANNOTATION_FROM]);
  }
  return unique(names);
}

/** The kind a distribution copies (of its template, or of its source); undefined when it names none. */
export function kindOf(rd: ResourceDistribution): KindKey | undefined {
  const named = rd.spec?.source ?? rd.spec?.resource;
  return typeof named?.kind === 'string' ? kindKeyOf(named.apiVersion, named.kind) : undefined;
}

/**
 * The kinds whose copies to watch: those the distributions copy, of the kinds allowed (one stored
 * while its kind was allowed, or before admission checked it, is reported, never watched).
 */
export function kindsOf(distributions: readonly ResourceDistribution[], kinds?: KindRegistry): Set<KindKey> {
  return new Set(distributions.flatMap((rd) => kindOf(rd) ?? []).filter((key) => kinds === undefined || kinds.byKey(key) !== undefined));
}

/** The kind and name a distribution writes in each target (a template's, a source's, or an ObjectSync destination's); undefined when it names none. */
export function copiedName(rd: ResourceDistribution): { kind: KindKey; name: string } | undefined {
  const kind = kindOf(rd);
  const { rename, source, resource } = rd.spec ?? {};
  const name = rename ?? source?.name ?? resource?.metadata?.name;
  return kind === undefined || typeof name !== 'string' || name === '' ? undefined : { kind, name };
}

/** Every (kind, name) the distributions write, of the kinds allowed, with the distributions that write it. */
export function namedTargetsOf(distributions: readonly ResourceDistribution[], kinds: KindRegistry): { kind: KindKey; name: string; distributions: string[] }[] {
  const byKey = new Map<string, { kind: KindKey; name: string; distributions: string[] }>();
  for (const rd of distributions) {
    const copied = copiedName(rd);
    if (copied === undefined || kinds.byKey(copied.kind) === undefined) continue;
    const key = `${copied.kind}/${copied.name}`;
    const entry = byKey.get(key) ?? { ...copied, distributions: [] };
    entry.distributions.push(rd.metadata.name);
    byKey.set(key, entry);
  }
  return [...byKey.values()];
}

/**
 * An object of a distributed kind and name, ours or not, appeared, changed or went: it concerns
 * every distribution that writes that name (a conflict cleared, an object to adopt, a copy to
 * recreate), but the one whose label it carried before and after: that one's own copy watch
 * already brings it each change.
 */
export function namedObjectTriggers(change: Change<Resource>, writers: readonly string[]): string[] {
  const states = [change.old, change.current].filter((object): object is Resource => object !== undefined);
  const labelledAlways = (name: string): boolean => states.every((object) => object.metadata.labels?.[LABEL_DISTRIBUTION] === name);
  return unique(writers.filter((name) => !labelledAlways(name)));
}

/** A kind's copies became known: every distribution of that kind can now be reconciled. */
export function kindTriggers(key: KindKey, distributions: readonly ResourceDistribution[]): string[] {
  return unique(distributions.filter((rd) => kindOf(rd) === key).map((rd) => rd.metadata.name));
}
