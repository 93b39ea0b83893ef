// The ResourceDistribution CRD's conversion webhook for a whole test run, as the product's
// replicas serve it in a cluster: v1beta1 is stored, so every v1alpha1 read or write of the run
// goes through it, whichever product process the test under way runs (or none: some files run
// only the controller). It is the product's own route (POST /convert) on a listener of its own.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { conversionRoute } from '../../src/admission/conversion-webhook.js';
import { publishConversion, type ConversionTarget } from '../../src/k8s/crd-conversion.js';
import { WEBHOOK_PATHS } from '../../src/k8s/webhook-config.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { kubeClientOf } from '../kube-client.js';
import { createCertificateAuthority, issueServingCert } from './pki.js';

export interface ConversionServer {
  /** Where the CRD's conversion points while this server runs. */
  url: string;
  /** The CA the CRD's caBundle holds (PEM). */
  caPem: string;
  /** Points the CRD's conversion at this server again (after a test pointed it elsewhere). */
  register(kc: KubeConfig): Promise<void>;
  /**
   * Points it back at the Service the manifests name (which nothing serves on this control plane),
   * with this server's CA, as the product's pods leave it: what kubectl apply and helm then patch
   * matches what they applied.
   */
  unregister(kc: KubeConfig, service: { name: string; namespace: string }): Promise<void>;
  stop(): Promise<void>;
}

export async function startConversionServer(kc: KubeConfig): Promise<ConversionServer> {
  const ca = await createCertificateAuthority('rd-test-conversion-ca');
  const serving = await issueServingCert(ca, '127.0.0.1', [], ['127.0.0.1']);
  const app = new Hono();
  app.post(WEBHOOK_PATHS.conversion, conversionRoute({ log: createLogger({ level: 'warn', destination: process.stderr }), metrics: createMetrics(), bodyLimitBytes: 256 * 1024 * 1024 }));
  const listener = getRequestListener(app.fetch);
  const server: Server = createServer({ key: serving.key, cert: serving.cert }, (req, res) => void listener(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}${WEBHOOK_PATHS.conversion}`;
  const publish = async (config: KubeConfig, target: ConversionTarget): Promise<void> => {
    const client = kubeClientOf(config);
    try {
      await publishConversion(client, target, ca.cert, { takeOver: true });
    } finally {
      client.close();
    }
  };
  const register = (config: KubeConfig): Promise<void> => publish(config, { url });
  await register(kc);
  return {
    url,
    caPem: ca.cert,
    register,
    unregister: (config, service) => publish(config, { service: { ...service, path: WEBHOOK_PATHS.conversion, port: 443 } }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
