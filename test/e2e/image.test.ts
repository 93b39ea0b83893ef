// The image's contents, started as the image starts them: scripts/image-contents.sh builds what the
// Dockerfile's final stage holds (its own commands), and its CMD runs from there as the Dockerfile's
// non-root USER, with its ENV, in cluster mode, in a mount namespace of its own where the root
// filesystem is read-only (the Deployment's readOnlyRootFilesystem) and the ServiceAccount token
// (TokenRequest API) and CA sit where the kubelet mounts them. Everything of `kubectl kustomize
// webhook-config/` is applied but the Deployment (no kubelet here), so the shipped RBAC is what the
// process gets. The Service becomes an ExternalName for localhost on the process's port: the API
// server resolves it like any service webhook and verifies the certificate for
// resource-distributor.resource-distributor.svc.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { imageRuntime } from '../../bench/entry-command.js';
import { GROUP, PLURAL, VERSION } from '../../src/domain/types.js';
import { freePorts } from '../control-plane/network.js';
import { configMap, distribution, fetchWithCa, rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { objectsOf, run, type K8sObject } from './support/tools.js';

const NAMESPACE = 'resource-distributor';
const SERVICE_ACCOUNT = 'resource-distributor';
const kc = loadKubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const execFileAsync = promisify(execFile);

let workDir = '';
let port = 0;
let applied: K8sObject[] = [];
let product: ChildProcess | undefined;
let output = '';

interface Container {
  env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
}

/** As installed, but for where the API server finds the webhooks (see the file's comment). */
function onThisMachine(object: K8sObject): K8sObject {
  const copy = structuredClone(object) as K8sObject & { spec?: unknown; webhooks?: { clientConfig: { service: { port: number } } }[] };
  if (copy.kind === 'Service') copy.spec = { type: 'ExternalName', externalName: 'localhost' };
  for (const webhook of copy.webhooks ?? []) webhook.clientConfig.service.port = port;
  return copy;
}

/** The container's environment as the kubelet would set it (field references resolved). */
function containerEnv(deployment: K8sObject, podName: string): Record<string, string> {
  const container = (deployment as unknown as { spec: { template: { spec: { containers: Container[] } } } }).spec.template.spec.containers[0]!;
  const fields: Record<string, string> = { 'metadata.namespace': NAMESPACE, 'metadata.name': podName };
  return Object.fromEntries(container.env.map((e) => [e.name, e.value ?? fields[e.valueFrom?.fieldRef?.fieldPath ?? ''] ?? '']));
}

async function trustedCa(): Promise<string> {
  const secret = await core.readNamespacedSecret({ namespace: NAMESPACE, name: 'resource-distributor-tls' });
  return Buffer.from(secret.data?.['ca.crt'] ?? '', 'base64').toString('utf8');
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'rd-image-'));
  await chmod(workDir, 0o755);
  const imageDir = join(workDir, 'app');
  await execFileAsync('bash', ['scripts/image-contents.sh', imageDir], { maxBuffer: 16 * 1024 * 1024 });
  [port] = (await freePorts(1)) as [number];

  // The CRDs are those the global setup installed from the same files.
  const installed = objectsOf((await run('kubectl', ['kustomize', 'webhook-config'])).stdout);
  const deployment = installed.find((object) => object.kind === 'Deployment')!;
  applied = installed.filter((object) => object.kind !== 'Deployment' && object.kind !== 'CustomResourceDefinition').map(onThisMachine);
  await run('kubectl', ['apply', '--server-side', '--field-manager=e2e-image', '-f', '-'], { input: applied.map((object) => stringify(object)).join('---\n') });

  // What the kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount.
  const account = join(workDir, 'serviceaccount');
  const token = await core.createNamespacedServiceAccountToken({ namespace: NAMESPACE, name: SERVICE_ACCOUNT, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const caData = kc.getCurrentCluster()?.caData ?? '';
  await mkdir(account);
  await writeFile(join(account, 'token'), token.status?.token ?? '', { mode: 0o644 });
  await writeFile(join(account, 'ca.crt'), Buffer.from(caData, 'base64'), { mode: 0o644 });
  await writeFile(join(account, 'namespace'), NAMESPACE, { mode: 0o644 });

  const runtime = await imageRuntime('Dockerfile');
  const apiServer = new URL(kc.getCurrentCluster()?.server ?? '');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...runtime.env,
    ...containerEnv(deployment, 'resource-distributor-image-0'),
    // The pod's port is 9443; here it is whichever was free.
    RD_PORT: String(port),
    KUBERNETES_SERVICE_HOST: apiServer.hostname,
    KUBERNETES_SERVICE_PORT: apiServer.port,
  };
  const inNamespace = [
    'set -e',
    'mount -t tmpfs -o mode=755 tmpfs /run',
    'mkdir -p /run/secrets/kubernetes.io/serviceaccount',
    'cp "$1"/* /run/secrets/kubernetes.io/serviceaccount/',
    'mount -o remount,bind,ro /',
    'cd "$2"',
    'shift 2',
    'exec setpriv --reuid="$1" --regid="$2" --clear-groups --no-new-privs "$3" "${@:4}"',
  ].join('\n');
  const command = [account, imageDir, String(runtime.user.uid), String(runtime.user.gid), process.execPath, ...runtime.nodeFlags, 'dist/main.js'];
  product = spawn('unshare', ['--mount', '--propagation', 'private', 'bash', '-c', inNamespace, 'image', ...command], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [product.stdout, product.stderr]) stream?.on('data', (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-20_000)));
}, 600_000);

afterAll(async () => {
  if (product !== undefined && product.exitCode === null) {
    const exited = new Promise((resolve) => product?.once('exit', resolve));
    product.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
  }
  // Webhooks first: the distributions one fails closed and would refuse every later test's distributions.
  const order = (object: K8sObject): number => (/WebhookConfiguration$/.test(object.kind) ? 0 : object.kind === 'Namespace' ? 2 : 1);
  const removal = [...applied].sort((a, b) => order(a) - order(b));
  if (removal.length > 0) await run('kubectl', ['delete', '--ignore-not-found', '--wait=false', '-f', '-'], { input: removal.map((object) => stringify(object)).join('---\n') });
  if (workDir !== '') await rm(workDir, { recursive: true, force: true });
});

describe('the image contents, started as the image starts them', () => {
  it('becomes ready in cluster mode, as the non-root user, under the shipped RBAC', async () => {
    const ca = await waitFor(async () => (await trustedCa().catch(() => '')) || undefined, { timeoutMs: 60_000, what: `the certificate Secret (process output:\n${output})` });
    await waitFor(async () => ((await fetchWithCa(`https://127.0.0.1:${port}/readyz`, ca, `${SERVICE_ACCOUNT}.${NAMESPACE}.svc`)).status === 200 ? true : undefined), { timeoutMs: 60_000, what: 'readiness' });
    const status = await execFileAsync('ps', ['-o', 'uid=,args=', '--ppid', String(product?.pid ?? 0), '-p', String(product?.pid ?? 0)]);
    expect(status.stdout).toMatch(/^\s*1000 .*dist\/main\.js/m);
    expect(output).not.toMatch(/"level":(50|60)/);
  });

  it('publishes its CA to the webhook configurations, and the API server calls it', async () => {
    const ca = await trustedCa();
    await waitFor(
      async () => {
        const configurations = applied.filter((object) => /WebhookConfiguration$/.test(object.kind));
        const bundles = await Promise.all(
          configurations.map(async (object) => {
            const kind = object.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfiguration' : 'validatingwebhookconfiguration';
            const { stdout } = await run('kubectl', ['get', kind, object.metadata.name, '-o', 'jsonpath={.webhooks[*].clientConfig.caBundle}']);
            return stdout.split(' ').map((bundle) => Buffer.from(bundle, 'base64').toString('utf8'));
          }),
        );
        return bundles.flat().every((bundle) => bundle === ca) ? true : undefined;
      },
      { timeoutMs: 30_000, what: 'caBundle on every webhook' },
    );
    const invalid = distribution(uniqueName('image-invalid'), { ...configMap('settings'), kind: 'Pod' }, { includedNamespaces: { list: [{ name: 'a' }] } });
    const { code, message } = await waitFor(
      async () => {
        const answer = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: invalid }));
        return answer.message.includes('denied the request') ? answer : undefined;
      },
      { timeoutMs: 30_000, what: 'the API server to call the webhook' },
    );
    expect(code).toBe(422);
    expect(message).toContain('admission webhook "resourcedistributions.resource-distributor.io" denied the request');
    expect(message).toContain('spec.resource.kind: "Pod" is not supported');
  });

  it('converges a distribution: its copy written into a new namespace, status reported', async () => {
    const target = uniqueName('image-target');
    const name = uniqueName('image-rd');
    await core.createNamespace({ body: { metadata: { name: target } } });
    try {
      await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(name, configMap('shared-settings'), { includedNamespaces: { list: [{ name: target }] } }) });
      const copy = await waitFor(async () => core.readNamespacedConfigMap({ namespace: target, name: 'shared-settings' }), { what: 'the copy' });
      expect(copy.data).toEqual({ color: 'blue' });
      const status = await waitFor(
        async () => {
          const rd = (await custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name })) as { status?: { succeeded?: number; desired?: number } };
          return rd.status?.succeeded === 1 ? rd.status : undefined;
        },
        { what: 'status succeeded 1' },
      );
      expect(status).toMatchObject({ desired: 1, succeeded: 1 });
    } finally {
      await custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }).catch(() => undefined);
      await core.deleteNamespace({ name: target }).catch(() => undefined);
    }
  });
});
