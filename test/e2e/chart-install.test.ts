// Installing the chart where its objects already exist, as users of the kustomize install, of
// OpenKruise and of k8s-object-syncer have them (the README's "When the CRDs or objects already
// exist"), and upgrading it to a later chart version. On a control plane of its own: the steps here
// replace and delete CRDs and install webhooks that never get a pod, none of which the shared
// control plane may see.
//
// OpenKruise's and k8s-object-syncer's CRDs come from stand-ins of their charts
// (test/e2e/fixtures/charts/): OpenKruise's release `kruise` installs its ResourceDistribution CRD
// as a template of the release (so Helm's ownership metadata names that release);
// k8s-object-syncer's chart installs its ObjectSync CRD from its crds/ folder (no ownership
// metadata at all).
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, startConversionServer, type ControlPlane, type ConversionServer } from '../control-plane/index.js';
import { objectsOf, failureOf, run, type ToolResult } from './support/tools.js';

const CHART = 'charts/resource-distributor';
const KRUISE_CHART = 'test/e2e/fixtures/charts/openkruise';
const OBJECT_SYNCER_CHART = 'test/e2e/fixtures/charts/k8s-object-syncer';
const RELEASE = 'resource-distributor';
const NAMESPACE = 'resource-distributor';
const RD_CRD = 'resourcedistributions.apps.kruise.io';
const OBJECTSYNC_CRD = 'objectsyncs.sync.rustrial.org';
const CONFLICT = 'exists and cannot be imported into the current release: invalid ownership metadata';
const IMAGE = 'registry.example/resource-distributor';

let plane: ControlPlane | undefined;
let conversion: ConversionServer | undefined;
const temporary: string[] = [];

beforeAll(async () => {
  plane = await startControlPlane();
  conversion = await startConversionServer(plane.kubeConfig);
}, 300_000);

afterAll(async () => {
  await conversion?.stop();
  await plane?.stop();
  await Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true })));
});

const DISTRIBUTION = `apiVersion: apps.kruise.io/v1alpha1
kind: ResourceDistribution
metadata:
  name: shared-settings
spec:
  resource: {apiVersion: v1, kind: ConfigMap, metadata: {name: shared-settings}, data: {mode: kruise}}
  targets: {includedNamespaces: {list: [{name: default}]}}
`;
const OBJECT_SYNC = `apiVersion: sync.rustrial.org/v1alpha1
kind: ObjectSync
metadata:
  name: shared-settings
  namespace: default
spec:
  source: {group: "", kind: ConfigMap, name: shared-settings}
  destinations: [{namespace: "*"}]
`;

/** helm and kubectl against this file's control plane. */
async function helm(args: string[]): Promise<ToolResult> {
  return run('helm', ['--kubeconfig', plane!.kubeconfigPath, ...args]);
}
async function kubectl(args: string[], input?: string): Promise<ToolResult> {
  return run('kubectl', ['--kubeconfig', plane!.kubeconfigPath, ...args], input === undefined ? {} : { input });
}

interface Crd {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown> } } } }; additionalPrinterColumns?: { name: string }[] }[] };
}
async function crd(name: string): Promise<Crd> {
  return JSON.parse((await kubectl(['get', 'crd', name, '-o', 'json'])).stdout) as Crd;
}
const specFieldsOf = (definition: Crd): string[] => Object.keys(definition.spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties).sort();
async function uidOf(args: string[]): Promise<string> {
  return (await kubectl(['get', ...args, '-o', 'jsonpath={.metadata.uid}'])).stdout;
}

/** The README's adoption commands, for these CRDs. */
async function adopt(crds: string[]): Promise<void> {
  for (const name of crds) {
    await kubectl(['label', 'crd', name, 'app.kubernetes.io/managed-by=Helm', '--overwrite']);
    await kubectl(['annotate', 'crd', name, `meta.helm.sh/release-name=${RELEASE}`, `meta.helm.sh/release-namespace=${NAMESPACE}`, '--overwrite']);
  }
}

/**
 * What the product's pods do once they run (none runs here): point the CRD's conversion webhook
 * at a server that converts. Our CRD stores v1beta1: without it, a distribution written in
 * v1alpha1, or stored in v1alpha1 under OpenKruise's CRD, cannot be read in v1beta1.
 */
const podsConvert = async (): Promise<void> => {
  if (plane === undefined || conversion === undefined) throw new Error('no control plane');
  await conversion.register(plane.kubeConfig);
};
/** And as the pods leave it (the Service the manifests name): kubectl apply and helm then find what they applied. */
const podsLeaveService = async (): Promise<void> => {
  if (plane === undefined || conversion === undefined) throw new Error('no control plane');
  await conversion.unregister(plane.kubeConfig, { name: `${RELEASE}-conversion`, namespace: NAMESPACE });
};
const install = (args: string[] = []): Promise<ToolResult> => helm(['install', RELEASE, CHART, '--namespace', NAMESPACE, '--create-namespace', '--set', `image.repository=${IMAGE}`, ...args]);

async function temporaryDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
}
const established = (): Promise<ToolResult> => kubectl(['wait', '--for=condition=Established', `crd/${RD_CRD}`, `crd/${OBJECTSYNC_CRD}`, '--timeout=60s']);
const deploymentUid = (): Promise<string> => uidOf(['deployment', RELEASE, '--namespace', NAMESPACE]);
const caBundleOf = async (configuration: string): Promise<string> => (await kubectl(['get', 'validatingwebhookconfiguration', configuration, '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}'])).stdout;

describe('the chart over the kustomize install (kubectl apply -k webhook-config/)', () => {
  const uids: Record<string, string> = {};
  const caBundle = Buffer.from('the CA the pods patched in').toString('base64');

  beforeAll(async () => {
    await kubectl(['apply', '-f', 'webhook-config/crd/']);
    await established();
    // Before the webhooks: no pod answers them here.
    await podsConvert();
    await kubectl(['create', '-f', '-'], DISTRIBUTION);
    await podsLeaveService();
    await kubectl(['apply', '-k', 'webhook-config/']);
    await kubectl(['patch', 'validatingwebhookconfiguration', `${RELEASE}-distributions`, '--type=json', '-p', JSON.stringify([{ op: 'add', path: '/webhooks/0/clientConfig/caBundle', value: caBundle }])]);
    uids.distribution = await uidOf(['resourcedistribution', 'shared-settings']);
    uids.deployment = await deploymentUid();
  });

  afterAll(async () => {
    // The next scenario starts from no CRDs at all.
    await helm(['uninstall', RELEASE, '--namespace', NAMESPACE]);
    await kubectl(['delete', 'crd', RD_CRD, OBJECTSYNC_CRD]);
  });

  it('a plain helm install fails on its objects, which carry no ownership metadata', async () => {
    expect((await failureOf(install())).stderr).toMatch(new RegExp(`in namespace "(${NAMESPACE})?" ${CONFLICT}; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"`));
  });

  it('adopting everything it installed, the release takes each object over in place: same objects, the caBundle kept, the distributions kept', async () => {
    const rendered = join(await temporaryDir('rd-kustomize-'), 'kustomize-install.yaml');
    await writeFile(rendered, (await kubectl(['kustomize', 'webhook-config/'])).stdout);
    await kubectl(['label', '-f', rendered, 'app.kubernetes.io/managed-by=Helm', '--overwrite']);
    await kubectl(['annotate', '-f', rendered, '--overwrite', `meta.helm.sh/release-name=${RELEASE}`, `meta.helm.sh/release-namespace=${NAMESPACE}`]);
    await install();

    expect(await deploymentUid()).toBe(uids.deployment);
    expect(await caBundleOf(`${RELEASE}-distributions`)).toBe(caBundle);
    expect(await uidOf(['resourcedistribution', 'shared-settings'])).toBe(uids.distribution);
    expect((await crd(RD_CRD)).metadata.labels).toMatchObject({ 'app.kubernetes.io/instance': RELEASE });
    const image = (await kubectl(['get', 'deployment', RELEASE, '--namespace', NAMESPACE, '-o', 'jsonpath={.spec.template.spec.containers[0].image}'])).stdout;
    expect(image).toBe(`${IMAGE}:0.1.0`);
  });
});

describe('the chart where OpenKruise\'s and k8s-object-syncer\'s CRDs exist', () => {
  const uids: Record<string, string> = {};

  beforeAll(async () => {
    await helm(['install', 'kruise', KRUISE_CHART, '--namespace', 'kruise-system', '--create-namespace']);
    await helm(['install', 'k8s-object-syncer', OBJECT_SYNCER_CHART, '--namespace', 'k8s-object-syncer', '--create-namespace']);
    await established();
    // What their users have: a distribution and an ObjectSync, which must outlive every step below.
    await kubectl(['create', '-f', '-'], [DISTRIBUTION, OBJECT_SYNC].join('---\n'));
    uids.distribution = await uidOf(['resourcedistribution', 'shared-settings']);
    uids.objectSync = await uidOf(['objectsync', 'shared-settings', '-n', 'default']);
  });

  it("under OpenKruise's CRD, a distribution has OpenKruise's fields only", async () => {
    expect(specFieldsOf(await crd(RD_CRD))).toEqual(['resource', 'targets']);
    const withSource = DISTRIBUTION.replace(/ {2}resource: .*\n/, '  source: {kind: ConfigMap, namespace: default, name: shared-settings}\n').replace('shared-settings\nspec', 'from-source\nspec');
    expect((await failureOf(kubectl(['create', '--dry-run=server', '-f', '-'], withSource))).stderr).toContain('unknown field "spec.source"');
  });

  it('a plain helm install fails on them: they carry no ownership metadata of this release', async () => {
    const failure = await failureOf(install());
    expect(failure.stderr).toMatch(new RegExp(`CustomResourceDefinition "(${RD_CRD}|${OBJECTSYNC_CRD})" in namespace "" ${CONFLICT}`));
    expect((await helm(['list', '--all-namespaces', '-q'])).stdout.split('\n')).not.toContain(RELEASE);
  });

  it('with crds.install=false the release installs everything else and leaves the CRDs as they are', async () => {
    await install(['--set', 'crds.install=false']);
    const kinds = objectsOf((await helm(['get', 'manifest', RELEASE, '--namespace', NAMESPACE])).stdout).map((object) => object.kind);
    expect(kinds).not.toContain('CustomResourceDefinition');
    expect(kinds).toEqual(expect.arrayContaining(['Deployment', 'Service', 'ServiceAccount', 'ClusterRole', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration']));
    await kubectl(['get', 'deployment', RELEASE, '--namespace', NAMESPACE]);
    const kruise = await crd(RD_CRD);
    expect(kruise.metadata.annotations).toMatchObject({ 'meta.helm.sh/release-name': 'kruise', 'meta.helm.sh/release-namespace': 'kruise-system' });
    expect(specFieldsOf(kruise)).toEqual(['resource', 'targets']);
    expect((await crd(OBJECTSYNC_CRD)).metadata.labels).toBeUndefined();

    await helm(['uninstall', RELEASE, '--namespace', NAMESPACE]);
    expect(await uidOf(['resourcedistribution', 'shared-settings'])).toBe(uids.distribution);
    expect(await uidOf(['objectsync', 'shared-settings', '-n', 'default'])).toBe(uids.objectSync);
  });

  it("adopted into the release, the CRDs become this chart's: its schema, its labels, the distributions kept", async () => {
    // One at a time, to see both messages: the CRD OpenKruise's release owns names that release.
    await adopt([OBJECTSYNC_CRD]);
    expect((await failureOf(install())).stderr).toContain(`CustomResourceDefinition "${RD_CRD}" in namespace "" ${CONFLICT}; annotation validation error: key "meta.helm.sh/release-name" must equal "${RELEASE}": current value is "kruise"`);
    await adopt([RD_CRD]);
    await install();
    await podsConvert();

    const distributions = await crd(RD_CRD);
    expect(distributions.metadata.annotations).toMatchObject({ 'meta.helm.sh/release-name': RELEASE, 'meta.helm.sh/release-namespace': NAMESPACE, 'helm.sh/resource-policy': 'keep' });
    expect(distributions.metadata.labels).toMatchObject({ 'app.kubernetes.io/instance': RELEASE, 'app.kubernetes.io/name': 'resource-distributor' });
    expect(specFieldsOf(distributions)).toEqual(expect.arrayContaining(['resource', 'targets', 'source', 'writePolicy', 'imagePullSecretInjection']));
    const objectSyncs = await crd(OBJECTSYNC_CRD);
    expect(objectSyncs.metadata.labels).toMatchObject({ 'app.kubernetes.io/instance': RELEASE });
    expect(objectSyncs.spec.versions[0]!.additionalPrinterColumns?.map((column) => column.name)).toContain('Desired');
    expect(await uidOf(['resourcedistribution', 'shared-settings'])).toBe(uids.distribution);
    expect(await uidOf(['objectsync', 'shared-settings', '-n', 'default'])).toBe(uids.objectSync);
  });

  it("OpenKruise's release lets go of the CRD before its uninstall, which then keeps it; k8s-object-syncer's never deletes its CRD", async () => {
    // Same chart version, so --reuse-values is right here.
    await helm(['upgrade', 'kruise', KRUISE_CHART, '--namespace', 'kruise-system', '--reuse-values', '--set', 'crds.managed=false']);
    await helm(['uninstall', 'kruise', '--namespace', 'kruise-system']);
    await helm(['uninstall', 'k8s-object-syncer', '--namespace', 'k8s-object-syncer']);
    expect((await crd(RD_CRD)).metadata.annotations).toMatchObject({ 'meta.helm.sh/release-name': RELEASE });
    await crd(OBJECTSYNC_CRD);
    expect(await uidOf(['resourcedistribution', 'shared-settings'])).toBe(uids.distribution);
    expect(await uidOf(['objectsync', 'shared-settings', '-n', 'default'])).toBe(uids.objectSync);
  });
});

describe('helm upgrade to a chart version that adds a value', () => {
  /** This chart as its next version: a new value, used by a template. */
  async function nextVersion(): Promise<string> {
    const chart = join(await temporaryDir('rd-chart-next-'), 'resource-distributor');
    await cp(CHART, chart, { recursive: true });
    await writeFile(join(chart, 'Chart.yaml'), (await readFile(join(chart, 'Chart.yaml'), 'utf8')).replace(/^version: .*$/m, 'version: 0.2.0'));
    await writeFile(join(chart, 'values.yaml'), `${await readFile(join(chart, 'values.yaml'), 'utf8')}\nstartupProbe:\n  enabled: true\n`);
    const schema = JSON.parse(await readFile(join(chart, 'values.schema.json'), 'utf8')) as { properties: Record<string, unknown> };
    schema.properties.startupProbe = { type: 'object', properties: { enabled: { type: 'boolean' } } };
    await writeFile(join(chart, 'values.schema.json'), JSON.stringify(schema));
    await writeFile(join(chart, 'templates', 'startup-probe.yaml'), '{{- if .Values.startupProbe.enabled }}\n# startup probe on\n{{- end }}\n');
    return chart;
  }

  it('fails with --reuse-values (the new value is missing), and works with --reset-then-reuse-values, keeping the values set at install', async () => {
    // A release of its own (the CRDs are left to the one above).
    const [release, namespace] = ['upgrades', 'upgrades'];
    await helm(['install', release, CHART, '--namespace', namespace, '--create-namespace', '--set', 'crds.install=false', '--set', `image.repository=${IMAGE}`, '--set', 'logLevel=debug']);
    const next = await nextVersion();
    const upgrade = (flag: string): Promise<ToolResult> => helm(['upgrade', release, next, '--namespace', namespace, flag, '--set', 'image.tag=0.2.0']);
    expect((await failureOf(upgrade('--reuse-values'))).stderr).toContain('nil pointer evaluating interface {}.enabled');
    await upgrade('--reset-then-reuse-values');
    const values = JSON.parse((await helm(['get', 'values', release, '--namespace', namespace, '--all', '-o', 'json'])).stdout) as Record<string, unknown>;
    expect(values).toMatchObject({ image: { repository: IMAGE, tag: '0.2.0' }, logLevel: 'debug', crds: { install: false }, startupProbe: { enabled: true } });
    const container = (await kubectl(['get', 'deployment', `${release}-resource-distributor`, '--namespace', namespace, '-o', 'jsonpath={.spec.template.spec.containers[0]}'])).stdout;
    expect(JSON.parse(container)).toMatchObject({ image: `${IMAGE}:0.2.0`, env: expect.arrayContaining([{ name: 'RD_LOG_LEVEL', value: 'debug' }]) as unknown });
  });
});
