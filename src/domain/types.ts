// The ResourceDistribution API (apps.kruise.io/v1alpha1) and the shapes the pure domain works on.
// Everything here is data: no I/O, no clock.

export const GROUP = 'apps.kruise.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'ResourceDistribution';
export const PLURAL = 'resourcedistributions';

export const ANNOTATION_FROM = 'kruise.io/resourcedistribution.resource.from';
export const ANNOTATION_HASH = 'kruise.io/resourcedistribution.resource.hashcode';
export const ANNOTATION_TIMESTAMP = 'kruise.io/resourcedistribution.resource.distributed.timestamp';
export const ANNOTATION_ADOPT = 'resource-distributor.io/adopt';
export const LABEL_DISTRIBUTION = 'resource-distributor.io/distribution';
/** On copies of an ObjectSync: `<namespace>/<name>` of the ObjectSync (they carry no owner reference). */
export const ANNOTATION_OBJECT_SYNC = 'resource-distributor.io/object-sync';

/**
 * On copies whose template has labels or annotations: the keys the template put there, as JSON
 * `{"labels":[...],"annotations":[...]}`, so that a key the template no longer has is removed
 * from the copy while keys others added stay (as kubectl's last-applied configuration does).
 */
export const ANNOTATION_TEMPLATE_METADATA = 'resource-distributor.io/template-metadata';

/**
 * The cluster's system namespaces: no distribution targets them, whatever its spec says; an
 * ObjectSync writes there only where a destination names one.
 */
export const ALWAYS_EXCLUDED_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];

/** Secret types that are never copied: they carry credentials bound to one namespace or one tool. */
export const FORBIDDEN_SECRET_TYPES: readonly string[] = [
  'kubernetes.io/service-account-token',
  'helm.sh/release.v1',
];

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [key: string]: unknown;
}

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface NamespaceNameList {
  /**
   * A namespace by `name`, or (an addition to the ResourceDistribution API) every namespace whose
   * whole name matches `pattern`, a glob with `*` for any characters.
   */
  list?: { name?: string; pattern?: string }[];
}

export interface Targets {
  allNamespaces?: boolean;
  /** Not in the ResourceDistribution API: kube-system and kube-public are targets when listed by name (ObjectSync destinations). */
  systemByName?: boolean;
  includedNamespaces?: NamespaceNameList;
  excludedNamespaces?: NamespaceNameList;
  namespaceLabelSelector?: LabelSelector;
}

export type WritePolicy = 'ignore' | 'overwrite' | 'strict';

/** Which pods of the target namespaces get the distributed image-pull Secret named (pod mutation). */
export type ImagePullSecretInjection = 'Never' | 'MatchingImages' | 'Always';
export const IMAGE_PULL_SECRET_INJECTIONS: readonly ImagePullSecretInjection[] = ['Never', 'MatchingImages', 'Always'];
/** Secret types that hold registry credentials: the only ones that may be injected. */
export const REGISTRY_SECRET_TYPES: readonly string[] = ['kubernetes.io/dockerconfigjson', 'kubernetes.io/dockercfg'];
/** On a pod: the image-pull Secret names we added. */
export const ANNOTATION_INJECTED = 'resource-distributor.io/injected-image-pull-secrets';
/** On a namespace or pod: `disabled` turns injection off for it. */
export const LABEL_INJECT = 'resource-distributor.io/inject';
export const WRITE_POLICIES: readonly WritePolicy[] = ['ignore', 'overwrite', 'strict'];

/** An object of an allowed kind: the template in `spec.resource`, a copy, or a foreign object in its place. */
export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
  stringData?: Record<string, string>;
  type?: string;
  immutable?: boolean;
  [key: string]: unknown;
}

/** An object whose copies follow it (spec.source): read from the cluster, never from the spec. */
export interface SourceRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Keys (or anchored key globs, `*` for any characters) of labels or annotations. */
export interface KeyRules {
  /** Only keys matching one of these (all when absent or empty). */
  include?: readonly string[];
  /** Never keys matching one of these. */
  exclude?: readonly string[];
}

/** Which keys of one map (labels or annotations) reach copies, and what every copy gets besides. */
export interface MetadataRules extends KeyRules {
  /** Set on every copy, over the template's (or source's) value of the same key; include/exclude do not filter them. */
  add?: Readonly<Record<string, string>>;
}

/** An addition to the ResourceDistribution API: which labels and annotations reach copies. */
export interface CopyMetadataRules {
  labels?: MetadataRules;
  annotations?: MetadataRules;
}

/** An addition to the ResourceDistribution API: which keys of the content reach copies, and as what type of Secret. */
export interface CopyDataRules extends KeyRules {
  /** The type of the copies of a Secret (one whose selection leaves out a key its own type requires). */
  secretType?: string;
}

/**
 * An addition to the ResourceDistribution API. Sync (the default): copies are kept equal to the
 * template. CreateOnce: a copy is created where missing, then left to its namespace.
 */
export type SyncPolicy = 'Sync' | 'CreateOnce';
export const SYNC_POLICIES: readonly SyncPolicy[] = ['Sync', 'CreateOnce'];

export interface DistributionSpec {
  /** The inline template; absent when the distribution copies `source`. */
  resource?: Resource;
  source?: SourceRef;
  /** Not in the ResourceDistribution API: an ObjectSync destination's name for the copies of its source. */
  rename?: string;
  targets: Targets;
  writePolicy?: WritePolicy;
  imagePullSecretInjection?: ImagePullSecretInjection;
  copyData?: CopyDataRules;
  copyMetadata?: CopyMetadataRules;
  syncPolicy?: SyncPolicy;
}

/**
 * The namespaced object a distribution stands for when it is not a ResourceDistribution (an
 * ObjectSync). Such an owner cannot own objects in other namespaces: its copies carry an
 * annotation naming it instead of an owner reference, a finalizer on it deletes them, and they go
 * when its source goes.
 */
export interface DistributionOrigin {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  /** Deleted with propagation Orphan: its copies are kept, untied from it, before it goes. */
  keepsCopies?: true;
}

/**
 * A distribution with what it copies at hand: its template, or its source as read (normalised).
 * Planning, rendering, ownership and status work on this, whichever way the content is given.
 */
export interface ResolvedDistribution extends ResourceDistribution {
  spec: DistributionSpec & { resource: Resource };
  /** For kinds other than Secret and ConfigMap, once known: what the API server stores of the template. */
  stored?: StoredForm;
}

/**
 * What the API server makes of a template (a server-side dry run: its defaults, and what
 * admission adds), against which a copy is compared whole: a field added by hand is drift.
 */
export interface StoredForm {
  object: Resource;
  /**
   * Namespaces where a copy we wrote was stored otherwise (a mutation of that namespace's own):
   * their copies are compared by the fields the template sets, or every pass would rewrite them.
   */
  storedOtherwiseIn: ReadonlySet<string>;
}

export const CONDITION_TYPES = [
  'GetResourceFailed',
  'CreateResourceFailed',
  'UpdateResourceFailed',
  'DeleteResourceFailed',
  'ConflictOccurred',
  'NamespaceNotExists',
] as const;
/** Only distributions with spec.source have it, after the six (whose order tools may rely on). */
export const SOURCE_CONDITION = 'SourceNotFound';
/** After SourceNotFound, only while the author recorded at admission may not read the source, or write in a target. */
export const AUTHOR_CONDITION = 'AuthorAccessDenied';
/**
 * After the others, only while what the distribution would copy is never copied: a source that
 * exists but is a Secret of a forbidden type, or a template stored while admission was off or
 * before a rule existed.
 */
export const NOT_DISTRIBUTABLE_CONDITION = 'NotDistributable';
/** The conditions that each report one kind of failure, True while it happens. */
export type FailureConditionType = (typeof CONDITION_TYPES)[number] | typeof SOURCE_CONDITION | typeof AUTHOR_CONDITION | typeof NOT_DISTRIBUTABLE_CONDITION;
/**
 * Last, after every failure condition: the summary that kstatus (Flux, kpt), Argo CD and Karmada
 * read. Ready: the status describes this generation and every target holds a correct copy.
 * Stalled: something fails that no retry of ours will mend; it waits on a change someone makes.
 */
export const READY_CONDITION = 'Ready';
export const STALLED_CONDITION = 'Stalled';
export type SummaryConditionType = typeof READY_CONDITION | typeof STALLED_CONDITION;
export function isSummaryCondition(type: string): type is SummaryConditionType {
  return type === READY_CONDITION || type === STALLED_CONDITION;
}
export type ConditionType = FailureConditionType | SummaryConditionType;

export interface Condition {
  type: ConditionType;
  status: 'True' | 'False';
  reason: string;
  message?: string;
  lastTransitionTime: string;
  /** v1alpha1 spells it singular. */
  failedNamespace?: string[];
}

export interface DistributionStatus {
  desired: number;
  succeeded: number;
  failed: number;
  observedGeneration?: number;
  conditions: Condition[];
}

export interface ResourceDistribution {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta & { name: string };
  spec: DistributionSpec;
  status?: DistributionStatus;
  /** Set by the ObjectSync adapter; a ResourceDistribution has none. */
  origin?: DistributionOrigin;
}

/** What the domain needs to know of a namespace (from a cache). */
export interface NamespaceInfo {
  name: string;
  labels: Record<string, string>;
  /** Terminating namespaces count as missing: nothing can be created in them. */
  terminating: boolean;
}

/** Why a same-named object in a target namespace is not ours to write. */
export type ConflictReason =
  | 'foreign-object' // no `from` annotation naming us, no adopt annotation
  | 'from-changed' // `from` names another distribution (someone edited it, or another distribution owns it)
  | 'owned-by-other' // its controller reference names another owner
  | 'forbidden-type' // an existing Secret of a type we never write over
  | 'strict-blocked'; // writePolicy strict: another target has a conflict, so nothing is written

/**
 * One step of a plan. `object` is always the complete object to send (for update it carries the
 * existing resourceVersion so that a concurrent change makes the write fail and retry).
 */
export type Action =
  | { type: 'create'; namespace: string; object: Resource }
  | { type: 'update'; namespace: string; object: Resource }
  | { type: 'recreate'; namespace: string; object: Resource; existingUid: string }
  /** `resourceVersion`: only if unchanged since it was read (a copy being orphaned must not be deleted from a stale view). */
  | { type: 'delete'; namespace: string; name: string; uid: string; resourceVersion?: string }
  /** syncPolicy CreateOnce: a copy in a namespace no longer targeted, edited there, left to it without our markers (`object` carries its resourceVersion). */
  | { type: 'release'; namespace: string; object: Resource }
  | { type: 'conflict'; namespace: string; reason: ConflictReason }
  | { type: 'namespace-missing'; namespace: string }
  | { type: 'in-sync'; namespace: string };

export type ActionType = Action['type'];

/** An action's kind and namespace: what a plan preview says, without the copy it would write. */
export interface PlannedAction {
  type: ActionType;
  namespace: string;
}

/** The verb of a failed API call, mapped to the condition that reports it. */
export type FailedVerb = 'get' | 'create' | 'update' | 'delete';

/** What happened when an action was applied. `message` must never contain object data. */
export type Outcome =
  | { action: Action; ok: true }
  /**
   * `denied`: not attempted, as the recorded author may not write there (the message says who may
   * not do what); `policy`: refused by an admission policy, retried a few times with backoff.
   */
  | { action: Action; ok: false; verb: FailedVerb; message: string; transient: boolean; denied?: true; policy?: true };
