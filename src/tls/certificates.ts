import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';

/** A PEM certificate and its PEM private key. */
export interface KeyPair {
  cert: string;
  key: string;
}

/**
 * Everything the admission server needs for TLS. `ca` signs future serving certificates; `trust`
 * is what the API server must trust (the caBundle): the current CA, plus the previous one while a
 * CA rollover is in progress.
 */
export interface CertificateBundle {
  ca: KeyPair;
  serving: KeyPair;
  trust: string;
}

/** The names the serving certificate must be valid for. */
export interface Identity {
  dnsNames: readonly string[];
  ips: readonly string[];
}

export interface CertificateInfo {
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  fingerprint: string;
  dnsNames: string[];
  ips: string[];
}

// Tolerates a little clock difference between replicas and the API server.
const BACKDATE_MS = 5 * 60_000;
// Same key type for CA and leaf: selfsigned imports the CA key with the leaf's key type.
const KEY_OPTIONS = { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' } as const;

// Loaded when a certificate is made, not at start: the X.509 library and its ASN.1 modules hold
// 3-7 MiB of memory, and a pod whose certificates are current (kept in their Secret or given by
// cert-manager) never makes one.
async function generate(...args: Parameters<typeof import('selfsigned').generate>): ReturnType<typeof import('selfsigned').generate> {
  const selfsigned = await import('selfsigned');
  return selfsigned.generate(...args);
}

export async function generateCa(now: Date, validityMs: number): Promise<KeyPair> {
  const pems = await generate([{ name: 'commonName', value: `resource-distributor-ca@${Math.floor(now.getTime() / 1000)}` }], {
    ...KEY_OPTIONS,
    notBeforeDate: new Date(now.getTime() - BACKDATE_MS),
    notAfterDate: new Date(now.getTime() + validityMs),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: normalizePem(pems.cert), key: normalizePem(pems.private) };
}

/** A serving certificate signed by `ca`, never valid beyond the CA itself. */
export async function generateServing(ca: KeyPair, identity: Identity, now: Date, validityMs: number): Promise<KeyPair> {
  const caNotAfter = certificateInfo(ca.cert).notAfter.getTime();
  const commonName = identity.dnsNames[0] ?? identity.ips[0] ?? 'resource-distributor';
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    ...KEY_OPTIONS,
    notBeforeDate: new Date(now.getTime() - BACKDATE_MS),
    notAfterDate: new Date(Math.min(now.getTime() + validityMs, caNotAfter)),
    ca: { key: ca.key, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...identity.dnsNames.map((value) => ({ type: 2 as const, value })), ...identity.ips.map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  return { cert: normalizePem(pems.cert), key: normalizePem(pems.private) };
}

/** One trailing newline, so that concatenated PEM blocks stay well separated. */
function normalizePem(pem: string): string {
  return `${pem.trim()}\n`;
}

export function splitPem(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)?.map((pem) => `${pem}\n`) ?? [];
}

function altNames(x509: X509Certificate, prefix: string): string[] {
  return (x509.subjectAltName ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.startsWith(prefix))
    .map((entry) => entry.slice(prefix.length));
}

export function certificateInfo(pem: string): CertificateInfo {
  const x509 = new X509Certificate(pem);
  return {
    subject: x509.subject,
    issuer: x509.issuer,
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    fingerprint: x509.fingerprint256,
    dnsNames: altNames(x509, 'DNS:'),
    ips: altNames(x509, 'IP Address:'),
  };
}

/** Does the private key belong to the certificate? False for anything unreadable. */
export function keyMatches(pair: KeyPair): boolean {
  try {
    const fromKey = createPublicKey(createPrivateKey(pair.key)).export({ type: 'spki', format: 'der' });
    const fromCert = new X509Certificate(pair.cert).publicKey.export({ type: 'spki', format: 'der' });
    return fromKey.equals(fromCert);
  } catch {
    return false;
  }
}

/** Was `cert` signed by `ca` (name chaining and signature)? */
export function isIssuedBy(cert: string, ca: string): boolean {
  const leaf = new X509Certificate(cert);
  const issuer = new X509Certificate(ca);
  return leaf.checkIssued(issuer) && leaf.verify(issuer.publicKey);
}

/** The Service DNS names (and loopback in local mode) the serving certificate covers. */
/**
 * The Service the CRD's conversion webhook calls: it also routes to pods that are not ready yet,
 * since a pod's caches cannot sync while its list of distributions stored in the other version
 * waits for a conversion (and conversion needs no cache).
 */
export function conversionServiceName(service: string): string {
  return `${service}-conversion`;
}

export function serviceIdentity(service: string, namespace: string, local: boolean): Identity {
  const dnsNames = [`${service}.${namespace}.svc`, service, `${service}.${namespace}`, `${service}.${namespace}.svc.cluster.local`, `${conversionServiceName(service)}.${namespace}.svc`];
  return local ? { dnsNames: [...dnsNames, 'localhost'], ips: ['127.0.0.1'] } : { dnsNames, ips: [] };
}
