// Keeping the CRD's conversion webhook pointed at us: what is written, and what is left alone.
import { describe, expect, it } from 'vitest';
import { publishConversion, type ConversionTarget } from '../../../src/k8s/crd-conversion.js';
import type { KubeClient } from '../../../src/k8s/kube-client.js';

const CA = '-----BEGIN CERTIFICATE-----\nours\n-----END CERTIFICATE-----\n';
const CA_B64 = Buffer.from(CA).toString('base64');
const OURS: ConversionTarget = { service: { name: 'rd-conversion', namespace: 'rd', path: '/convert', port: 443 } };
const URL_TARGET: ConversionTarget = { url: 'https://127.0.0.1:9443/convert' };

/** An API server holding one CRD (or none): GET and PUT of it, the PUTs recorded. */
function serverWith(crd: Record<string, unknown> | undefined): { client: KubeClient; puts: unknown[] } {
  const puts: unknown[] = [];
  const client: KubeClient = {
    request: <T>(method: string, _path: string, options?: { body?: unknown }): Promise<T> => {
      if (crd === undefined) return Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
      if (method === 'PUT') puts.push(options?.body);
      return Promise.resolve(structuredClone(crd) as T);
    },
    watch: () => Promise.reject(new Error('not used')),
    connectionsOpened: () => 0,
    keepOpen: () => undefined,
    close: () => undefined,
  };
  return { client, puts };
}

/** Served versions, v1beta1 (when listed) stored, as webhook-config/ has them. */
const versions = (...names: string[]): { name: string; served: boolean; storage: boolean }[] => names.map((name) => ({ name, served: true, storage: name === 'v1beta1' }));
const webhook = (clientConfig: Record<string, unknown>): Record<string, unknown> => ({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig } });
const ourService = { name: 'rd-conversion', namespace: 'rd', path: '/convert', port: 443 };

describe('publishConversion', () => {
  it.each<[string, Record<string, unknown> | undefined, ConversionTarget, string, unknown]>([
    ['no CRD', undefined, OURS, 'not-needed', undefined],
    ['a CRD serving v1alpha1 only (nothing to convert)', { spec: { versions: versions('v1alpha1') } }, OURS, 'not-needed', undefined],
    ['our Service already, with our CA', { spec: { versions: versions('v1alpha1', 'v1beta1'), conversion: webhook({ service: ourService, caBundle: CA_B64 }) } }, OURS, 'unchanged', undefined],
    [
      'our Service without a caBundle (as the chart installs it): the caBundle is filled in',
      { spec: { versions: versions('v1alpha1', 'v1beta1'), conversion: webhook({ service: ourService }) } },
      OURS,
      'changed',
      webhook({ service: ourService, caBundle: CA_B64 }),
    ],
    [
      "another address (OpenKruise's Service): left alone",
      { spec: { versions: versions('v1alpha1', 'v1beta1'), conversion: webhook({ service: { name: 'kruise-webhook-service', namespace: 'kruise-system', path: '/convert' }, caBundle: 'theirs' }) } },
      OURS,
      'elsewhere',
      undefined,
    ],
    [
      "a URL (local mode) takes the CRD over from another address",
      { spec: { versions: versions('v1alpha1', 'v1beta1'), conversion: webhook({ service: ourService, caBundle: 'old' }) } },
      URL_TARGET,
      'changed',
      webhook({ url: URL_TARGET.url, caBundle: CA_B64 }),
    ],
  ])('%s', async (_name, crd, target, result, written) => {
    const { client, puts } = serverWith(crd);
    expect(await publishConversion(client, target, CA)).toBe(result);
    expect(puts.map((body) => (body as { spec: { conversion: unknown } }).spec.conversion)).toEqual(written === undefined ? [] : [written]);
  });

  it.each<[string, Record<string, unknown>]>([
    [
      'our Service with our CA over a CRD storing v1alpha1 (the chart upgraded over a release before v1beta1)',
      { spec: { versions: [{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }], conversion: webhook({ service: ourService, caBundle: CA_B64 }) } },
    ],
    [
      'our Service without a caBundle over a CRD storing v1alpha1',
      { spec: { versions: [{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }], conversion: webhook({ service: ourService }) } },
    ],
  ])('%s: v1beta1 becomes the storage version once we convert', async (_name, crd) => {
    const { client, puts } = serverWith(crd);
    expect(await publishConversion(client, OURS, CA)).toBe('changed');
    const written = puts as { spec: { versions: unknown; conversion: unknown } }[];
    expect(written.map((body) => body.spec.versions)).toEqual([versions('v1alpha1', 'v1beta1')]);
    expect(written.map((body) => body.spec.conversion)).toEqual([webhook({ service: ourService, caBundle: CA_B64 })]);
  });

  it.each<[string, Record<string, unknown>, string, unknown[]]>([
    [
      'our Service without a caBundle: the caBundle is filled in, v1alpha1 stays stored',
      { spec: { versions: [{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }], conversion: webhook({ service: ourService }) } },
      'changed',
      [{ versions: [{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }], conversion: webhook({ service: ourService, caBundle: CA_B64 }) }],
    ],
    [
      'our Service with our CA: nothing written',
      { spec: { versions: [{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }], conversion: webhook({ service: ourService, caBundle: CA_B64 }) } },
      'unchanged',
      [],
    ],
    ['a CRD storing v1beta1 already: nothing written', { spec: { versions: versions('v1alpha1', 'v1beta1'), conversion: webhook({ service: ourService, caBundle: CA_B64 }) } }, 'unchanged', []],
  ])('not yet allowed to store v1beta1 (no replica known to convert), over a CRD storing v1alpha1: %s', async (_name, crd, result, written) => {
    const { client, puts } = serverWith(crd);
    expect(await publishConversion(client, OURS, CA, { store: false })).toBe(result);
    expect(puts.map((body) => (body as { spec: unknown }).spec)).toEqual(written);
  });

  it("another address's CRD storing v1alpha1 is left alone", async () => {
    const { client, puts } = serverWith({
      spec: { versions: [{ name: 'v1alpha1', served: true, storage: true }, { name: 'v1beta1', served: true, storage: false }], conversion: webhook({ service: { name: 'kruise-webhook-service', namespace: 'kruise-system' }, caBundle: 'theirs' }) },
    });
    expect(await publishConversion(client, OURS, CA)).toBe('elsewhere');
    expect(puts).toEqual([]);
  });

  it('takes another address over only when asked to', async () => {
    const { client, puts } = serverWith({ spec: { versions: versions('v1beta1'), conversion: webhook({ url: 'https://elsewhere/convert' }) } });
    expect(await publishConversion(client, OURS, CA, { takeOver: true })).toBe('changed');
    expect(puts).toHaveLength(1);
  });
});
