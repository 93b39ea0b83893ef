// The product's image as the Dockerfile builds it (buildah, FROM a Node.js base made on the
// machine): what the private registry serves, and what a pod of it holds on the node.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { httpGet } from '../control-plane/index.js';
import { adminKubeConfig, boundPod, createNamespace, uniqueName, waitForPhase } from './support.js';

const node = inject('node');
const image = inject('productImage');
const registry = inject('registry');
const core = adminKubeConfig().makeApiClient(CoreV1Api);
const namespace = uniqueName('node-image');
const MiB = 1024 * 1024;

interface Manifest {
  config: { size: number };
  layers: { size: number; mediaType: string }[];
}

const manifestUrl = `https://${registry.host}/v2/resource-distributor/manifests/${image.tag}`;
const ACCEPT = { accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json' };
const basicAuth = (): Record<string, string> => ({ authorization: `Basic ${Buffer.from(`${registry.username}:${registry.password}`).toString('base64')}` });

beforeAll(async () => {
  await createNamespace(core, namespace);
});

afterAll(async () => {
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

it('the private registry serves the image to its user only (TLS with its own CA, htpasswd)', async () => {
  const anonymous = await httpGet(manifestUrl, { ca: registry.caCert }, ACCEPT);
  expect(anonymous?.status).toBe(401);
  const wrong = await httpGet(manifestUrl, { ca: registry.caCert }, { ...ACCEPT, authorization: `Basic ${Buffer.from(`${registry.username}:wrong`).toString('base64')}` });
  expect(wrong?.status).toBe(401);

  const answer = await httpGet(manifestUrl, { ca: registry.caCert }, { ...ACCEPT, ...basicAuth() });
  expect(answer?.status).toBe(200);
  const manifest = JSON.parse(answer?.body ?? '{}') as Manifest;
  // The base image's one layer, and one for everything the runtime stage adds (buildah --layers=false).
  expect(manifest.layers).toHaveLength(2);
  const pulled = manifest.config.size + manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
  console.log(
    `[node tier] image ${image.repository}:${image.tag} FROM ${image.baseImage}: ${(image.sizeBytes / MiB).toFixed(0)} MiB unpacked, ` +
      `${(pulled / MiB).toFixed(0)} MiB compressed in the registry; built in ${image.buildSeconds.toFixed(0)} s, pushed in ${image.pushSeconds.toFixed(0)} s`,
  );
  expect(image.sizeBytes).toBeGreaterThan(pulled);
});

it("a pod of the image on the node: node 20, the product under /app as the Dockerfile's user, no package manager", async () => {
  const name = uniqueName('contents');
  const script = [
    'id -u',
    'node --version',
    'echo $(ls /app)',
    'test ! -e /usr/local/lib/node_modules && test ! -e /usr/local/bin/npm && echo no-npm',
    'ls /app/node_modules | wc -l',
    // The base's part (node, the libraries it loads, busybox) and the product's.
    'du -sk /usr/local/bin/node /lib /lib64 /bin /etc /app/node_modules /app/dist /app/webhook-config',
  ].join('; ');
  const pod = boundPod(name, node.name, `${image.repository}:${image.tag}`, script);
  // The image's own USER (1000:1000) stays: no runAsUser here.
  await core.createNamespacedPod({ namespace, body: pod });
  await waitForPhase(core, namespace, name, 'Succeeded');
  const output = await core.readNamespacedPodLog({ namespace, name });
  console.log(`[node tier] the image holds (du -sk):\n${output}`);
  const [uid, version, app, npm] = output.split('\n');
  expect(uid).toBe('1000');
  expect(version).toMatch(/^v20\./);
  expect(app?.split(/\s+/).sort()).toEqual(['dist', 'node_modules', 'package.json', 'webhook-config']);
  expect(npm).toBe('no-npm');
});
