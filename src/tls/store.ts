import type { CertificateBundle } from './certificates.js';

export interface StoredBundle {
  bundle: CertificateBundle;
  /** Opaque version for optimistic concurrency (a resourceVersion); absent for files. */
  version?: string;
}

/** Where the certificates live between restarts, shared by every replica in a cluster. */
export interface CertificateStore {
  /** What is stored now; undefined when nothing is (or it is incomplete). */
  load(): Promise<StoredBundle | undefined>;
  /**
   * Stores `bundle` unless someone else stored one since `version` was read (or, with no
   * version, since we found nothing): then answers 'conflict' and the caller reloads.
   */
  save(bundle: CertificateBundle, version: string | undefined): Promise<StoredBundle | 'conflict'>;
}

/** The file (and Secret data key) names of a stored bundle. */
export const BUNDLE_KEYS = {
  servingCert: 'tls.crt',
  servingKey: 'tls.key',
  trust: 'ca.crt',
  caCert: 'ca-signer.crt',
  caKey: 'ca-signer.key',
} as const;

export function bundleFromEntries(get: (key: string) => string | undefined): CertificateBundle | undefined {
  const servingCert = get(BUNDLE_KEYS.servingCert);
  const servingKey = get(BUNDLE_KEYS.servingKey);
  const trust = get(BUNDLE_KEYS.trust);
  const caCert = get(BUNDLE_KEYS.caCert);
  const caKey = get(BUNDLE_KEYS.caKey);
  if (!servingCert || !servingKey || !trust || !caCert || !caKey) return undefined;
  return { serving: { cert: servingCert, key: servingKey }, trust, ca: { cert: caCert, key: caKey } };
}

export function bundleEntries(bundle: CertificateBundle): Record<string, string> {
  return {
    [BUNDLE_KEYS.servingCert]: bundle.serving.cert,
    [BUNDLE_KEYS.servingKey]: bundle.serving.key,
    [BUNDLE_KEYS.trust]: bundle.trust,
    [BUNDLE_KEYS.caCert]: bundle.ca.cert,
    [BUNDLE_KEYS.caKey]: bundle.ca.key,
  };
}
