// The kustomize generator's config of the documentation's complete use case, for the generator's tables.

/** The documentation's complete use case (rdGenerator.yaml), with `changes` merged at the top level. */
export function documented(changes: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ResourceDistributionGenerator',
    metadata: { name: 'rdname', annotations: { 'config.kubernetes.io/function': 'exec:\n  path: ./resourcedistributiongenerator\n' } },
    resource: {
      resourceKind: 'ConfigMap',
      resourceName: 'cmname',
      files: ['application.properties'],
      literals: ['JAVA_HOME=/opt/java/jdk'],
      resourceOptions: { annotations: { dashboard: '1' } },
    },
    options: { labels: { 'app.kubernetes.io/name': 'app1' } },
    targets: { includedNamespaces: ['ns-1'], namespaceLabelSelector: { matchLabels: { group: 'test' } } },
    ...changes,
  };
}
