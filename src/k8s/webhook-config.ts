import {
  AdmissionregistrationV1Api,
  type AdmissionregistrationV1WebhookClientConfig,
  type KubeConfig,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';

/** Where the admission server answers each webhook. */
export const WEBHOOK_PATHS = {
  distributions: '/validate/resourcedistributions',
  namespaces: '/generate/namespaces',
} as const;

/** How long the API server waits for each webhook; the admission app answers 1 s before that. */
export const WEBHOOK_TIMEOUT_SECONDS = {
  distributions: 5,
  namespaces: 3,
} as const;

export interface WebhookConfigurationNames {
  distributions: string;
  namespaces: string;
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
  return [
    {
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
              apiVersions: ['v1alpha1'],
              operations: ['CREATE', 'UPDATE'],
              resources: ['resourcedistributions'],
              scope: 'Cluster',
            },
          ],
          failurePolicy: 'Fail',
          sideEffects: 'None',
          timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS.distributions,
        },
      ],
    },
    {
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
      ],
    },
  ];
}

function toBase64(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

const CONFLICT_RETRIES = 5;

async function patchOne(api: AdmissionregistrationV1Api, name: string, caBundle: string): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    const current = await api.readValidatingWebhookConfiguration({ name });
    const webhooks = current.webhooks ?? [];
    if (webhooks.every((w) => w.clientConfig.caBundle === caBundle)) return false;
    for (const webhook of webhooks) webhook.clientConfig.caBundle = caBundle;
    try {
      await api.replaceValidatingWebhookConfiguration({ name, body: current });
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
export async function patchCaBundle(kubeConfig: KubeConfig, names: readonly string[], caBundlePem: string): Promise<string[]> {
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  const caBundle = toBase64(caBundlePem);
  const changed: string[] = [];
  for (const name of names) {
    if (await patchOne(api, name, caBundle)) changed.push(name);
  }
  return changed;
}

/** Creates the configurations, or replaces those that exist (local mode owns them outright). */
export async function applyWebhookConfigurations(kubeConfig: KubeConfig, configurations: readonly V1ValidatingWebhookConfiguration[]): Promise<void> {
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  for (const body of configurations) {
    const name = body.metadata?.name ?? '';
    try {
      await api.createValidatingWebhookConfiguration({ body });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
      const current = await api.readValidatingWebhookConfiguration({ name });
      await api.replaceValidatingWebhookConfiguration({
        name,
        body: { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } },
      });
    }
  }
}

export async function deleteWebhookConfigurations(kubeConfig: KubeConfig, names: readonly string[]): Promise<void> {
  const api = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
  for (const name of names) {
    try {
      await api.deleteValidatingWebhookConfiguration({ name });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
