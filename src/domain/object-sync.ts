// The ObjectSync API (sync.rustrial.org/v1alpha1, k8s-object-syncer's), translated to and from the
// one domain model: each destination name of an ObjectSync is a distribution of its source, and
// the distributions' statuses fold back into the ObjectSync's. Pure.
import { createHash } from 'node:crypto';
import { ANNOTATION_AUTHOR, recordedAuthor } from './author.js';
import { apiVersionFor, type KindRegistry } from './kinds.js';
import { NOT_STALLED_REASON, RETRYING_REASON } from './readiness.js';
import { SUCCEEDED_REASON } from './status.js';
import {
  ANNOTATION_OBJECT_SYNC,
  isSummaryCondition,
  LABEL_DISTRIBUTION,
  STALLED_CONDITION,
  type Condition,
  type DistributionStatus,
  type ObjectMeta,
  type Resource,
  type ResourceDistribution,
  type Targets,
} from './types.js';

export const OBJECT_SYNC_GROUP = 'sync.rustrial.org';
export const OBJECT_SYNC_VERSION = 'v1alpha1';
export const OBJECT_SYNC_API_VERSION = `${OBJECT_SYNC_GROUP}/${OBJECT_SYNC_VERSION}`;
export const OBJECT_SYNC_KIND = 'ObjectSync';
export const OBJECT_SYNC_PLURAL = 'objectsyncs';
/** Held while the ObjectSync has copies: they are in other namespaces, where it cannot own them. */
export const OBJECT_SYNC_FINALIZER = 'resource-distributor.io/copies';
/** k8s-object-syncer's finalizer: taken over (replaced by ours), or an ObjectSync it left could never be deleted. */
export const LEGACY_FINALIZER = 'sync.rustrial.org/rustrial-object-syncer';
/** k8s-object-syncer marks its copies with `<source namespace>/<source name>`: such copies of the same source are adopted. */
export const LEGACY_SOURCE_ANNOTATION = 'sync.rustrial.org/source-object';
/** The distributions an ObjectSync stands for are named `objectsync-<hash>`: a label value, unique per ObjectSync (uid) and destination name. */
export const OBJECT_SYNC_PREFIX = 'objectsync-';
/** What the API server adds to an object deleted with propagation Orphan (`kubectl delete --cascade=orphan`). */
export const ORPHAN_FINALIZER = 'orphan';

export interface ObjectSyncSource {
  group: string;
  /** Default: the group's preferred version. */
  version?: string;
  kind: string;
  name: string;
  /** Default: the ObjectSync's namespace. */
  namespace?: string;
}

export interface ObjectSyncDestination {
  /** `""` or `"*"`: every namespace. */
  namespace: string;
  /** Default: the source's name. */
  name?: string;
  /** k8s-object-syncer's `apply` or `replace`: accepted; copies are kept identical to the source either way. */
  strategy?: string;
}

export interface ObjectSyncCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message?: string;
  lastTransitionTime: string;
}

export interface ObjectSyncStatus {
  observedGeneration?: number;
  desired: number;
  succeeded: number;
  failed: number;
  conditions: ObjectSyncCondition[];
}

export interface ObjectSync {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: { source: ObjectSyncSource; destinations: ObjectSyncDestination[] };
  status?: ObjectSyncStatus;
  /** Held in memory only (see orphanIntent): it was deleted with propagation Orphan. */
  keepsCopies?: true;
}

/**
 * Whether an ObjectSync being deleted keeps its copies, as a distribution deleted with
 * propagation Orphan does. The API server says so with the `orphan` finalizer, which the garbage
 * collector removes at once (an ObjectSync has no dependents it knows of): the intent is kept from
 * the version that showed it, for the same object (uid), to every later one.
 */
export function orphanIntent(current: ObjectSync, previous: ObjectSync | undefined): ObjectSync {
  if (current.metadata.deletionTimestamp === undefined) return current;
  const shown = current.metadata.finalizers?.includes(ORPHAN_FINALIZER) === true;
  const kept = previous?.keepsCopies === true && previous.metadata.uid === current.metadata.uid;
  return shown || kept ? { ...current, keepsCopies: true } : current;
}

/** A copy untied from its ObjectSync, as the garbage collector unties a distribution's copies: no longer watched nor deleted by us. */
export function untiedCopy(copy: Resource): Resource {
  const { [LABEL_DISTRIBUTION]: _label, ...labels } = copy.metadata.labels ?? {};
  const { [ANNOTATION_OBJECT_SYNC]: _marker, ...annotations } = copy.metadata.annotations ?? {};
  return { ...copy, metadata: { ...copy.metadata, labels, annotations } };
}

export function objectSyncKey(os: Pick<ObjectSync, 'metadata'>): string {
  return `${os.metadata.namespace}/${os.metadata.name}`;
}

/** The name of the distribution that writes `copyName` for this ObjectSync. */
export function distributionName(uid: string, copyName: string): string {
  return `${OBJECT_SYNC_PREFIX}${createHash('sha256').update(`${uid}/${copyName}`).digest('hex').slice(0, 40)}`;
}

const isEverywhere = (namespace: string): boolean => namespace === '' || namespace === '*';

function targetsOf(destinations: readonly ObjectSyncDestination[]): Targets {
  if (destinations.some((destination) => isEverywhere(destination.namespace))) return { allNamespaces: true };
  const names = [...new Set(destinations.map((destination) => destination.namespace))].sort();
  return { includedNamespaces: { list: names.map((name) => ({ name })) }, systemByName: true };
}

/**
 * One distribution per destination name, in name order; none when the source's kind is not
 * allowed (admission refuses it; an ObjectSync stored while it was off is reported, not served:
 * see reportedDistributionsOf).
 */
export function distributionsOf(os: ObjectSync, kinds: KindRegistry, statuses?: ReadonlyMap<string, DistributionStatus>): ResourceDistribution[] {
  const { source } = os.spec ?? {};
  const kind = kinds.all.find((candidate) => candidate.group === (source?.group ?? '') && candidate.kind === source?.kind);
  if (kind === undefined) return [];
  const version = source?.version && kind.versions.includes(source.version) ? source.version : kind.version;
  return distributionsIn(os, apiVersionFor(kind, version), kind.kind, statuses);
}

/**
 * What the controller serves of an ObjectSync: its distributions, or, when its source's kind is not
 * allowed (RD_ALLOWED_KINDS changed since admission), the same distributions of that kind as named,
 * which are never copied but reported: their status says why (NotDistributable).
 */
export function reportedDistributionsOf(os: ObjectSync, kinds: KindRegistry): ResourceDistribution[] {
  const served = distributionsOf(os, kinds);
  const source = os.spec?.source;
  if (served.length > 0 || typeof source?.kind !== 'string' || source.kind === '') return served;
  const version = source.version || 'v1';
  return distributionsIn(os, source.group ? `${source.group}/${version}` : version, source.kind);
}

function distributionsIn(os: ObjectSync, apiVersion: string, kindName: string, statuses?: ReadonlyMap<string, DistributionStatus>): ResourceDistribution[] {
  const { source, destinations } = os.spec ?? {};
  if (source === undefined || !Array.isArray(destinations)) return [];
  const namespace = source.namespace || os.metadata.namespace;
  const uid = os.metadata.uid ?? '';
  const author = recordedAuthor(os);
  const byName = new Map<string, ObjectSyncDestination[]>();
  for (const destination of destinations) {
    const name = destination.name || source.name;
    byName.set(name, [...(byName.get(name) ?? []), destination]);
  }
  return [...byName.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([copyName, group]) => {
      const name = distributionName(uid, copyName);
      const status = statuses?.get(name);
      return {
        apiVersion: os.apiVersion,
        kind: os.kind,
        metadata: {
          name,
          uid,
          resourceVersion: os.metadata.resourceVersion,
          generation: os.metadata.generation,
          ...(os.metadata.deletionTimestamp ? { deletionTimestamp: os.metadata.deletionTimestamp } : {}),
          // Its author, as admission recorded it on the ObjectSync: asked about again as a distribution's.
          ...(author === undefined ? {} : { annotations: { [ANNOTATION_AUTHOR]: author } }),
        },
        spec: {
          source: { apiVersion, kind: kindName, namespace, name: source.name },
          ...(copyName === source.name ? {} : { rename: copyName }),
          targets: targetsOf(group),
        },
        ...(status ? { status } : {}),
        origin: { apiVersion: os.apiVersion, kind: os.kind, namespace: os.metadata.namespace, name: os.metadata.name, uid, ...(os.keepsCopies ? { keepsCopies: true as const } : {}) },
      };
    });
}

/** The condition types an ObjectSync reports: k8s-object-syncer's two, then a ResourceDistribution's. */
const READY = 'Ready';
const IN_SYNC = 'InSync';

type Since = (type: string, status: string) => string;

/** Kept while the condition keeps its status; now when it flips (or is new). */
function sinceFor(os: ObjectSync, now: string): Since {
  const previous = os.status?.conditions ?? [];
  return (type, status) => {
    const before = previous.find((c) => c.type === type);
    return before !== undefined && before.status === status ? before.lastTransitionTime : now;
  };
}

/** The True ones of `found`, as one condition of `type` (messages joined); undefined when none is. */
function foldTrue(type: string, found: readonly Condition[], since: Since): ObjectSyncCondition | undefined {
  const [first, ...rest] = found.filter((condition) => condition.status === 'True');
  if (first === undefined) return undefined;
  const message = [first, ...rest].map((condition) => condition.message ?? type).join('; ');
  return { type, status: 'True', reason: first.reason, message, lastTransitionTime: since(type, 'True') };
}

/**
 * Each failure condition True when one of the distributions has it True. Their Ready and Stalled
 * are not folded here: the ObjectSync says its own (summaryConditions).
 */
function foldConditions(statuses: readonly DistributionStatus[], since: Since): ObjectSyncCondition[] {
  const byType = new Map<string, Condition[]>();
  for (const status of statuses) {
    for (const condition of status.conditions) if (!isSummaryCondition(condition.type)) byType.set(condition.type, [...(byType.get(condition.type) ?? []), condition]);
  }
  return [...byType.entries()].map(([type, found]) => foldTrue(type, found, since) ?? { type, status: 'False', reason: SUCCEEDED_REASON, lastTransitionTime: since(type, 'False') });
}

/** Stalled, last, as kstatus reads it: True when one of the distributions is (it waits on someone), else False. */
function stalledCondition(statuses: readonly DistributionStatus[], ready: boolean, since: Since): ObjectSyncCondition {
  const found = statuses.flatMap((status) => status.conditions.filter((condition) => condition.type === STALLED_CONDITION));
  const stalled = foldTrue(STALLED_CONDITION, found, since);
  if (stalled !== undefined) return stalled;
  const lastTransitionTime = since(STALLED_CONDITION, 'False');
  return ready
    ? { type: STALLED_CONDITION, status: 'False', reason: NOT_STALLED_REASON, lastTransitionTime }
    : { type: STALLED_CONDITION, status: 'False', reason: RETRYING_REASON, message: 'what failed is retried', lastTransitionTime };
}

interface Counts {
  desired: number;
  succeeded: number;
  failed: number;
}

/**
 * Ready and InSync first (k8s-object-syncer's), the folded failure conditions, Stalled last. InSync:
 * every copy is as the source. Ready: that, and no condition reports a problem (as a
 * ResourceDistribution's Ready). No distribution at all: the kind is not allowed, which waits on
 * the operator.
 */
function summaryConditions(os: ObjectSync, counts: Counts, statuses: readonly DistributionStatus[], since: Since): ObjectSyncCondition[] {
  const at = (type: string, status: 'True' | 'False', reason: string, message: string): ObjectSyncCondition => ({ type, status, reason, message, lastTransitionTime: since(type, status) });
  if (statuses.length === 0) {
    const message = `kind ${os.spec.source.kind} of group "${os.spec.source.group}" is not allowed (RD_ALLOWED_KINDS)`;
    return [at(READY, 'False', 'KindNotAllowed', message), at(IN_SYNC, 'False', 'KindNotAllowed', message), at(STALLED_CONDITION, 'True', 'KindNotAllowed', message)];
  }
  const conditions = foldConditions(statuses, since);
  const inSync = counts.failed === 0;
  const problem = conditions.find((condition) => condition.status === 'True');
  const ready = inSync && problem === undefined;
  return [
    ready
      ? at(READY, 'True', 'Synced', `${counts.succeeded} copies in sync`)
      : at(READY, 'False', problem?.reason ?? 'NotSynced', problem?.message ?? `${counts.failed} of ${counts.desired} copies not in sync`),
    inSync ? at(IN_SYNC, 'True', 'Synced', `${counts.succeeded} copies in sync`) : at(IN_SYNC, 'False', 'NotSynced', `${counts.failed} of ${counts.desired} copies not in sync`),
    ...conditions,
    stalledCondition(statuses, ready, since),
  ];
}

/**
 * The ObjectSync's status from its distributions': counts added up, their conditions folded, and
 * Ready when every copy is in sync; Stalled last, when one of them waits on someone.
 */
export function foldStatus(os: ObjectSync, statuses: readonly DistributionStatus[], now: string): ObjectSyncStatus {
  const since = sinceFor(os, now);
  const sum = (field: 'desired' | 'succeeded' | 'failed'): number => statuses.reduce((total, status) => total + status[field], 0);
  const counts = { desired: sum('desired'), succeeded: sum('succeeded'), failed: sum('failed') };
  return {
    ...(os.metadata.generation === undefined ? {} : { observedGeneration: os.metadata.generation }),
    ...counts,
    conditions: summaryConditions(os, counts, statuses, since),
  };
}
