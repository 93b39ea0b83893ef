// The names the product promises (README: "What a copy looks like", "Reading status"), written out
// here on purpose: the soak's checker must not take them from src/, or a wrong name there would
// agree with itself.
export const ANNOTATION_FROM = 'kruise.io/resourcedistribution.resource.from';
export const ANNOTATION_HASH = 'kruise.io/resourcedistribution.resource.hashcode';
export const ANNOTATION_TIMESTAMP = 'kruise.io/resourcedistribution.resource.distributed.timestamp';
export const LABEL_DISTRIBUTION = 'resource-distributor.io/distribution';

/** The controller reference of a copy written now (docs/concepts/copies.md). */
export const RD_OWNER_API_VERSION = 'apps.kruise.io/v1beta1';
/** Those of copies that are ours: one naming v1alpha1 is left as it is. */
export const RD_OWNER_API_VERSIONS: readonly string[] = [RD_OWNER_API_VERSION, 'apps.kruise.io/v1alpha1'];
export const RD_KIND = 'ResourceDistribution';

/** The six conditions of v1alpha1, in the order status always holds them; then SourceNotFound for spec.source; Ready and Stalled last. */
export const CONDITION_ORDER = [
  'GetResourceFailed',
  'CreateResourceFailed',
  'UpdateResourceFailed',
  'DeleteResourceFailed',
  'ConflictOccurred',
  'NamespaceNotExists',
] as const;
export const SOURCE_CONDITION = 'SourceNotFound';

/** Never targeted, whatever the targets say (besides the controller's own namespace). */
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

/** An ObjectSync's copies name it, as `<namespace>/<name>` (README: "ObjectSync"). */
export const ANNOTATION_OBJECT_SYNC = 'resource-distributor.io/object-sync';
/** Consent to be taken over in place by the distribution it names (README: "adoption"). */
export const ANNOTATION_ADOPT = 'resource-distributor.io/adopt';
export const OBJECT_SYNC = { group: 'sync.rustrial.org', version: 'v1alpha1', plural: 'objectsyncs' } as const;
