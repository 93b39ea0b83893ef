import type { AdmissionregistrationV1WebhookClientConfig, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { LABEL_INJECT } from '../domain/types.js';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import type { KubeClient } from './kube-client.js';

/** Where the admission server answers each webhook. */
export const WEBHOOK_PATHS = {
  distributions: '/validate/resourcedistributions',
  objectSyncs: '/validate/objectsyncs',
  namespaces: '/generate/namespaces',
  pods: '/generate/pods',
  podMutation: '/mutate/pods',
  distributionAuthors: '/mutate/resourcedistributions',
  /** Not an admission webhook: the CRD's spec.conversion. */
  conversion: '/convert',
} as const;

/** How long the API server waits for each webhook; the admission app answers 1 s before that. */
export const WEBHOOK_TIMEOUT_SECONDS = {
  distributions: 5,
  namespaces: 3,
  pods: 3,
  podMutation: 2,
} as const;

export interface WebhookConfigurationNames {
  distributions: string;
  namespaces: string;
  /**
   * The MutatingWebhookConfiguration (image-pull Secret injection, and the authors of
   * distributions); none registered when unset, and then no author is recorded.
   */
  pods?: string;
}

export interface WebhookDefinitionOptions {
  names: WebhookConfigurationNames;
  /** Our own namespace, never sent to the namespace webhook. */
  ownNamespace: string;
  /** How the API server reaches a path: `{url}` in local mode, `{service}` in a cluster. */
  clientConfig: (path: string) => AdmissionregistrationV1WebhookClientConfig;
}

/**
 * The two ValidatingWebhookConfigurations. webhook-config/ holds the same settings as YAML for a
 * cluster install (a unit test keeps both in step); local mode creates these with a URL.
 */
export function webhookConfigurations(options: WebhookDefinitionOptions): V1ValidatingWebhookConfiguration[] {
  const common = { admissionReviewVersions: ['v1'], matchPolicy: 'Equivalent' };
  return [validationConfiguration(options, common), generationConfiguration(options, common)];
}

type CommonWebhookFields = { admissionReviewVersions: string[]; matchPolicy: string };

/** The webhooks that may refuse a write, so they fail closed: a bad distribution or ObjectSync is never stored. */
function validationConfiguration(options: WebhookDefinitionOptions, common: CommonWebhookFields): V1ValidatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: options.names.distributions, labels: { 'app.kubernetes.io/name': 'resource-distributor' } },
    webhooks: [
      {
        ...common,
        name: 'resourcedistributions.resource-distributor.io',
        clientConfig: options.clientConfig(WEBHOOK_PATHS.distributions),
        rules: [
          {
            apiGroups: ['apps.kruise.io'],
            apiVersions: ['v1alpha1', 'v1beta1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['resourcedistributions'],
            scope: 'Cluster',
          },
        ],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS.distributions,
      },
      {
        ...common,
        name: 'objectsyncs.resource-distributor.io',
        clientConfig: options.clientConfig(WEBHOOK_PATHS.objectSyncs),
        rules: [
          {
            apiGroups: ['sync.rustrial.org'],
            apiVersions: ['v1alpha1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['objectsyncs'],
            scope: 'Namespaced',
          },
        ],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS.distributions,
      },
    ],
  };
}

/** The webhooks that only start copies early (new namespaces, new pods): they never refuse anything, so they fail open. */
function generationConfiguration(options: WebhookDefinitionOptions, common: CommonWebhookFields): V1ValidatingWebhookConfiguration {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: options.names.namespaces, labels: { 'app.kubernetes.io/name': 'resource-distributor' } },
    webhooks: [
      {
        ...common,
        name: 'namespaces.resource-distributor.io',
        clientConfig: options.clientConfig(WEBHOOK_PATHS.namespaces),
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['namespaces'], scope: 'Cluster' }],
        // Never block namespace creation: if we are down, the periodic sweep catches up.
        failurePolicy: 'Ignore',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS.namespaces,
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [options.ownNamespace, 'kube-system', 'kube-public'] },
          ],
        },
      },
      {
        ...common,
        name: 'pods.resource-distributor.io',
        clientConfig: options.clientConfig(WEBHOOK_PATHS.pods),
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }],
        // Never block a pod: without us it starts as it would have before (its copies come a moment later).
        failurePolicy: 'Ignore',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS.pods,
        namespaceSelector: {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [options.ownNamespace, 'kube-system', 'kube-public'] },
          ],
        },
      },
    ],
  };
}

/** The label that opts a namespace or a pod out of image-pull Secret injection. */
const OPT_OUT = { key: LABEL_INJECT, operator: 'NotIn', values: ['disabled'] };

/**
 * The MutatingWebhookConfiguration, when it is named: pod mutation (image-pull Secrets), and the
 * author of each distribution's spec recorded in an annotation (fails closed like validation: a
 * distribution admitted without its author would act with the controller's rights alone).
 */
export function mutatingWebhookConfigurations(options: WebhookDefinitionOptions): V1MutatingWebhookConfiguration[] {
  const name = options.names.pods;
  if (name === undefined) return [];
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name, labels: { 'app.kubernetes.io/name': 'resource-distributor' } },
      webhooks: [
        {
          admissionReviewVersions: ['v1'],
          matchPolicy: 'Equivalent',
          name: 'pods.mutate.resource-distributor.io',
          clientConfig: options.clientConfig(WEBHOOK_PATHS.podMutation),
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' }],
          // A pod is never held up by us: without the webhook it is created as it would have been.
          failurePolicy: 'Ignore',
          sideEffects: 'None',
          reinvocationPolicy: 'IfNeeded',
          timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS.podMutation,
          namespaceSelector: {
            matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [options.ownNamespace, 'kube-system', 'kube-public'] }, OPT_OUT],
          },
          objectSelector: { matchExpressions: [OPT_OUT] },
        },
        {
          admissionReviewVersions: ['v1'],
          matchPolicy: 'Equivalent',
          name: 'resourcedistributions.mutate.resource-distributor.io',
          clientConfig: options.clientConfig(WEBHOOK_PATHS.distributionAuthors),
          rules: [
            { apiGroups: ['apps.kruise.io'], apiVersions: ['v1alpha1', 'v1beta1'], operations: ['CREATE', 'UPDATE'], resources: ['resourcedistributions'], scope: 'Cluster' },
            { apiGroups: ['sync.rustrial.org'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['objectsyncs'], scope: 'Namespaced' },
          ],
          failurePolicy: 'Fail',
          sideEffects: 'None',
          // A later mutating webhook that touched the annotation calls us again: the author is put back.
          reinvocationPolicy: 'IfNeeded',
          timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS.distributions,
        },
      ],
    },
  ];
}

function toBase64(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

const CONFLICT_RETRIES = 5;
export type ConfigurationKind = 'validatingwebhookconfigurations' | 'mutatingwebhookconfigurations';
const collection = (kind: ConfigurationKind): string => `/apis/admissionregistration.k8s.io/v1/${kind}`;
const configurationPath = (name: string, kind: ConfigurationKind = 'validatingwebhookconfigurations'): string => `${collection(kind)}/${encodeURIComponent(name)}`;
type AnyConfiguration = V1ValidatingWebhookConfiguration | V1MutatingWebhookConfiguration;
const kindOf = (body: AnyConfiguration): ConfigurationKind => (body.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations');

async function patchOne(client: KubeClient, name: string, caBundle: string, kind: ConfigurationKind): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const current = await client.request<AnyConfiguration>('GET', configurationPath(name, kind));
    const webhooks = current.webhooks ?? [];
    if (webhooks.every((w) => w.clientConfig.caBundle === caBundle)) return false;
    for (const webhook of webhooks) webhook.clientConfig.caBundle = caBundle;
    try {
      await client.request('PUT', configurationPath(name, kind), { body: current });
      return true;
    } catch (error) {
      if (!isConflict(error) || attempt >= CONFLICT_RETRIES) throw error;
    }
  }
}

/**
 * Puts `caBundlePem` into every webhook of the named configurations (read, compare, replace with
 * the read resourceVersion; a concurrent change is retried). Returns the names it changed.
 */
export async function patchCaBundle(client: KubeClient, names: readonly string[], caBundlePem: string, kind: ConfigurationKind = 'validatingwebhookconfigurations'): Promise<string[]> {
  const caBundle = toBase64(caBundlePem);
  const changed: string[] = [];
  for (const name of names) {
    if (await patchOne(client, name, caBundle, kind)) changed.push(name);
  }
  return changed;
}

/** Creates the configurations, or replaces those that exist (local mode owns them outright). */
export async function applyWebhookConfigurations(client: KubeClient, configurations: readonly AnyConfiguration[]): Promise<void> {
  for (const body of configurations) {
    const name = body.metadata?.name ?? '';
    const kind = kindOf(body);
    try {
      await client.request('POST', collection(kind), { body });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      const current = await client.request<AnyConfiguration>('GET', configurationPath(name, kind));
      await client.request('PUT', configurationPath(name, kind), {
        body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } },
      });
    }
  }
}

export async function deleteWebhookConfigurations(client: KubeClient, names: readonly string[], kind: ConfigurationKind = 'validatingwebhookconfigurations'): Promise<void> {
  for (const name of names) {
    try {
      await client.request('DELETE', configurationPath(name, kind));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
