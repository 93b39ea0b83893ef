// The ResourceDistribution CRD's conversion webhook (spec.conversion): the API server calls it to
// read or write a distribution in the version it is not stored in. Kept pointing at us, with the
// CA that signs our serving certificate, the way the webhook configurations' caBundles are; and,
// once conversions reach us, v1beta1 the version it stores (an upgrade over a CRD storing v1alpha1
// keeps it so until then: a v1alpha1 write stored as v1beta1 needs a conversion).
import { STORAGE_VERSION, V1BETA1 } from '../domain/conversion.js';
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
    versions?: { name: string; served?: boolean; storage?: boolean }[];
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

/** Whether the CRD stores STORAGE_VERSION (not v1alpha1, as a CRD an upgrade kept may). */
const storesOurs = (current: Crd): boolean => current.spec?.versions?.find((version) => version.storage === true)?.name === STORAGE_VERSION;

async function readCrd(client: KubeClient): Promise<Crd | undefined> {
  try {
    return await client.request<Crd>('GET', CRD_PATH);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** What publishConversion did: `elsewhere` when the CRD converts through another address, which is left alone. */
export type ConversionPublished = 'changed' | 'unchanged' | 'elsewhere' | 'not-needed';

/** Whether the CRD's conversion already names our Service (whatever its caBundle). */
function namesService(current: Crd, target: ConversionTarget): boolean {
  if ('url' in target) return true;
  const service = current.spec?.conversion?.webhook?.clientConfig?.service as Record<string, unknown> | undefined;
  return current.spec?.conversion?.strategy === 'Webhook' && service?.name === target.service.name && service.namespace === target.service.namespace;
}

/** What to do with the CRD as read: undefined when its conversion is to be written. */
function decide(crd: Crd | undefined, target: ConversionTarget, caBundle: string, { takeOver, store }: { takeOver: boolean; store: boolean }): ConversionPublished | undefined {
  if (crd === undefined || !(crd.spec?.versions ?? []).some((version) => version.name === V1BETA1 && version.served !== false)) return 'not-needed';
  if (converts(crd, target, caBundle) && (storesOurs(crd) || !store)) return 'unchanged';
  return takeOver || namesService(crd, target) ? undefined : 'elsewhere';
}

/**
 * Makes the CRD's conversion webhook `target` with `caBundlePem`, storing STORAGE_VERSION (read, compare, replace with the
 * read resourceVersion; a concurrent change is retried). A URL target (local mode) takes the CRD
 * over, and a Service target with `takeOver`; otherwise a Service target only fills in the caBundle
 * where the CRD already names that Service, so that an address someone else serves (OpenKruise's manager still running) is never taken from
 * them. Leaves alone a CRD that serves v1alpha1 only (OpenKruise's older CRD: nothing to convert)
 * and a missing one. With `store: false` the stored version is left as it is: a v1alpha1 write
 * into v1beta1 storage needs a conversion, so storage moves only once conversions are known to
 * reach a replica that answers them.
 */
export async function publishConversion(client: KubeClient, target: ConversionTarget, caBundlePem: string, options: { takeOver?: boolean; store?: boolean } = {}): Promise<ConversionPublished> {
  const caBundle = Buffer.from(caBundlePem, 'utf8').toString('base64');
  const store = options.store !== false;
  for (let attempt = 1; ; attempt++) {
    const crd = await readCrd(client);
    const found = decide(crd, target, caBundle, { takeOver: options.takeOver === true, store });
    if (found !== undefined || crd === undefined) return found ?? 'not-needed';
    const versions = (crd.spec?.versions ?? []).map((version) => (store ? { ...version, storage: version.name === STORAGE_VERSION } : version));
    crd.spec = { ...crd.spec, versions, conversion: conversionOf(target, caBundle) };
    try {
      await client.request('PUT', CRD_PATH, { body: crd });
      return 'changed';
    } catch (error) {
      if (!isConflict(error) || attempt >= CONFLICT_RETRIES) throw error;
    }
  }
}
