// The RBAC rules the code needs, in one place: test/e2e/reconcile-rbac.test.ts proves the
// controller's, test/e2e/admission-tls.test.ts the admission and TLS ones, and
// test/unit/admission/manifests.test.ts holds webhook-config/rbac.yaml to exactly these.
import type { V1PolicyRule } from '@kubernetes/client-node';

/** Cluster-wide rules of the reconciler (caches, copies, status, Events). */
export const CONTROLLER_RULES: V1PolicyRule[] = [
  { apiGroups: ['apps.kruise.io'], resources: ['resourcedistributions'], verbs: ['list', 'watch'] },
  { apiGroups: ['apps.kruise.io'], resources: ['resourcedistributions/status'], verbs: ['patch'] },
  { apiGroups: ['apps.kruise.io'], resources: ['resourcedistributions/finalizers'], verbs: ['update'] },
  { apiGroups: ['sync.rustrial.org'], resources: ['objectsyncs'], verbs: ['list', 'watch', 'patch'] },
  { apiGroups: ['sync.rustrial.org'], resources: ['objectsyncs/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];

/** Cluster-wide rules of the admission side: the author's access check, the caBundle (read, then replace). */
export function admissionRules(webhookConfigurations: readonly string[], mutating: readonly string[] = []): V1PolicyRule[] {
  return [
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'], verbs: ['list', 'watch'] },
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['validatingwebhookconfigurations'],
      resourceNames: [...webhookConfigurations],
      verbs: ['get', 'update'],
    },
    ...(mutating.length === 0
      ? []
      : [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['mutatingwebhookconfigurations'], resourceNames: [...mutating], verbs: ['get', 'update'] }]),
    // The conversion webhook's caBundle (spec.conversion of the ResourceDistribution CRD).
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], resourceNames: ['resourcedistributions.apps.kruise.io'], verbs: ['get', 'update'] },
  ];
}

/** Rules in our own namespace: the leader Lease, the TLS Secret (read, created once, replaced), its own pod. */
export function ownNamespaceRules(lease: string, tlsSecret: string): V1PolicyRule[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [lease], verbs: ['get', 'update'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [tlsSecret], verbs: ['get', 'update'] },
    // Its own pod's label, which puts it in the conversion Service (src/k8s/conversion-membership.ts).
    { apiGroups: [''], resources: ['pods'], verbs: ['patch'] },
  ];
}
