// What the checker sees of the cluster: plain data read after a quiet period (test/soak/snapshot.ts
// reads it), so that the checks stay pure and can be tested with tables.

export type CopyKind = 'Secret' | 'ConfigMap';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** A Secret or ConfigMap of a name the soak uses (copies, sources, foreign objects). */
export interface ObjectSnapshot {
  kind: CopyKind;
  namespace: string;
  name: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerReference[];
  /** Secret: base64 values as the API returns them; ConfigMap: plain values. */
  data: Record<string, string>;
  /** Secrets only. */
  type?: string;
}

export interface NamespaceSnapshot {
  name: string;
  labels: Record<string, string>;
  terminating: boolean;
}

export interface NamespaceEntry {
  name?: string;
  pattern?: string;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface Targets {
  allNamespaces?: boolean;
  includedNamespaces?: { list?: NamespaceEntry[] };
  excludedNamespaces?: { list?: NamespaceEntry[] };
  namespaceLabelSelector?: LabelSelector;
}

export interface Template {
  apiVersion: 'v1';
  kind: CopyKind;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
  type?: string;
}

export interface SourceRef {
  apiVersion: 'v1';
  kind: CopyKind;
  namespace: string;
  name: string;
}

export interface Condition {
  type: string;
  status: 'True' | 'False';
  reason?: string;
  message?: string;
  failedNamespace?: string[];
}

export interface DistributionStatus {
  observedGeneration?: number;
  desired?: number;
  succeeded?: number;
  failed?: number;
  conditions?: Condition[];
}

export interface DistributionSnapshot {
  name: string;
  uid: string;
  generation: number;
  deleting: boolean;
  spec: { resource?: Template; source?: SourceRef; targets: Targets; writePolicy?: 'ignore' | 'overwrite' | 'strict' };
  status?: DistributionStatus;
}

export interface ObjectSyncDestination {
  namespace: string;
  name?: string;
}

export interface ObjectSyncCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
}

export interface ObjectSyncSnapshot {
  namespace: string;
  name: string;
  uid: string;
  generation: number;
  deleting: boolean;
  spec: { source: { group: string; kind: CopyKind; name: string; namespace?: string }; destinations: ObjectSyncDestination[] };
  status?: { observedGeneration?: number; desired?: number; succeeded?: number; failed?: number; conditions?: ObjectSyncCondition[] };
}

export interface EventSnapshot {
  reason: string;
  message: string;
  involved: string;
}

export interface ClusterSnapshot {
  namespaces: NamespaceSnapshot[];
  distributions: DistributionSnapshot[];
  objectSyncs: ObjectSyncSnapshot[];
  objects: ObjectSnapshot[];
  events: EventSnapshot[];
}
