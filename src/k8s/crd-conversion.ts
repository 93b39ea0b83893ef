// The ResourceDistribution CRD's conversion webhook (spec.conversion): the API server calls it to
// read or write a distribution in the version it is not stored in. Kept pointing at us, with the
// CA that signs our serving certificate, the way the webhook configurations' caBundles are.
import { V1BETA1 } from '../domain/conversion.js';
import { GROUP, PLURAL } from '../domain/types.js';
import { isConflict, isNotFound } from './errors.js';
import type { KubeClient } from './kube-client.js';

export const DISTRIBUTION_CRD = `${PLURAL}.${GROUP}`;
const CRD_PATH = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${DISTRIBUTION_CRD}`;
const CONFLICT_RETRIES = 5;

/** How the API server reaches the conversion webhook: a Service (in a cluster) or a URL (local mode). */
export type ConversionTarget = { service: { name: string; namespace: string; path: string; port: number } } | { url: string };

interface Crd {
  metadata?: { resourceVersion?: string };
  spec?: {
    versions?: { name: string; served?: boolean }[];
    conversion?: { strategy?: string; webhook?: { clientConfig?: Record<string, unknown>; conversionReviewVersions?: string[] } };
  };
}

function conversionOf(target: ConversionTarget, caBundle: string): NonNullable<NonNullable<Crd['spec']>['conversion']> {
  return { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { ...target, caBundle } } };
}

/** Whether the client configuration reaches `target` (field by field: the API server orders keys its own way). */
function reaches(config: Record<string, unknown>, target: ConversionTarget): boolean {
  if ('url' in target) return config.url === target.url && config.service === undefined;
  const service = config.service as Record<string, unknown> | undefined;
  return config.url === undefined && Object.entries(target.service).every(([key, value]) => service?.[key] === value);
}

/** Whether the CRD already converts through `target` with this caBundle. */
function converts(current: Crd, target: ConversionTarget, caBundle: string): boolean {
  const conversion = current.spec?.conversion;
  const config = conversion?.webhook?.clientConfig;
  const versions = conversion?.webhook?.conversionReviewVersions ?? [];
  return conversion?.strategy === 'Webhook' && config?.caBundle === caBundle && versions.includes('v1') && reaches(config, target);
}

/**
 * Makes the CRD's conversion webhook `target` with `caBundlePem` (read, compare, replace with the
 * read resourceVersion; a concurrent change is retried). Leaves alone a CRD that serves v1alpha1
 * only (OpenKruise's older CRD: nothing to convert) and a missing one. True when it changed it.
 */
export async function publishConversion(client: KubeClient, target: ConversionTarget, caBundlePem: string): Promise<boolean> {
  const caBundle = Buffer.from(caBundlePem, 'utf8').toString('base64');
  for (let attempt = 1; ; attempt++) {
    let crd: Crd;
    try {
      crd = await client.request<Crd>('GET', CRD_PATH);
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    if (!(crd.spec?.versions ?? []).some((version) => version.name === V1BETA1 && version.served !== false)) return false;
    if (converts(crd, target, caBundle)) return false;
    crd.spec = { ...crd.spec, conversion: conversionOf(target, caBundle) };
    try {
      await client.request('PUT', CRD_PATH, { body: crd });
      return true;
    } catch (error) {
      if (!isConflict(error) || attempt >= CONFLICT_RETRIES) throw error;
    }
  }
}
