// Authentication of the API server by the webhooks (RD_WEBHOOK_CLIENT_CA_FILE): the control plane's
// AdmissionConfiguration makes kube-apiserver present a client certificate to every webhook; the
// product, given that certificate's CA and name, answers reviews from it and refuses (401) anyone
// else who reaches the port, before any work: a forged review causes no access review and no write.
// Conversion is the exception: the API server calls it without a certificate.
import { readFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { createCertificateAuthority, issueClientCert, type KeyAndCert } from '../control-plane/index.js';
import { connectionOf } from '../kube-client.js';
import { configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const metrics = createMetrics();
const webhookClient = inject('webhookClient');
let server: RunningServer;
let target: string;

interface Answer {
  status: number;
  body: { message?: string; response?: { uid?: string; allowed?: boolean } };
}

/** POSTs `body` to our listener as a client presenting `certificate` (or none). */
function post(path: string, body: unknown, certificate?: KeyAndCert): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const options = {
      method: 'POST',
      ca: server.certificates.current()?.trust,
      agent: false,
      headers: { 'content-type': 'application/json' },
      ...(certificate === undefined ? {} : { cert: certificate.cert, key: certificate.key }),
    };
    const req = httpsRequest(`https://127.0.0.1:${server.port}${path}`, options, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function get(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`https://127.0.0.1:${server.port}${path}`, { ca: server.certificates.current()?.trust, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A review of a distribution that asks for access reviews of an identity the caller chose. */
function forgedReview(uid: string): object {
  const rd = distributionOf('forged', configMapOf('settings', { a: 'b' }), { includedNamespaces: { list: [{ name: target }] } });
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ResourceDistribution' },
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'resourcedistributions' },
      name: 'forged',
      operation: 'CREATE',
      userInfo: { username: 'someone-else', groups: ['system:authenticated'] },
      object: rd,
    },
  };
}

async function accessReviews(): Promise<number> {
  const values = (await metrics.apiRequests.get()).values;
  return values.find((v) => v.labels.resource === 'subjectaccessreviews')?.value ?? 0;
}

async function refusals(): Promise<number> {
  return (await metrics.webhookCallersRefused.get()).values[0]?.value ?? 0;
}

beforeAll(async () => {
  target = (await kube.createNamespace('callers')).metadata!.name!;
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env: { RD_WEBHOOK_CLIENT_CA_FILE: webhookClient.caFile, RD_WEBHOOK_CLIENT_NAMES: webhookClient.commonName },
    overrides: { webhookNames: { distributions: uniqueName('e2e-callers-distributions'), namespaces: uniqueName('e2e-callers-namespaces') }, shutdownDelayMs: 0 },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('webhooks that answer only the API server', () => {
  it('answer the reviews the API server sends with its client certificate', async () => {
    // Denied with our message: the API server reached us, certificate and all.
    const invalid = distributionOf(uniqueName('invalid'), { ...configMapOf('c', {}), kind: 'Pod' }, { includedNamespaces: { list: [{ name: target }] } });
    const denial = await waitFor(
      async () => {
        const answer = await rejection(kube.createDistribution(invalid)).catch(() => undefined);
        return answer?.message.includes('spec.resource.kind') ? answer : undefined;
      },
      { what: 'the distribution webhook of this server to be called', timeoutMs: 60_000 },
    );
    expect(denial.code).toBe(422);

    const name = uniqueName('settings');
    await kube.createDistribution(distributionOf(name, configMapOf(name, { color: 'blue' }), { includedNamespaces: { list: [{ name: target }] } }));
    const copy = await kube.waitForObject('ConfigMap', target, name, (object) => object !== undefined);
    expect(copy?.data).toEqual({ color: 'blue' });
    expect(await refusals()).toBe(0);
  });

  it('refuse a review from a caller without a certificate, before any work', async () => {
    const reviewsBefore = await accessReviews();
    const distributions = await post('/validate/resourcedistributions', forgedReview('forged-1'));
    expect(distributions.status).toBe(401);
    expect(distributions.body.message).toMatch(/client certificate signed by the configured webhook client CA is required/);
    expect(distributions.body.response).toBeUndefined();

    const pods = await post('/generate/pods', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'forged-2' } });
    expect(pods.status).toBe(401);
    expect(await accessReviews()).toBe(reviewsBefore);
    expect(await refusals()).toBe(2);
  });

  it('refuse a certificate of another CA, or of the right CA for another name; answer the right one', async () => {
    const stranger = await createCertificateAuthority('stranger-ca');
    const signer: KeyAndCert = { cert: await readFile(webhookClient.caFile, 'utf8'), key: await readFile(webhookClient.caKeyFile, 'utf8') };

    const otherCa = await post('/validate/resourcedistributions', forgedReview('forged-3'), await issueClientCert(stranger, webhookClient.commonName));
    expect(otherCa.status).toBe(401);
    const otherName = await post('/validate/resourcedistributions', forgedReview('forged-4'), await issueClientCert(signer, 'someone-else'));
    expect(otherName.status).toBe(401);
    expect(otherName.body.message).toMatch(/common name is not one of RD_WEBHOOK_CLIENT_NAMES/);

    const apiServer = await post('/validate/resourcedistributions', forgedReview('review-5'), await issueClientCert(signer, webhookClient.commonName));
    expect(apiServer.status).toBe(200);
    expect(apiServer.body.response?.uid).toBe('review-5');
  });

  it('convert without a certificate: kube-apiserver presents none to conversion webhooks', async () => {
    // Its AdmissionConfiguration's kubeconfig is for admission webhooks only; a CRD's conversion
    // webhook is called without client credentials, so requiring them failed every v1alpha1 request.
    const rd = distributionOf('converted', configMapOf('settings', { a: 'b' }), { includedNamespaces: { list: [{ name: target }] }, namespaceLabelSelector: { matchLabels: { group: 'x' } } });
    const review = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'conversion-1', desiredAPIVersion: 'apps.kruise.io/v1beta1', objects: [rd] } };
    const refusalsBefore = await refusals();
    const answer = await post('/convert', review);
    expect(answer.status).toBe(200);
    const response = (answer.body as { response?: { uid?: string; result?: { status?: string }; convertedObjects?: { apiVersion: string; spec: { targets: Record<string, unknown> } }[] } }).response;
    expect(response?.uid).toBe('conversion-1');
    expect(response?.result?.status).toBe('Success');
    expect(response?.convertedObjects?.[0]?.apiVersion).toBe('apps.kruise.io/v1beta1');
    expect(response?.convertedObjects?.[0]?.spec.targets.namespaceSelector).toEqual({ matchLabels: { group: 'x' } });
    expect(await refusals()).toBe(refusalsBefore);
  });

  it('serve the probes without a certificate', async () => {
    expect(await get('/healthz')).toBe(200);
    expect(await get('/readyz')).toBe(200);
  });
});
