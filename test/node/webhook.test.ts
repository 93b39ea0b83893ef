import { AdmissionregistrationV1Api, CoreV1Api, DiscoveryV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { NODE_IMAGES, createCertificateAuthority, issueServingCert } from '../control-plane/index.js';
import { adminKubeConfig, createNamespace, uniqueName, waitFor } from './support.js';

const node = inject('node');
const kubeConfig = adminKubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
const namespace = uniqueName('node-webhook');
const service = 'denier';
const webhookConfiguration = uniqueName('node-denier');
const MESSAGE = 'denied by a pod on the node';

/** A validating webhook in plain Node.js (the nodejs image holds nothing else): denies everything it is sent. */
const SERVER = `
const fs = require('node:fs');
const https = require('node:https');
const tls = { cert: fs.readFileSync('/webhook/tls.crt'), key: fs.readFileSync('/webhook/tls.key') };
https.createServer(tls, (req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const { request } = JSON.parse(body);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: request.uid, allowed: false, status: { code: 403, message: ${JSON.stringify(MESSAGE)} } },
    }));
  });
}).listen(8443);
`;

beforeAll(async () => {
  await createNamespace(core, namespace);
});

afterAll(async () => {
  await admission.deleteValidatingWebhookConfiguration({ name: webhookConfiguration }).catch(() => undefined);
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

it("the API server calls a webhook served by a pod on the node, through its Service (the API server's endpoint routing)", async () => {
  expect(node.images.nodejs).toBe(NODE_IMAGES.nodejs);
  const host = `${service}.${namespace}.svc`;
  const ca = await createCertificateAuthority('node-webhook-ca');
  const serving = await issueServingCert(ca, host, [host]);
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: 'webhook' }, stringData: { 'server.js': SERVER, 'tls.crt': serving.cert, 'tls.key': serving.key } },
  });
  await core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name: 'denier', labels: { app: 'denier' } },
      spec: {
        nodeName: node.name,
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'webhook',
            image: NODE_IMAGES.nodejs,
            imagePullPolicy: 'Never',
            command: ['node', '/webhook/server.js'],
            ports: [{ containerPort: 8443 }],
            readinessProbe: { tcpSocket: { port: 8443 }, periodSeconds: 1 },
            volumeMounts: [{ name: 'webhook', mountPath: '/webhook', readOnly: true }],
          },
        ],
        volumes: [{ name: 'webhook', secret: { secretName: 'webhook' } }],
      },
    },
  });
  await core.createNamespacedService({
    namespace,
    body: { metadata: { name: service }, spec: { selector: { app: 'denier' }, ports: [{ port: 443, targetPort: 8443 }] } },
  });
  // The EndpointSlice controller publishes the pod once it is Ready.
  await waitFor('a ready endpoint of the Service', async () => {
    const slices = await discovery.listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` });
    return slices.items.some((slice) => (slice.endpoints ?? []).some((endpoint) => endpoint.conditions?.ready)) ? true : undefined;
  });

  await admission.createValidatingWebhookConfiguration({
    body: {
      metadata: { name: webhookConfiguration },
      webhooks: [
        {
          name: 'deny.node.test',
          clientConfig: { service: { namespace, name: service, port: 443, path: '/validate' }, caBundle: Buffer.from(ca.cert).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 5,
        },
      ],
    },
  });
  // The configuration takes effect within a moment: until then a ConfigMap is simply created.
  const denial = await waitFor('the webhook denies a ConfigMap', () =>
    core.createNamespacedConfigMap({ namespace, body: { metadata: { name: uniqueName('probe') } } }).then(
      () => undefined,
      (error: unknown) => String((error as { body?: unknown }).body ?? error),
    ),
  );
  expect(denial).toContain(MESSAGE);
});
