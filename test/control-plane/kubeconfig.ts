import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { KeyAndCert } from './pki.js';

const b64 = (pem: string): string => Buffer.from(pem).toString('base64');

/** A self-contained kubeconfig (certificates embedded) for the admin user. */
export function renderKubeconfig(serverUrl: string, caCert: string, admin: KeyAndCert): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server: serverUrl, 'certificate-authority-data': b64(caCert) } }],
    users: [{ name: 'admin', user: { 'client-certificate-data': b64(admin.cert), 'client-key-data': b64(admin.key) } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: 'admin' } }],
    'current-context': 'local',
  });
}

export async function writeKubeconfig(path: string, serverUrl: string, caCert: string, admin: KeyAndCert): Promise<void> {
  await writeFile(path, renderKubeconfig(serverUrl, caCert, admin), { mode: 0o600 });
}
