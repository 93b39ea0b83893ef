import { generateKeyPair } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generate } from 'selfsigned';

export interface KeyAndCert {
  key: string;
  cert: string;
}

// One key type for the CA and every leaf it signs (selfsigned requires them to match); EC keys
// are generated in milliseconds, RSA ones are not.
const KEY_TYPE = 'ec';
// kube-apiserver rejects SHA-1 signatures.
const ALGORITHM = 'sha256';
const VALIDITY_MS = 7 * 24 * 3600 * 1000;

function validity(): { notBeforeDate: Date; notAfterDate: Date } {
  const now = Date.now();
  // Backdated a little so a clock skew between processes does not make it "not yet valid".
  return { notBeforeDate: new Date(now - 3600 * 1000), notAfterDate: new Date(now + VALIDITY_MS) };
}

export async function createCertificateAuthority(commonName: string): Promise<KeyAndCert> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: KEY_TYPE,
    algorithm: ALGORITHM,
    ...validity(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      // Passing extensions drops selfsigned's default SAN; a CA needs none, but keep it explicit.
      { name: 'subjectAltName', altNames: [{ type: 2, value: commonName }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/** A leaf valid for `localhost` and IP 127.0.0.1 (plus `dnsNames` and `ips`), signed by `ca`. */
export async function issueServingCert(ca: KeyAndCert, commonName: string, dnsNames: readonly string[] = [], ips: readonly string[] = []): Promise<KeyAndCert> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: KEY_TYPE,
    algorithm: ALGORITHM,
    ...validity(),
    ca,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [...['localhost', ...dnsNames].map((value) => ({ type: 2 as const, value })), ...['127.0.0.1', ...ips].map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}

/** A client certificate; kube-apiserver maps CN to the user name and O to groups. */
export async function issueClientCert(ca: KeyAndCert, user: string, groups: readonly string[] = []): Promise<KeyAndCert> {
  const pems = await generate(
    [{ name: 'commonName', value: user }, ...groups.map((value) => ({ name: 'organizationName', value }))],
    {
      keyType: KEY_TYPE,
      algorithm: ALGORITHM,
      ...validity(),
      ca,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, critical: true },
        { name: 'extKeyUsage', clientAuth: true },
        { name: 'subjectAltName', altNames: [{ type: 2, value: user }] },
      ],
    },
  );
  return { key: pems.private, cert: pems.cert };
}

/** The common name of the certificate the API server presents to webhooks. */
export const WEBHOOK_CLIENT_NAME = 'kube-apiserver-webhook-client';

export interface ControlPlanePki {
  caCert: string;
  /**
   * CA, serving cert and key, admin client cert and key, service-account key pair; and a CA of
   * its own (cert and key, so tests can issue more) that signed the API server's webhook client certificate.
   */
  files: {
    webhookClientCaCert: string;
    webhookClientCaKey: string;
    webhookClientCert: string;
    webhookClientKey: string;
    caCert: string;
    /** The key of `caCert`, so that tests can issue client certificates the API server accepts (a node's). */
    caKey: string;
    servingCert: string;
    servingKey: string;
    adminCert: string;
    adminKey: string;
    serviceAccountKey: string;
    serviceAccountPub: string;
  };
  admin: KeyAndCert;
}

async function serviceAccountKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  return promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
}

/** The first address of the service range (server-args.ts): the `kubernetes` Service's ClusterIP. */
export const KUBERNETES_SERVICE_IP = '10.0.0.1';

/** Generates every key and certificate the control plane needs and writes them into `dir`. */
export async function writeControlPlanePki(dir: string): Promise<ControlPlanePki> {
  const [ca, webhookCa] = await Promise.all([
    createCertificateAuthority('resource-distributor-test-ca'),
    createCertificateAuthority('resource-distributor-test-webhook-client-ca'),
  ]);
  const [serving, admin, serviceAccount, webhookClient] = await Promise.all([
    // Also the `kubernetes` Service's ClusterIP, as kube-apiserver's own certificates: pods on a
    // node reach the API server there (in-cluster configuration).
    issueServingCert(ca, 'kube-apiserver', ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc'], [KUBERNETES_SERVICE_IP]),
    issueClientCert(ca, 'admin', ['system:masters']),
    serviceAccountKeyPair(),
    issueClientCert(webhookCa, WEBHOOK_CLIENT_NAME),
  ]);
  const files = {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    servingCert: join(dir, 'apiserver.crt'),
    servingKey: join(dir, 'apiserver.key'),
    adminCert: join(dir, 'admin.crt'),
    adminKey: join(dir, 'admin.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
    webhookClientCaCert: join(dir, 'webhook-client-ca.crt'),
    webhookClientCaKey: join(dir, 'webhook-client-ca.key'),
    webhookClientCert: join(dir, 'webhook-client.crt'),
    webhookClientKey: join(dir, 'webhook-client.key'),
  };
  const contents: [string, string][] = [
    [files.caCert, ca.cert],
    [files.caKey, ca.key],
    [files.servingCert, serving.cert],
    [files.servingKey, serving.key],
    [files.adminCert, admin.cert],
    [files.adminKey, admin.key],
    [files.serviceAccountKey, serviceAccount.privateKey],
    [files.serviceAccountPub, serviceAccount.publicKey],
    [files.webhookClientCaCert, webhookCa.cert],
    [files.webhookClientCaKey, webhookCa.key],
    [files.webhookClientCert, webhookClient.cert],
    [files.webhookClientKey, webhookClient.key],
  ];
  await Promise.all(contents.map(([path, text]) => writeFile(path, text, { mode: 0o600 })));
  return { caCert: ca.cert, files, admin };
}
