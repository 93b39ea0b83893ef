// Migration from a running OpenKruise, as a user does it, for any build of kruise-manager (the
// v1.9.0 Go module in CI, a source tree of OpenKruise master on demand): kruise-manager runs with
// ResourceDistributionGate on, under OpenKruise's own ClusterRole, its CRD serving v1alpha1 and
// v1beta1 and storing v1beta1 through its conversion webhook, and has made its copies. Then the
// documented switch, while a client keeps creating and updating distributions in both versions
// and creating namespaces: OpenKruise loses the right to update CRDs (else it takes the CRD's
// conversion back), our product starts next to it and points the conversion at itself, our CRD
// goes over OpenKruise's, OpenKruise's webhook configurations are removed, kruise-manager stops.
// Not one request may fail; every copy is kept (same uid) with at most one write; the statuses go
// on in our words; kubectl reads both versions. On a control plane of its own: OpenKruise's
// webhooks and CRD are not for a shared one.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, Watch, type KubeConfig } from '@kubernetes/client-node';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, PLURAL } from '../../../src/domain/types.js';
import { DISTRIBUTION_CRD as RD_CRD } from '../../../src/k8s/crd-conversion.js';
import { startLocalServer, type RunningServer } from '../../../src/main.js';
import { createMetrics } from '../../../src/metrics.js';
import { ensureTool, startControlPlane, waitForCrdEstablished, type ControlPlane } from '../../control-plane/index.js';
import { applyKruiseCrds, startKruise } from '../../control-plane/kruise-manager.js';
import type { ManagedProcess } from '../../control-plane/processes.js';
import { connectionOf } from '../../kube-client.js';
import { uniqueName, waitFor } from './cluster.js';
import { startSwitchTraffic, type SwitchTraffic, type TrafficResult } from './kruise-switch-traffic.js';

export interface KruiseBuild {
  /** As the test and its output name it: `v1.9.0`, `master`. */
  version: string;
  /** OpenKruise's source tree: config/crd/bases, config/rbac/role.yaml, config/webhook/manifests.yaml. */
  sourceDir: () => Promise<string>;
  /** kruise-manager built from that tree. */
  binary: () => Promise<string>;
}

const KRUISE_NAMESPACE = 'kruise-system';
const KRUISE_USER = `system:serviceaccount:${KRUISE_NAMESPACE}:kruise-manager`;
const KRUISE_ROLE = 'kruise-manager-role';
const execFileAsync = promisify(execFile);

interface Copy {
  namespace: string;
  name: string;
  uid: string;
}

interface Running {
  plane: ControlPlane;
  kubectlPath: string;
  kruise?: ManagedProcess;
  product?: RunningServer;
  stopWatch?: () => void;
}

async function kubectl(running: Running, args: string[], input?: string): Promise<string> {
  const child = execFileAsync(running.kubectlPath, ['--kubeconfig', running.plane.kubeconfigPath, ...args], { maxBuffer: 64 * 1024 * 1024 });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

/**
 * OpenKruise's webhook configurations with only what concerns distributions, from the source's
 * config/webhook/manifests.yaml: kruise-manager fills in its address and caBundle.
 */
async function kruiseWebhooks(source: string): Promise<string> {
  const documents = parseAllDocuments(await readFile(join(source, 'config/webhook/manifests.yaml'), 'utf8')).map((d) => d.toJSON() as { kind: string; webhooks: { name: string; clientConfig: { service: object } }[] });
  const validating = documents.find((d) => d.kind === 'ValidatingWebhookConfiguration');
  const webhook = validating?.webhooks.find((w) => w.name === 'vresourcedistribution.kb.io');
  if (webhook === undefined) throw new Error(`no vresourcedistribution.kb.io in ${source}/config/webhook/manifests.yaml`);
  webhook.clientConfig.service = { ...webhook.clientConfig.service, name: 'kruise-webhook-service', namespace: KRUISE_NAMESPACE };
  return [
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: 'kruise-mutating-webhook-configuration' }, webhooks: [] },
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'kruise-validating-webhook-configuration' }, webhooks: [webhook] },
  ]
    .map((document) => stringify(document))
    .join('---\n');
}

/** OpenKruise's ClusterRole as its chart names it, bound to kruise-manager's ServiceAccount. */
async function kruiseRbac(source: string): Promise<string> {
  const role = parse(await readFile(join(source, 'config/rbac/role.yaml'), 'utf8')) as { metadata: { name: string } };
  role.metadata.name = KRUISE_ROLE;
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'kruise-manager-rolebinding' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: KRUISE_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: 'kruise-manager', namespace: KRUISE_NAMESPACE }],
  };
  const account = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'kruise-manager', namespace: KRUISE_NAMESPACE } };
  return [role, binding, account].map((document) => stringify(document)).join('---\n');
}

/** The admin kubeconfig, acting as kruise-manager's ServiceAccount: OpenKruise's RBAC applies to it. */
async function kruiseKubeconfig(plane: ControlPlane): Promise<string> {
  const config = parse(await readFile(plane.kubeconfigPath, 'utf8')) as { users: { user: Record<string, unknown> }[] };
  for (const entry of config.users) entry.user.as = KRUISE_USER;
  const path = join(plane.dir, 'kruise-manager.kubeconfig');
  await writeFile(path, stringify(config));
  return path;
}

/** Every change to the ConfigMaps named `names`, per namespace/name, from now on. */
async function countWrites(kc: KubeConfig, names: Set<string>): Promise<{ writes: Map<string, string[]>; stop: () => void }> {
  const writes = new Map<string, string[]>();
  const request = await new Watch(kc).watch('/api/v1/configmaps', { allowWatchBookmarks: false }, (type: string, object: { metadata?: { name?: string; namespace?: string } }) => {
    const name = object.metadata?.name ?? '';
    if (!names.has(name)) return;
    const key = `${object.metadata?.namespace ?? ''}/${name}`;
    writes.set(key, [...(writes.get(key) ?? []), type]);
  }, () => undefined);
  return { writes, stop: () => request.abort() };
}

const configMap = (name: string): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { mode: 'kruise' } });

async function copies(core: CoreV1Api, names: string[], namespaces: string[]): Promise<Copy[]> {
  const found: Copy[] = [];
  for (const namespace of namespaces) {
    for (const name of names) {
      const cm = await core.readNamespacedConfigMap({ name, namespace }).catch(() => undefined);
      if (cm !== undefined) found.push({ namespace, name, uid: cm.metadata?.uid ?? '' });
    }
  }
  return found;
}

/** Takes `update` and `patch` of CRDs from OpenKruise's ClusterRole, and waits until the authorizer says so. */
async function revokeCrdWrites(running: Running): Promise<void> {
  const role = JSON.parse(await kubectl(running, ['get', 'clusterrole', KRUISE_ROLE, '-o', 'json'])) as { rules: { resources?: string[]; verbs: string[] }[] };
  for (const rule of role.rules) {
    if (rule.resources?.includes('customresourcedefinitions')) rule.verbs = rule.verbs.filter((verb) => !['update', 'patch'].includes(verb));
  }
  await kubectl(running, ['replace', '-f', '-'], JSON.stringify(role));
  await waitFor(async () => {
    const answer = await kubectl(running, ['auth', 'can-i', 'update', 'customresourcedefinitions', `--as=${KRUISE_USER}`]).catch((error: unknown) => (error as { stdout?: string }).stdout ?? '');
    return answer.trim() === 'no' ? true : undefined;
  }, { what: "OpenKruise's right to update CRDs gone" });
}

/**
 * Our CRD over OpenKruise's, replaced whole as Helm's adoption of it does, but for its conversion:
 * the address and caBundle our product has put there stay (Helm's three-way merge keeps a
 * caBundle the chart does not set).
 */
async function replaceCrd(running: Running): Promise<void> {
  const live = JSON.parse(await kubectl(running, ['get', 'crd', RD_CRD, '-o', 'json'])) as { metadata: { resourceVersion: string }; spec: { conversion: unknown } };
  const ours = parse(await readFile(`webhook-config/crd/${RD_CRD}.yaml`, 'utf8')) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  const body = { ...ours, metadata: { ...ours.metadata, resourceVersion: live.metadata.resourceVersion }, spec: { ...ours.spec, conversion: live.spec.conversion } };
  await kubectl(running, ['replace', '-f', '-'], JSON.stringify(body));
}

async function conversionUrl(running: Running): Promise<string> {
  return kubectl(running, ['get', 'crd', RD_CRD, '-o', 'jsonpath={.spec.conversion.webhook.clientConfig.url}']);
}

async function expectKeptWithOneWrite(core: CoreV1Api, before: Copy[], writes: Map<string, string[]>, names: string[], namespaces: string[], version: string): Promise<void> {
  const after = await copies(core, names, namespaces);
  expect(after).toEqual(before);
  const sample = await core.readNamespacedConfigMap({ name: before[0]?.name ?? '', namespace: before[0]?.namespace ?? '' });
  console.log(`[${version}] a copy after the switch: labels ${JSON.stringify(sample.metadata?.labels)}, owner ${JSON.stringify(sample.metadata?.ownerReferences)}`);
  const perCopy = Object.fromEntries(before.map((copy) => [`${copy.namespace}/${copy.name}`, (writes.get(`${copy.namespace}/${copy.name}`) ?? []).filter((type) => type !== 'ADDED')]));
  console.log(`[${version}] writes per copy during the switch: ${JSON.stringify(perCopy)}`);
  for (const events of Object.values(perCopy)) {
    expect(events.filter((type) => type === 'DELETED')).toEqual([]);
    expect(events.filter((type) => type === 'MODIFIED').length).toBeLessThanOrEqual(1);
  }
}

async function expectBothVersions(running: Running, custom: CustomObjectsApi, names: string[], label: string): Promise<void> {
  const beta = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1beta1', plural: PLURAL, name: names[1] ?? '' })) as { spec: { targets: unknown }; status: { desired: number; succeeded: number } };
  // As OpenKruise stored it (its empty lists included).
  expect(beta.spec.targets).toMatchObject({ namespaceSelector: { matchLabels: { team: label } } });
  expect(beta.status).toMatchObject({ desired: 3, succeeded: 3 });
  const alpha = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: PLURAL, name: names[1] ?? '' })) as { spec: { targets: unknown } };
  expect(alpha.spec.targets).toMatchObject({ namespaceLabelSelector: { matchLabels: { team: label } } });
  expect(JSON.stringify(alpha.spec.targets)).not.toContain('namespaceSelector');
  for (const resource of [`${PLURAL}.v1beta1.${GROUP}`, `${PLURAL}.v1alpha1.${GROUP}`]) {
    const table = await kubectl(running, ['get', resource, ...names]);
    expect(table.split('\n')[0]?.split(/\s+/)).toEqual(['NAME', 'TOTAL', 'SUCCEED', 'FAILED', 'AGE']);
    for (const name of names) expect(table).toContain(name);
  }
}

/** The control plane with every CRD of OpenKruise's (kruise-manager needs each), its RBAC and webhooks, and kruise-manager started. */
async function startWithKruise(build: KruiseBuild): Promise<Running> {
  const [source, binary, kubectlPath] = await Promise.all([build.sourceDir(), build.binary(), ensureTool('kubectl')]);
  const plane = await startControlPlane({ beforeControllerManager: (kc) => applyKruiseCrds(kc, source) });
  const running: Running = { plane, kubectlPath };
  await kubectl(running, ['create', 'namespace', KRUISE_NAMESPACE]);
  await kubectl(running, ['apply', '-f', '-'], await kruiseRbac(source));
  await kubectl(running, ['apply', '-f', '-'], await kruiseWebhooks(source));
  running.kruise = await startKruise(await kruiseKubeconfig(plane), plane.dir, { binary });
  return running;
}

async function kruiseDistributes(running: Running, version: string, names: string[], label: string, namespaces: string[]): Promise<Copy[]> {
  const core = running.plane.kubeConfig.makeApiClient(CoreV1Api);
  const custom = running.plane.kubeConfig.makeApiClient(CustomObjectsApi);
  const withLog = async (error: unknown): Promise<never> => {
    throw new Error(`${String(error)}\nkruise-manager log:\n${(await running.kruise?.tail(8_000)) ?? ''}`);
  };
  for (let i = 0; i < 3; i++) {
    const name = uniqueName('migrate');
    namespaces.push(name);
    await core.createNamespace({ body: { metadata: { name, labels: { team: label } } } });
  }
  // Its webhook answers once its certificates are in place.
  await waitFor(
    async () => {
      const body = { apiVersion: `${GROUP}/v1alpha1`, kind: 'ResourceDistribution', metadata: { name: names[0] }, spec: { resource: configMap(names[0] ?? ''), targets: { includedNamespaces: { list: namespaces.slice(0, 2).map((name) => ({ name })) } } } };
      return custom.createClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: PLURAL, body }).then(() => true, () => undefined);
    },
    { what: "OpenKruise's webhook and the first distribution", timeoutMs: 180_000, intervalMs: 2_000 },
  ).catch(withLog);
  // The second in v1beta1, OpenKruise's storage version.
  await custom.createClusterCustomObject({
    group: GROUP,
    version: 'v1beta1',
    plural: PLURAL,
    body: { apiVersion: `${GROUP}/v1beta1`, kind: 'ResourceDistribution', metadata: { name: names[1] }, spec: { resource: configMap(names[1] ?? ''), targets: { namespaceSelector: { matchLabels: { team: label } } } } },
  });
  const before = await waitFor(async () => {
    const found = await copies(core, names, namespaces);
    return found.length === 5 ? found : undefined;
  }, { what: "OpenKruise's copies", timeoutMs: 60_000 }).catch(withLog);
  console.log(`[${version}] copies made by kruise-manager: ${String(before.length)}`);
  const status = await waitFor(async () => {
    const rd = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1alpha1', plural: PLURAL, name: names[1] ?? '' })) as { status?: { desired?: number; succeeded?: number } };
    return rd.status?.succeeded === 3 ? rd.status : undefined;
  }, { what: "OpenKruise's status" });
  expect(status).toMatchObject({ desired: 3, succeeded: 3 });
  return before;
}

const SWITCH_PHASES = ['kruise', 'kruise, its CRD writes revoked', 'ours started next to kruise', 'our CRD over kruise', "kruise's webhooks removed", 'kruise stopped', 'ours alone'];
const REQUESTS = ['create namespace', 'create v1alpha1', 'update v1alpha1', 'create v1beta1', 'update v1beta1'];

/** The documented steps, in their order, each named as a phase of the client's requests. */
async function switchOver(running: Running, traffic: Pick<SwitchTraffic, 'phase' | 'round'>, metrics: ReturnType<typeof createMetrics>): Promise<void> {
  traffic.phase('kruise, its CRD writes revoked');
  await revokeCrdWrites(running);
  await traffic.round();
  traffic.phase('ours started next to kruise');
  running.product = await startLocalServer({
    connection: connectionOf(running.plane.kubeConfig),
    metrics,
    env: { RD_REGISTER_CONVERSION: 'true' },
    overrides: { shutdownDelayMs: 0 },
  });
  expect(await conversionUrl(running)).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/convert$/);
  await traffic.round();
  traffic.phase('our CRD over kruise');
  await replaceCrd(running);
  await waitForCrdEstablished(running.plane.kubeConfig, RD_CRD);
  await traffic.round();
  traffic.phase("kruise's webhooks removed");
  await kubectl(running, ['delete', 'validatingwebhookconfiguration', 'kruise-validating-webhook-configuration']);
  await kubectl(running, ['delete', 'mutatingwebhookconfiguration', 'kruise-mutating-webhook-configuration']);
  await traffic.round();
  traffic.phase('kruise stopped');
  await running.kruise?.stop(10_000);
  await traffic.round();
}

function reportTraffic(version: string, result: TrafficResult): void {
  const total = Object.values(result.requests).reduce((sum, n) => sum + n, 0);
  console.log(`[${version}] requests during the switch: ${String(total)}, failed: ${String(result.failures.length)}; per phase: ${JSON.stringify(result.requests)}`);
  for (const failure of result.failures.slice(0, 20)) console.log(`[${version}] failed: ${failure}`);
}

/** The whole migration test for one build of kruise-manager. */
export function describeKruiseMigration(build: KruiseBuild): void {
  let running: Running | undefined;
  const need = (): Running => {
    if (running === undefined) throw new Error('no control plane');
    return running;
  };

  beforeAll(async () => {
    running = await startWithKruise(build);
  }, 1_800_000);

  afterAll(async () => {
    running?.stopWatch?.();
    await running?.product?.stop();
    await running?.kruise?.stop();
    await running?.plane.stop();
  });

  describe(`migration from a running OpenKruise ${build.version}`, () => {
    const names = [uniqueName('kruise-listed'), uniqueName('kruise-selected')];
    const label = uniqueName('team');
    const namespaces: string[] = [];
    let before: Copy[] = [];

    it("OpenKruise's manager distributes (v1beta1 stored, its own conversion webhook)", async () => {
      before = await kruiseDistributes(need(), build.version, names, label, namespaces);
    }, 300_000);

    it('during the switch no request fails; after it every copy is kept (same uid) with at most one write, statuses go on, kubectl reads both versions', async () => {
      const { plane } = need();
      const core = plane.kubeConfig.makeApiClient(CoreV1Api);
      const custom = plane.kubeConfig.makeApiClient(CustomObjectsApi);
      const watched = await countWrites(plane.kubeConfig, new Set(names));
      need().stopWatch = watched.stop;
      const traffic = await startSwitchTraffic(plane.kubeConfig, uniqueName('switch').slice(0, 20));
      // Some requests while OpenKruise alone serves.
      await traffic.round();
      const metrics = createMetrics();
      await switchOver(need(), traffic, metrics);
      traffic.phase('ours alone');
      for (const name of names) {
        await waitFor(async () => {
          const rd = (await custom.getClusterCustomObject({ group: GROUP, version: 'v1beta1', plural: PLURAL, name })) as { status?: { conditions?: { type: string; status: string }[] } };
          return rd.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
        }, { what: `our status of ${name}`, timeoutMs: 60_000 });
      }
      // A sweep's worth of time for anything else to happen.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const result = await traffic.stop();
      reportTraffic(build.version, result);
      expect(result.failures).toEqual([]);
      // The client was at work through every step, in both versions.
      for (const phase of SWITCH_PHASES) {
        for (const request of REQUESTS) expect(result.requests[`${phase}: ${request}`] ?? 0, `${phase}: ${request}`).toBeGreaterThan(0);
      }
      expect(await conversionUrl(need())).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/convert$/);
      // It did try to take the CRD back: without step 1 the conversion would have gone with it.
      const kruiseLog = await readFile(join(plane.dir, 'kruise-manager.log'), 'utf8');
      expect(kruiseLog).toMatch(/failed to update CRD resourcedistributions\.apps\.kruise\.io: .*forbidden/);
      await expectKeptWithOneWrite(core, before, watched.writes, names, namespaces, build.version);
      const writes = (await metrics.apiRequests.get()).values.filter((v) => v.labels.resource === 'configmaps' && ['create', 'update', 'delete'].includes(String(v.labels.verb)));
      console.log(`[${build.version}] the product's ConfigMap writes: ${JSON.stringify(writes.map((v) => [v.labels.verb, v.value]))}`);
      await expectBothVersions(need(), custom, names, label);
    }, 600_000);

    it('with v1beta1 in status.storedVersions, a CRD without v1beta1 is refused and ours is applied again', async () => {
      const crd = JSON.parse(await kubectl(need(), ['get', 'crd', RD_CRD, '-o', 'json'])) as { status: { storedVersions: string[] } };
      console.log(`[${build.version}] status.storedVersions after the switch: ${JSON.stringify(crd.status.storedVersions)}`);
      expect(crd.status.storedVersions).toContain('v1beta1');
      const ours = parse(await readFile(`webhook-config/crd/${RD_CRD}.yaml`, 'utf8')) as { spec: { versions: { name: string; storage: boolean }[]; conversion?: unknown } };
      const alphaOnly = structuredClone(ours);
      alphaOnly.spec.versions = alphaOnly.spec.versions.filter((v) => v.name === 'v1alpha1').map((v) => ({ ...v, storage: true }));
      delete alphaOnly.spec.conversion;
      const refused = await kubectl(need(), ['apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', '-'], stringify(alphaOnly)).then(
        () => '',
        (error: unknown) => String((error as { stderr?: string }).stderr ?? error),
      );
      expect(refused).toMatch(/storedVersions\[\d\]: Invalid value: "v1beta1": missing from spec.versions/);
      await replaceCrd(need());
    });
  });
}
