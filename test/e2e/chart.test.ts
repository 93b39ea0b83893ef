// The Helm chart: lint, the same objects as `kubectl kustomize webhook-config/` (one source of
// truth), names and values carried through consistently, values the schema or the templates
// refuse, and accepted by the API server (server-side dry run of `helm template`; `helm install
// --dry-run=server` where the CRDs already exist). Installing over the kustomize install and over
// OpenKruise's and k8s-object-syncer's CRDs, and upgrading: chart-install.test.ts.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';
import { keyOf, objectsOf, failureOf, run, type K8sObject, type ToolResult } from './support/tools.js';

const CHART = 'charts/resource-distributor';
/** What Helm adds and kustomize does not: its bookkeeping labels, and the CRDs' keep policy. */
const HELM_LABELS = ['app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/version', 'helm.sh/chart'];
/** The opt-in parts (kustomize components), as chart values. */
const OPT_IN_VALUES = [
  'networkPolicy.enabled=true',
  'networkPolicy.apiServerCidr=10.0.0.0/24',
  'monitoring.serviceMonitor.enabled=true',
  'monitoring.prometheusRule.enabled=true',
  'monitoring.dashboard.enabled=true',
];
const setting = (values: string[]): string[] => values.flatMap((value) => ['--set', value]);
const OPT_IN = setting(OPT_IN_VALUES);

const temporary: string[] = [];
afterAll(async () => {
  await Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true })));
});

function withoutHelmBookkeeping(object: K8sObject): K8sObject {
  const copy = structuredClone(object);
  for (const label of HELM_LABELS) delete copy.metadata.labels?.[label];
  delete copy.metadata.annotations?.['helm.sh/resource-policy'];
  if (copy.metadata.annotations !== undefined && Object.keys(copy.metadata.annotations).length === 0) delete copy.metadata.annotations;
  return copy;
}

const byKey = (objects: K8sObject[]): Record<string, K8sObject> =>
  Object.fromEntries(objects.map((object): [string, K8sObject] => [keyOf(object), object]).sort(([a], [b]) => a.localeCompare(b)));

/** `kubectl kustomize` of the base, or of an overlay of the base with these components (as a user would write it). */
async function kustomize(components: string[] = []): Promise<K8sObject[]> {
  if (components.length === 0) return objectsOf((await run('kubectl', ['kustomize', 'webhook-config'])).stdout);
  const dir = await mkdtemp(join(tmpdir(), 'rd-overlay-'));
  temporary.push(dir);
  const from = (path: string): string => relative(dir, resolve(path));
  const overlay = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [from('webhook-config')], components: components.map((c) => from(`webhook-config/${c}`)) };
  await writeFile(join(dir, 'kustomization.yaml'), stringify(overlay));
  return objectsOf((await run('kubectl', ['kustomize', dir])).stdout);
}

async function helmTemplate(args: string[] = [], release = 'resource-distributor', namespace = 'resource-distributor'): Promise<K8sObject[]> {
  return objectsOf((await run('helm', ['template', release, CHART, '--namespace', namespace, ...args])).stdout);
}

interface Container {
  image: string;
  env: { name: string; value?: string }[];
  securityContext?: Record<string, unknown>;
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: { serviceAccountName: string; securityContext?: Record<string, unknown>; affinity?: unknown; topologySpreadConstraints?: unknown; containers: Container[] };
}
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}


const find = (objects: K8sObject[], kind: string): K8sObject[] => objects.filter((object) => object.kind === kind);
const one = (objects: K8sObject[], kind: string): K8sObject => {
  const found = find(objects, kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};
const containerOf = (objects: K8sObject[]): Container => (one(objects, 'Deployment') as unknown as { spec: { template: { spec: { containers: Container[] } } } }).spec.template.spec.containers[0]!;
const podOf = (objects: K8sObject[]): PodTemplate => (one(objects, 'Deployment') as unknown as { spec: { template: PodTemplate } }).spec.template;
const envOf = (objects: K8sObject[]): Record<string, string> =>
  Object.fromEntries(containerOf(objects).env.flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value] as const])));

describe('the Helm chart', () => {
  it('passes helm lint (strict), with default values and with every opt-in part on', async () => {
    for (const args of [[], OPT_IN]) {
      const { stdout } = await run('helm', ['lint', '--strict', CHART, ...args]);
      expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    }
  });

  it('renders with default values exactly what kubectl kustomize webhook-config/ does (but the Namespace, which helm install --create-namespace makes)', async () => {
    const fromKustomize = (await kustomize()).filter((object) => object.kind !== 'Namespace');
    const fromHelm = (await helmTemplate()).map(withoutHelmBookkeeping);
    expect(find(fromHelm, 'Namespace')).toEqual([]);
    expect(byKey(fromHelm)).toEqual(byKey(fromKustomize));
  });

  it('renders the opt-in parts exactly as the network-policy and monitoring components do', async () => {
    const fromKustomize = (await kustomize(['network-policy', 'monitoring'])).filter((object) => object.kind !== 'Namespace');
    const fromHelm = (await helmTemplate(OPT_IN)).map(withoutHelmBookkeeping);
    expect(Object.keys(byKey(fromHelm))).toEqual(expect.arrayContaining(['NetworkPolicy resource-distributor/resource-distributor', 'ServiceMonitor resource-distributor/resource-distributor', 'PrometheusRule resource-distributor/resource-distributor', 'ConfigMap resource-distributor/resource-distributor-dashboard']));
    expect(byKey(fromHelm)).toEqual(byKey(fromKustomize));
  });

  it('names everything after the release, and the server reads the same names from its environment', async () => {
    const objects = await helmTemplate([], 'platform', 'platform-system');
    const env = envOf(objects);
    const config = loadConfig({ ...env, RD_NAMESPACE: 'platform-system', POD_NAME: 'pod' });
    expect(config.serviceName).toBe('platform-resource-distributor');
    expect(find(objects, 'Service').map((o) => o.metadata).sort((a, b) => a.name.localeCompare(b.name))).toMatchObject([
      { name: config.serviceName, namespace: 'platform-system' },
      { name: `${config.serviceName}-conversion`, namespace: 'platform-system' },
    ]);
    expect(find(objects, 'ValidatingWebhookConfiguration').map((o) => o.metadata.name).sort()).toEqual([config.webhookNames.distributions, config.webhookNames.namespaces].sort());
    expect(find(objects, 'MutatingWebhookConfiguration').map((o) => o.metadata.name)).toEqual([config.webhookNames.pods]);
    const clusterRole = one(objects, 'ClusterRole') as unknown as { rules: Rule[] };
    expect(clusterRole.rules.flatMap((r) => r.resourceNames ?? []).sort()).toEqual([config.webhookNames.distributions, config.webhookNames.namespaces, config.webhookNames.pods, 'resourcedistributions.apps.kruise.io'].sort());
    const crd = find(objects, 'CustomResourceDefinition').find((o) => o.metadata.name === 'resourcedistributions.apps.kruise.io') as unknown as { spec: { conversion: { webhook: { clientConfig: { service: object } } } } };
    expect(crd.spec.conversion.webhook.clientConfig.service).toEqual({ name: `${config.serviceName}-conversion`, namespace: 'platform-system', path: '/convert', port: 443 });
    const role = one(objects, 'Role') as unknown as { rules: Rule[] };
    expect(role.rules.flatMap((r) => r.resourceNames ?? []).sort()).toEqual([config.leaseName, config.tlsSecret].sort());
    for (const config of [...find(objects, 'ValidatingWebhookConfiguration'), ...find(objects, 'MutatingWebhookConfiguration')] as unknown as { webhooks: { clientConfig: { service: object }; namespaceSelector?: unknown }[] }[]) {
      for (const webhook of config.webhooks) expect(webhook.clientConfig.service).toMatchObject({ name: 'platform-resource-distributor', namespace: 'platform-system' });
    }
    expect(JSON.stringify(find(objects, 'ValidatingWebhookConfiguration'))).toContain('"values":["platform-system","kube-system","kube-public"]');
  });

  it('carries allowedKinds, extraRules and settings to the server and its RBAC', async () => {
    const objects = await helmTemplate([
      '--set-json', 'allowedKinds=[{"kind":"NetworkPolicy","group":"networking.k8s.io","resource":"networkpolicies"},{"kind":"CronJob","group":"batch","resource":"cronjobs"}]',
      '--set-json', 'extraRules=[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["clusterroles"],"resourceNames":["view"],"verbs":["bind"]}]',
      '--set', 'settings.RD_POD_WAIT=1s',
      '--set', 'logLevel=debug',
      '--set', 'webhooks.distributions.timeoutSeconds=10',
    ]);
    const env = envOf(objects);
    expect(env).toMatchObject({ RD_ALLOWED_KINDS: 'Secret,ConfigMap,NetworkPolicy.networking.k8s.io,CronJob.batch', RD_POD_WAIT: '1s', RD_LOG_LEVEL: 'debug' });
    const config = loadConfig({ ...env, RD_NAMESPACE: 'resource-distributor', POD_NAME: 'pod' });
    expect(config.podWaitMs).toBe(1000);
    const rules = (one(objects, 'ClusterRole') as unknown as { rules: Rule[] }).rules;
    expect(rules).toEqual(
      expect.arrayContaining([
        { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
        { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'list', 'watch', 'create', 'update', 'delete'] },
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['view'], verbs: ['bind'] },
      ]),
    );
    expect(JSON.stringify(find(objects, 'ValidatingWebhookConfiguration'))).toContain('"timeoutSeconds":10');
  });

  it('opens only the HTTPS port by default, to any source; to the API server and Prometheus once their addresses are given', async () => {
    const ingressOf = (objects: K8sObject[]): unknown => (one(objects, 'NetworkPolicy') as unknown as { spec: { ingress: unknown } }).spec.ingress;
    expect(ingressOf(await helmTemplate())).toEqual([{ ports: [{ port: 'https', protocol: 'TCP' }] }]);
    expect(ingressOf(await helmTemplate(['--set', 'networkPolicy.apiServerCidr=192.0.2.0/28']))).toEqual([
      { from: [{ ipBlock: { cidr: '192.0.2.0/28' } }], ports: [{ port: 'https', protocol: 'TCP' }] },
      { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 'https', protocol: 'TCP' }] },
    ]);
    expect(find(await helmTemplate(['--set', 'networkPolicy.enabled=false']), 'NetworkPolicy')).toEqual([]);
  });

  it('gives the server the API server\'s client CA and names to verify reviews with', async () => {
    const objects = await helmTemplate(['--set', 'apiServerAuthentication.clientCAConfigMap=apiserver-webhook-client-ca', '--set', 'apiServerAuthentication.clientNames={kube-apiserver,apiserver-2}']);
    const config = loadConfig({ ...envOf(objects), RD_NAMESPACE: 'resource-distributor', POD_NAME: 'pod' });
    expect(config.webhookClientNames).toEqual(['kube-apiserver', 'apiserver-2']);
    const spec = (one(objects, 'Deployment') as unknown as { spec: { template: { spec: { volumes: { name: string; configMap: { name: string } }[]; containers: { volumeMounts: { name: string; mountPath: string }[] }[] } } } }).spec.template.spec;
    expect(spec.volumes).toEqual([{ name: 'webhook-client-ca', configMap: { name: 'apiserver-webhook-client-ca' } }]);
    const mount = spec.containers[0]!.volumeMounts.find((m) => m.name === 'webhook-client-ca');
    expect(config.webhookClientCaFile).toBe(`${mount?.mountPath}/ca.crt`);
    expect(envOf(await helmTemplate())).not.toHaveProperty('RD_WEBHOOK_CLIENT_CA_FILE');
  });

  it('spreads the replicas over nodes by default; affinity replaces that, null removes it; topologySpreadConstraints count this release\'s pods', async () => {
    const preferOnePerNode = { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'resource-distributor' } } } }] } };
    expect(podOf(await helmTemplate()).spec.affinity).toEqual(preferOnePerNode);
    const zones = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a', 'b'] }] }] } } };
    expect(podOf(await helmTemplate(['--set-json', `affinity=${JSON.stringify(zones)}`])).spec.affinity).toEqual(zones);
    expect(podOf(await helmTemplate(['--set', 'affinity=null'])).spec).not.toHaveProperty('affinity');

    const spread = [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { tier: 'control' } } },
    ];
    expect(podOf(await helmTemplate(['--set-json', `topologySpreadConstraints=${JSON.stringify(spread)}`])).spec.topologySpreadConstraints).toEqual([
      { ...spread[0], labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'resource-distributor' } } },
      spread[1],
    ]);
    expect(podOf(await helmTemplate()).spec).not.toHaveProperty('topologySpreadConstraints');
  });

  it('adds podAnnotations and podLabels to the pods, keeping the selector label, never the conversion Service\'s (each replica sets it on its own pod)', async () => {
    const pod = podOf(
      await helmTemplate(['--set', 'podAnnotations.example\\.com/owner=platform', '--set', 'podLabels.team=platform', '--set', 'podLabels.app\\.kubernetes\\.io/name=other', '--set-string', 'podLabels.resource-distributor\\.io/serves-conversion=true']),
    );
    expect(pod.metadata.annotations).toEqual({ 'example.com/owner': 'platform' });
    expect(pod.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'resource-distributor', team: 'platform' });
    expect(podOf(await helmTemplate()).metadata).not.toHaveProperty('annotations');
  });

  it('runs as the ServiceAccount it creates (named and annotated as asked), or as an existing one it binds its roles to', async () => {
    const created = await helmTemplate(['--set', 'serviceAccount.name=distributor', '--set', 'serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn=arn:aws:iam::1:role/rd']);
    expect(one(created, 'ServiceAccount').metadata).toMatchObject({ name: 'distributor', annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/rd' } });
    expect(podOf(created).spec.serviceAccountName).toBe('distributor');

    const existing = await helmTemplate(['--set', 'serviceAccount.create=false', '--set', 'serviceAccount.name=platform-sa']);
    expect(find(existing, 'ServiceAccount')).toEqual([]);
    expect(podOf(existing).spec.serviceAccountName).toBe('platform-sa');
    for (const binding of [one(existing, 'ClusterRoleBinding'), one(existing, 'RoleBinding')] as unknown as { subjects: unknown[]; roleRef: { name: string } }[]) {
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'platform-sa', namespace: 'resource-distributor' }]);
      expect(binding.roleRef.name).toBe('resource-distributor');
    }
  });

  it('takes the pod and container securityContext from values, today\'s restricted ones by default', async () => {
    const defaults = podOf(await helmTemplate());
    expect(defaults.spec.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(defaults.spec.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    const changed = podOf(await helmTemplate(['--set', 'podSecurityContext.runAsUser=2000', '--set', 'podSecurityContext.fsGroup=2000', '--set', 'securityContext.capabilities=null']));
    expect(changed.spec.securityContext).toMatchObject({ runAsUser: 2000, fsGroup: 2000, runAsNonRoot: true });
    expect(changed.spec.containers[0]!.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true });
  });

  it('passes extraEnv to the container after the settings', async () => {
    const objects = await helmTemplate(['--set-json', 'extraEnv=[{"name":"NODE_OPTIONS","value":"--max-old-space-size=384"},{"name":"HTTPS_PROXY","valueFrom":{"secretKeyRef":{"name":"proxy","key":"url"}}}]', '--set', 'settings.RD_POD_WAIT=1s']);
    const env = containerOf(objects).env;
    expect(env.slice(-3)).toEqual([{ name: 'RD_POD_WAIT', value: '1s' }, { name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }, { name: 'HTTPS_PROXY', valueFrom: { secretKeyRef: { name: 'proxy', key: 'url' } } }]);
  });

  it('names everything after nameOverride, its pods\' label too; pulls image.digest when given', async () => {
    const objects = await helmTemplate(['--set', 'nameOverride=distributor'], 'platform', 'platform-system');
    expect(one(objects, 'Deployment').metadata.name).toBe('platform-distributor');
    expect(podOf(objects).metadata.labels).toEqual({ 'app.kubernetes.io/name': 'distributor' });
    // The conversion Service also selects the label a replica puts on its own pod while it converts (service-conversion.yaml).
    const selectors = (find(objects, 'Service') as unknown as { metadata: { name: string }; spec: { selector: unknown } }[]).map(({ metadata, spec }) => [metadata.name, spec.selector]);
    expect(Object.fromEntries(selectors)).toEqual({
      'platform-distributor': { 'app.kubernetes.io/name': 'distributor' },
      'platform-distributor-conversion': { 'app.kubernetes.io/name': 'distributor', 'resource-distributor.io/serves-conversion': 'true' },
    });
    const config = loadConfig({ ...envOf(objects), RD_NAMESPACE: 'platform-system', POD_NAME: 'pod' });
    expect(config.serviceName).toBe('platform-distributor');
    expect(find(objects, 'ValidatingWebhookConfiguration').map((o) => o.metadata.name).sort()).toEqual([config.webhookNames.distributions, config.webhookNames.namespaces].sort());

    const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
    expect(containerOf(await helmTemplate(['--set', 'image.repository=registry.example/rd', '--set', 'image.tag=ignored', '--set', `image.digest=${digest}`])).image).toBe(`registry.example/rd@${digest}`);
    expect(containerOf(await helmTemplate(['--set', 'image.repository=registry.example/rd', '--set', 'image.tag=1.2.3'])).image).toBe('registry.example/rd:1.2.3');
  });

  it('keeps a PodDisruptionBudget only with 2 replicas or more, so that a single replica never blocks a node drain', async () => {
    const minAvailable = async (args: string[]): Promise<unknown[]> => find(await helmTemplate(args), 'PodDisruptionBudget').map((pdb) => (pdb as unknown as { spec: { minAvailable: unknown } }).spec.minAvailable);
    expect(await minAvailable([])).toEqual([1]);
    expect(await minAvailable(['--set', 'replicas=3'])).toEqual([1]);
    expect(await minAvailable(['--set', 'replicas=3', '--set', 'podDisruptionBudget.minAvailable=2'])).toEqual([2]);
    expect(await minAvailable(['--set', 'replicas=3', '--set', 'podDisruptionBudget.minAvailable=50%'])).toEqual(['50%']);
    expect(await minAvailable(['--set', 'replicas=1'])).toEqual([]);
    expect(await minAvailable(['--set', 'replicas=0'])).toEqual([]);
  });

  it('accepts every value of values.yaml, each set to something other than its default, at once', async () => {
    const everything = {
      image: { repository: 'registry.example/rd', tag: '1.2.3', digest: '', pullPolicy: 'Always' },
      imagePullSecrets: [{ name: 'registry' }],
      replicas: 3,
      resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '256Mi' } },
      logLevel: 'debug',
      settings: { RD_POD_WAIT: '1s', RD_SAR_CACHE_TTL: '30s' },
      extraEnv: [{ name: 'NODE_OPTIONS', value: '--max-old-space-size=384' }],
      allowedKinds: [{ kind: 'NetworkPolicy', group: 'networking.k8s.io', resource: 'networkpolicies' }],
      extraRules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], resourceNames: ['view'], verbs: ['bind'] }],
      webhooks: { distributions: { failurePolicy: 'Fail', timeoutSeconds: 10 }, namespaces: { failurePolicy: 'Ignore', timeoutSeconds: 1 }, pods: { failurePolicy: 'Ignore', timeoutSeconds: 30 }, podMutation: { failurePolicy: 'Fail', timeoutSeconds: 2 } },
      podDisruptionBudget: { enabled: true, minAvailable: 2 },
      networkPolicy: { enabled: true, apiServerCidr: '10.0.0.0/24', prometheusNamespace: 'observability' },
      apiServerAuthentication: { clientCAConfigMap: 'apiserver-webhook-client-ca', clientNames: ['kube-apiserver'] },
      monitoring: { serviceMonitor: { enabled: true, interval: '1m30s', labels: { release: 'kube-prometheus-stack' } }, prometheusRule: { enabled: true, labels: { release: 'kube-prometheus-stack' } }, dashboard: { enabled: true, namespace: 'grafana', labels: { grafana_dashboard: '1' } } },
      crds: { install: false },
      serviceAccount: { create: true, name: 'distributor', annotations: { 'example.com/a': 'b' } },
      podSecurityContext: { runAsNonRoot: true, runAsUser: 2000, fsGroup: 2000 },
      securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
      podAnnotations: { 'example.com/a': 'b' },
      podLabels: { team: 'platform' },
      affinity: { nodeAffinity: {} },
      topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' }],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'platform', effect: 'NoSchedule' }],
      priorityClassName: 'system-cluster-critical',
      nameOverride: 'distributor',
      fullnameOverride: 'platform-distributor',
    };
    const defaults = parse(await readFile(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(everything).sort()).toEqual(Object.keys(defaults).sort());
    const dir = await mkdtemp(join(tmpdir(), 'rd-values-'));
    temporary.push(dir);
    await writeFile(join(dir, 'values.yaml'), stringify(everything));
    const { stdout } = await run('helm', ['lint', '--strict', CHART, '--values', join(dir, 'values.yaml')]);
    expect(stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
    const objects = await helmTemplate(['--values', join(dir, 'values.yaml')]);
    expect(find(objects, 'CustomResourceDefinition')).toEqual([]);
    expect(containerOf(objects).image).toBe('registry.example/rd:1.2.3');
  });

  it.each([
    ['a setting the chart derives', ['--set', 'settings.RD_MODE=local'], 'settings.RD_MODE: set by the chart'],
    ['a setting that is not RD_*', ['--set', 'settings.NODE_OPTIONS=--inspect'], 'settings.NODE_OPTIONS: only RD_* settings'],
    ['client names without the CA that signs them', ['--set', 'apiServerAuthentication.clientNames={kube-apiserver}'], 'apiServerAuthentication.clientNames: needs apiServerAuthentication.clientCAConfigMap'],
    ['an allowed kind without its resource', ['--set-json', 'allowedKinds=[{"kind":"CronJob","group":"batch"}]'], 'allowedKinds: every entry needs kind and resource'],
    ['a setting in extraEnv', ['--set-json', 'extraEnv=[{"name":"RD_POD_WAIT","value":"1s"}]'], 'extraEnv: RD_POD_WAIT is a setting: put it in settings'],
    ['POD_NAME in extraEnv', ['--set-json', 'extraEnv=[{"name":"POD_NAME","value":"x"}]'], 'extraEnv: POD_NAME is set by the chart'],
    ['an existing ServiceAccount without its name', ['--set', 'serviceAccount.create=false'], 'serviceAccount.name: needed with serviceAccount.create=false'],
    ['a budget that would block every drain', ['--set', 'podDisruptionBudget.minAvailable=2'], 'podDisruptionBudget.minAvailable: 2 of 2 replicas would keep every node drain from evicting a replica'],
    // values.schema.json: refused before anything renders, instead of being ignored.
    ['an unknown value', ['--set', 'replicaCount=5'], "at '': additional properties 'replicaCount' not allowed"],
    ['an unknown nested value', ['--set', 'webhooks.distribution.timeoutSeconds=10'], "at '/webhooks': additional properties 'distribution' not allowed"],
    ['an unknown log level', ['--set', 'logLevel=verbose'], "at '/logLevel': value must be one of 'trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'"],
    ['a webhook timeout over 30 s', ['--set', 'webhooks.distributions.timeoutSeconds=60'], "at '/webhooks/distributions/timeoutSeconds': maximum: got 60, want 30"],
    ['a webhook timeout under 1 s', ['--set', 'webhooks.pods.timeoutSeconds=0'], "at '/webhooks/pods/timeoutSeconds': minimum: got 0, want 1"],
    ['a failurePolicy in the wrong case', ['--set', 'webhooks.podMutation.failurePolicy=fail'], "at '/webhooks/podMutation/failurePolicy': value must be one of 'Fail', 'Ignore'"],
    ['crds.install that is not a boolean', ['--set', 'crds.install=no'], "at '/crds/install': got string, want boolean"],
    ['a label value that is not a string', ['--set', 'monitoring.dashboard.labels.grafana_dashboard=1'], "at '/monitoring/dashboard/labels/grafana_dashboard': got number, want string"],
    ['a digest that is not one', ['--set', 'image.digest=latest'], "at '/image/digest': 'latest' does not match pattern"],
  ])('refuses %s with a message', async (_what, args, message) => {
    expect((await failureOf(helmTemplate(args))).stderr).toContain(message);
  });

  it('is accepted by the API server: helm template applied with a server-side dry run', async () => {
    const namespace = uniqueName('chart');
    // As `helm install --create-namespace` does.
    await loadKubeConfig().makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    // The ServiceMonitor and PrometheusRule kinds exist only where the Prometheus Operator's CRDs
    // are installed, which this control plane does not have: those two are checked by the
    // rendering test above and by promtool (monitoring.test.ts), not by the API server.
    console.log('chart dry run: ServiceMonitor and PrometheusRule left out (no Prometheus Operator CRDs on this control plane)');
    const args = setting(OPT_IN_VALUES.filter((value) => !/serviceMonitor|prometheusRule/.test(value)));
    const rendered = (await run('helm', ['template', 'chart-e2e', CHART, '--namespace', namespace, ...args])).stdout;
    const objects = objectsOf(rendered);
    expect(find(objects, 'ServiceMonitor')).toEqual([]);
    // The shared control plane's CRD converts through a URL (no Service routes here), which a
    // merge with the chart's Service would make invalid: the CRD is checked whole, as a replace.
    const isCrd = (o: (typeof objects)[number]): boolean => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'resourcedistributions.apps.kruise.io';
    const rest = objects.filter((o) => !isCrd(o));
    const { stdout } = await run('kubectl', ['apply', '--server-side', '--dry-run=server', '--field-manager=helm', '-f', '-'], { input: rest.map((o) => JSON.stringify(o)).join('\n') });
    const applied = stdout.split('\n').filter((line) => line.includes('serverside-applied (server dry run)'));
    expect(applied).toHaveLength(rest.length);
    const crd = objects.find(isCrd);
    const live = JSON.parse((await run('kubectl', ['get', 'crd', 'resourcedistributions.apps.kruise.io', '-o', 'json'])).stdout) as { metadata: { resourceVersion: string } };
    const replaced = await run('kubectl', ['replace', '--dry-run=server', '-f', '-'], { input: JSON.stringify({ ...crd, metadata: { ...crd?.metadata, resourceVersion: live.metadata.resourceVersion } }) });
    expect(replaced.stdout).toContain('replaced (server dry run)');
  });

  it('is accepted by the API server with the pod values set too (a server-side dry run)', async () => {
    const namespace = uniqueName('chart-values');
    await loadKubeConfig().makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    const rendered = (
      await run('helm', [
        'template', 'values-e2e', CHART, '--namespace', namespace,
        '--set', 'crds.install=false', '--set', 'replicas=3', '--set', 'podDisruptionBudget.minAvailable=2', '--set', 'nameOverride=distributor',
        '--set', `image.digest=sha256:${'0123456789abcdef'.repeat(4)}`,
        '--set', 'serviceAccount.annotations.example\\.com/role=distributor', '--set', 'podAnnotations.example\\.com/owner=platform', '--set', 'podLabels.team=platform',
        '--set', 'podSecurityContext.fsGroup=1000',
        '--set-json', 'topologySpreadConstraints=[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}]',
        '--set-json', 'extraEnv=[{"name":"NODE_OPTIONS","value":"--max-old-space-size=384"},{"name":"HTTPS_PROXY","valueFrom":{"secretKeyRef":{"name":"proxy","key":"url","optional":true}}}]',
      ])
    ).stdout;
    const { stdout } = await run('kubectl', ['apply', '--server-side', '--dry-run=server', '--field-manager=helm', '-f', '-'], { input: rendered });
    expect(stdout.split('\n').filter((line) => line.includes('serverside-applied (server dry run)'))).toHaveLength(objectsOf(rendered).length);
  });

  it('where the CRDs exist without Helm\'s ownership metadata (kubectl apply -k), helm install --dry-run=server refuses them; with crds.install=false it goes through, and its notes say how to check', async () => {
    // The CRDs of this control plane come from webhook-config/crd, as `kubectl apply -k` installs them.
    const release = uniqueName('chart-install');
    const name = `${release}-resource-distributor`;
    const install = (args: string[]): Promise<ToolResult> => run('helm', ['install', release, CHART, '--namespace', release, '--create-namespace', '--dry-run=server', ...args]);
    expect((await failureOf(install([]))).stderr).toMatch(
      /CustomResourceDefinition "(objectsyncs\.sync\.rustrial\.org|resourcedistributions\.apps\.kruise\.io)" in namespace "" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key "app\.kubernetes\.io\/managed-by": must be set to "Helm"/,
    );
    const { stdout } = await install(['--set', 'crds.install=false', '--set', 'replicas=1']);
    const [manifest, notes] = stdout.split('\nNOTES:\n') as [string, string];
    expect(manifest).toContain('kind: Deployment');
    expect(manifest).not.toContain('kind: CustomResourceDefinition');
    for (const line of [
      `No CRDs (crds.install=false)`,
      `kubectl -n ${release} rollout status deployment/${name}`,
      `kubectl -n ${release} get lease ${name} -o jsonpath='{.spec.holderIdentity}{"\\n"}'`,
      `kubectl -n ${release} logs deployment/${name}`,
      'kubectl get resourcedistributions',
      'WARNING: with replicas: 1 there is no PodDisruptionBudget',
    ]) {
      expect(notes).toContain(line);
    }
  });
});
