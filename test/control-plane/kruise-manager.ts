// OpenKruise v1.9.0's kruise-manager run out of cluster, as the migration test and the bench's peer
// run it: built from its Go module (test/tools/kruise-manager/), on a control plane of its own
// holding every OpenKruise CRD (kruise-manager needs each one) with ResourceDistribution's served
// as OpenKruise's release installs it (v1alpha1 and v1beta1, v1beta1 stored, converted by
// kruise-manager's own webhook), and its webhook configurations reduced to distributions.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import { ensureTool } from './binaries.js';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { REPO_ROOT } from './local-cluster.js';
import { applyManifestFiles, waitForCrdEstablished } from './manifests.js';
import { freePorts } from './network.js';
import { startProcess, type ManagedProcess } from './processes.js';

const KRUISE_MODULE = join(REPO_ROOT, 'test/tools/kruise-manager');
const KRUISE_DISTRIBUTION_CRD = 'resourcedistributions.apps.kruise.io';

/** OpenKruise v1.9.0's own files, from its module as the Go module proxy serves it. */
export async function kruiseModuleDir(): Promise<string> {
  const { stdout } = await promisify(execFile)('go', ['mod', 'download', '-json', 'github.com/openkruise/kruise'], { cwd: KRUISE_MODULE, env: { ...process.env, GOFLAGS: '-mod=mod', GONOSUMDB: 'github.com/openkruise' } });
  return (JSON.parse(stdout) as { Dir: string }).Dir;
}

/**
 * OpenKruise's webhook configurations with only what concerns distributions: kruise-manager fills
 * in the address and caBundle of the webhooks it serves (the mutating one has none here).
 */
export const KRUISE_WEBHOOKS = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: kruise-mutating-webhook-configuration
webhooks: []
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kruise-validating-webhook-configuration
webhooks:
  - name: vresourcedistribution.kb.io
    admissionReviewVersions: [v1, v1beta1]
    clientConfig:
      service: {name: kruise-webhook-service, namespace: kruise-system, path: /validate-apps-kruise-io-resourcedistribution}
    failurePolicy: Fail
    sideEffects: None
    rules:
      - apiGroups: [apps.kruise.io]
        apiVersions: [v1alpha1]
        operations: [CREATE, UPDATE]
        resources: [resourcedistributions]
`;

export interface KruiseManager extends ManagedProcess {
  /** Its Prometheus endpoint (controller-runtime's metrics: rest_client_requests_total, workqueue_depth, ...). */
  metricsUrl: string;
}

export interface KruiseOptions {
  /** kruise-manager's binary: v1.9.0's, built from its Go module, when absent. */
  binary?: string;
  /** Appended to its flags (e.g. the bench's client rate limits and workers). */
  flags?: readonly string[];
}

/** kruise-manager with ResourceDistributionGate on, without leader election, its webhook on a free loopback port. */
export async function startKruise(kubeconfigPath: string, dir: string, options: KruiseOptions = {}): Promise<KruiseManager> {
  const binary = options.binary ?? (await ensureTool('kruise-manager'));
  const flags = options.flags ?? [];
  const [webhook, metrics, health] = await freePorts(3);
  const certs = join(dir, 'kruise-certs');
  await mkdir(certs, { recursive: true });
  const env = [`WEBHOOK_HOST=127.0.0.1`, `WEBHOOK_PORT=${String(webhook)}`, `WEBHOOK_CERT_DIR=${certs}`, 'POD_NAMESPACE=kruise-system'];
  const args = [
    ...env,
    binary,
    `--kubeconfig=${kubeconfigPath}`,
    '--enable-leader-election=false',
    `--metrics-addr=127.0.0.1:${String(metrics)}`,
    `--health-probe-addr=127.0.0.1:${String(health)}`,
    '--enable-pprof=false',
    '--feature-gates=ResourceDistributionGate=true',
    ...flags,
  ];
  // `env` execs kruise-manager: the process's pid is kruise-manager's own.
  return { ...startProcess('kruise-manager', '/usr/bin/env', args, dir), metricsUrl: `http://127.0.0.1:${String(metrics)}/metrics` };
}

/** OpenKruise's ResourceDistribution CRD as its release installs it: v1alpha1 and v1beta1 (stored), converted by kruise-manager. */
export async function kruiseDistributionCrd(bases: string): Promise<string> {
  const crd = parse(await readFile(join(bases, 'apps.kruise.io_resourcedistributions.yaml'), 'utf8')) as { spec: Record<string, unknown> };
  crd.spec.conversion = {
    strategy: 'Webhook',
    webhook: { clientConfig: { service: { namespace: 'kruise-system', name: 'kruise-webhook-service', path: '/convert' } }, conversionReviewVersions: ['v1', 'v1beta1'] },
  };
  const dir = await mkdtemp(join(tmpdir(), 'rd-kruise-crd-'));
  const path = join(dir, 'apps.kruise.io_resourcedistributions.yaml');
  await writeFile(path, stringify(crd));
  return path;
}

/**
 * Every CRD of an OpenKruise source tree (`source`/config/crd/bases), as OpenKruise's chart installs
 * them (kruise-manager needs every one); ResourceDistribution's with the conversion webhook its
 * kustomization patches in (kruise-manager points it at itself). Run it before the garbage
 * collector starts, so that it knows the types from the start.
 */
export async function applyKruiseCrds(kc: KubeConfig, source: string): Promise<void> {
  const bases = join(source, 'config/crd/bases');
  const others = (await readdir(bases)).filter((file) => file !== 'apps.kruise.io_resourcedistributions.yaml' && file.endsWith('.yaml'));
  await applyManifestFiles(kc, others.map((file) => join(bases, file)));
  await applyManifestFiles(kc, [await kruiseDistributionCrd(bases)]);
  await waitForCrdEstablished(kc, KRUISE_DISTRIBUTION_CRD);
}

/** A fresh control plane with OpenKruise v1.9.0's CRDs, the kruise-system namespace and its webhook configurations, ready for startKruise. */
export async function startKruisePlane(options: { log?: (line: string) => void } = {}): Promise<ControlPlane> {
  const module = await kruiseModuleDir();
  const plane = await startControlPlane({ ...options, beforeControllerManager: (kc) => applyKruiseCrds(kc, module) });
  try {
    await plane.kubeConfig.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'kruise-system' } } });
    const webhooks = join(plane.dir, 'kruise-webhooks.yaml');
    await writeFile(webhooks, KRUISE_WEBHOOKS);
    await applyManifestFiles(plane.kubeConfig, [webhooks]);
    return plane;
  } catch (error) {
    await plane.stop();
    throw error;
  }
}
