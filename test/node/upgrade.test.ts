// Our own users' upgrade: the release before ResourceDistribution was served as v1beta1 (its chart
// from the repository's history, its image built from that commit: previous-release.ts) installed
// with distributions and their copies in place, then `helm upgrade` to this chart and image while
// namespaces keep arriving and a distribution keeps being edited. Every copy is kept, no request
// fails, and the objects are read in both versions afterwards; what was stored as v1alpha1 stays
// so until it is written again (docs/operations/upgrade.md).
import { AppsV1Api, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, Watch, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { GROUP, PLURAL, VERSION } from '../../src/domain/types.js';
import { checkoutOf } from '../control-plane/index.js';
import { configMap, distribution, secret } from '../e2e/support/admission.js';
import { run } from '../e2e/support/tools.js';
import { PREVIOUS_RELEASE } from './previous-release.js';
import { adminKubeConfig, uniqueName, waitFor } from './support.js';
import { callsBetween, conversionCalls, failedBetween, webhookCalls, type ConversionCalls, type WebhookCalls } from './webhook-calls.js';

const plane = inject('nodePlane');
const image = inject('productImage');
const previousImage = inject('previousImage');
const kubeConfig = adminKubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
const apps = kubeConfig.makeApiClient(AppsV1Api);
const custom = kubeConfig.makeApiClient(CustomObjectsApi);

// The release and namespace chart.test.ts installs too: a CRD kept by `helm uninstall` (its keep
// policy) is adopted only by a release of the same name and namespace.
const RELEASE = 'resource-distributor';
const NAMESPACE = 'resource-distributor';
const CRD = `${PLURAL}.${GROUP}`;
const LABEL = 'rd-upgrade-team';
const team = uniqueName('upgrade');
const TEAM_NAMESPACES = 4;
const teamNamespaces = Array.from({ length: TEAM_NAMESPACES }, (_, i) => `${team}-${String(i)}`);
/** Two Secrets and two ConfigMaps, each to every namespace labelled for the team; the last is edited during the upgrade. */
const distributions = [
  { name: uniqueName('upgrade-token'), resource: (name: string) => secret(name), kind: 'Secret' },
  { name: uniqueName('upgrade-cert'), resource: (name: string) => secret(name), kind: 'Secret' },
  { name: uniqueName('upgrade-settings'), resource: (name: string) => configMap(name), kind: 'ConfigMap' },
  { name: uniqueName('upgrade-edited'), resource: (name: string) => configMap(name), kind: 'ConfigMap' },
] as const;
const edited = distributions[3].name;
/** A distribution whose targets no namespace matches: nothing of it changes across the upgrade. */
const quiet = uniqueName('upgrade-quiet');
const arrived: string[] = [];
let chart: { dir: string; remove: () => Promise<void> } | undefined;

interface Crd {
  spec: { versions: { name: string; served: boolean; storage: boolean }[]; conversion?: { strategy?: string } };
  status?: { storedVersions?: string[] };
}
const readCrd = async (): Promise<Crd> => JSON.parse((await run('kubectl', ['get', 'crd', CRD, '-o', 'json'])).stdout) as Crd;

/** The apiVersion a distribution is stored under in etcd (the API server writes custom objects as JSON). */
async function storedVersion(name: string): Promise<string> {
  const key = Buffer.from(`/registry/${GROUP}/${PLURAL}/${name}`).toString('base64');
  const response = await fetch(`${plane.etcdUrl}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key }) });
  const { kvs = [] } = (await response.json()) as { kvs?: { value: string }[] };
  const value = kvs[0]?.value;
  if (value === undefined) throw new Error(`distribution ${name} is not in etcd`);
  return (JSON.parse(Buffer.from(value, 'base64').toString()) as { apiVersion: string }).apiVersion;
}

const helm = (verb: 'install' | 'upgrade', chartDir: string, repository: string, tag: string, pullPolicy: string): Promise<unknown> =>
  run('helm', [verb, RELEASE, chartDir, '--namespace', NAMESPACE, ...(verb === 'install' ? ['--create-namespace'] : []), '--set', `image.repository=${repository}`, '--set', `image.tag=${tag}`, '--set', `image.pullPolicy=${pullPolicy}`, '--wait', '--timeout', '5m']);

beforeAll(async () => {
  // chart.test.ts may have run before: its namespace going, and the CRD it kept (serving
  // v1beta1, with objects stored so) is one the previous release cannot install over.
  await waitFor(`namespace ${NAMESPACE} gone`, () => core.readNamespace({ name: NAMESPACE }).then(() => undefined, () => true), 120_000);
  await run('kubectl', ['delete', 'crd', CRD, '--ignore-not-found', '--wait']);
  chart = await checkoutOf(PREVIOUS_RELEASE, 'charts/resource-distributor');
}, 180_000);

afterAll(async () => {
  // Before the uninstall: a distribution stored in one version is deleted through the other only while a replica converts.
  for (const name of [quiet, ...distributions.map((entry) => entry.name)]) await custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }).catch(() => undefined);
  await run('helm', ['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait']).catch(() => undefined);
  await Promise.all([NAMESPACE, ...teamNamespaces, ...arrived].map((name) => core.deleteNamespace({ name }).catch(() => undefined)));
  await chart?.remove();
  // chart.test.ts may run next and install into it.
  await waitFor(`namespace ${NAMESPACE} gone`, () => core.readNamespace({ name: NAMESPACE }).then(() => undefined, () => true), 120_000);
}, 300_000);

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);
const copyPath = (kind: string, namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/${kind === 'Secret' ? 'secrets' : 'configmaps'}/${name}`;
const readCopy = async (kind: string, namespace: string, name: string): Promise<KubernetesObject | undefined> =>
  (kind === 'Secret' ? core.readNamespacedSecret({ namespace, name }) : core.readNamespacedConfigMap({ namespace, name })).catch(() => undefined);

/** Every copy of every distribution in `namespaces`: uid and resourceVersion by path, once all exist. */
async function copiesIn(namespaces: readonly string[], timeoutMs = 120_000): Promise<Map<string, { uid: string; resourceVersion: string }>> {
  const missing: string[] = [];
  return waitFor(
    `${String(namespaces.length * distributions.length)} copies`,
    async () => {
      const copies = new Map<string, { uid: string; resourceVersion: string }>();
      missing.length = 0;
      for (const namespace of namespaces) {
        for (const { name, kind } of distributions) {
          const copy = await readCopy(kind, namespace, name);
          if (copy?.metadata?.uid) copies.set(copyPath(kind, namespace, name), { uid: copy.metadata.uid, resourceVersion: copy.metadata.resourceVersion ?? '' });
          else missing.push(copyPath(kind, namespace, name));
        }
      }
      return missing.length === 0 ? copies : undefined;
    },
    timeoutMs,
    () => `missing ${missing.slice(0, 5).join(', ')}`,
  );
}

interface DistributionStatus {
  metadata: { generation: number };
  spec: { targets: Record<string, unknown> };
  status?: { desired?: number; succeeded?: number; observedGeneration?: number };
}

/** Each distribution's status once it counts `count` namespaces, all succeeded, for its current generation. */
function statusesCounting(count: number): Promise<DistributionStatus[]> {
  let last: DistributionStatus[] = [];
  return waitFor(
    `every status counting ${String(count)} namespaces`,
    async () => {
      last = await Promise.all(distributions.map(({ name }) => custom.getClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }) as Promise<DistributionStatus>));
      const current = last.every(({ metadata, status }) => status?.observedGeneration === metadata.generation && status.desired === count && status.succeeded === count);
      return current ? last : undefined;
    },
    120_000,
    () => JSON.stringify(last.map(({ status }) => status)),
  );
}

let before = new Map<string, { uid: string; resourceVersion: string }>();

it('the previous release (v1alpha1 only) installed from its chart and image: four distributions copied into the team namespaces', async () => {
  const started = Date.now();
  await helm('install', `${chart?.dir ?? ''}/charts/resource-distributor`, previousImage.repository, previousImage.tag, 'Never');
  const crd = await readCrd();
  expect(crd.spec.versions.map(({ name }) => name)).toEqual(['v1alpha1']);
  expect(crd.spec.conversion?.strategy ?? 'None').toBe('None');

  for (const namespace of teamNamespaces) await core.createNamespace({ body: { metadata: { name: namespace, labels: { [LABEL]: team } } } });
  for (const { name, resource } of distributions) {
    await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(name, resource(name), { namespaceLabelSelector: { matchLabels: { [LABEL]: team } } }) });
  }
  await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(quiet, configMap(quiet), { namespaceLabelSelector: { matchLabels: { [LABEL]: `${team}-nobody` } } }) });
  before = await copiesIn(teamNamespaces);
  await statusesCounting(TEAM_NAMESPACES);
  for (const name of [quiet, ...distributions.map((entry) => entry.name)]) expect(await storedVersion(name)).toBe(`${GROUP}/v1alpha1`);
  console.log(`[node tier] release ${previousImage.tag} installed, ${String(before.size)} copies in place, in ${seconds(started)} s`);
}, 420_000);

/** Counts each write to the copies in `paths` (every MODIFIED or DELETED event of their watches). */
async function watchWrites(paths: ReadonlySet<string>): Promise<{ writes: Map<string, number>; stop: () => void }> {
  const writes = new Map<string, number>();
  const watches: AbortController[] = [];
  for (const plural of ['secrets', 'configmaps']) {
    const list = await run('kubectl', ['get', plural, '--all-namespaces', '-o', 'jsonpath={.metadata.resourceVersion}']);
    watches.push(
      await new Watch(kubeConfig).watch(
        `/api/v1/${plural}`,
        { resourceVersion: list.stdout.trim(), labelSelector: '' },
        (phase, object: KubernetesObject) => {
          const path = `/api/v1/namespaces/${object.metadata?.namespace ?? ''}/${plural}/${object.metadata?.name ?? ''}`;
          if (paths.has(path) && phase !== 'ADDED') writes.set(path, (writes.get(path) ?? 0) + 1);
        },
        () => undefined,
      ),
    );
  }
  return { writes, stop: () => watches.forEach((watch) => watch.abort()) };
}

/** Each replica that held the Lease, in turn, from now on (the first is the one holding it now). */
async function watchLeaders(): Promise<{ holders: string[]; stop: () => void }> {
  const holders: string[] = [];
  const watch = await new Watch(kubeConfig).watch(
    `/apis/coordination.k8s.io/v1/namespaces/${NAMESPACE}/leases`,
    { fieldSelector: `metadata.name=${RELEASE}` },
    (_phase, lease: { spec?: { holderIdentity?: string } }) => {
      const holder = lease.spec?.holderIdentity ?? '';
      if (holder !== '' && holders.at(-1) !== holder) holders.push(holder);
    },
    () => undefined,
  );
  return { holders, stop: () => watch.abort() };
}

/** What a client that keeps working through the upgrade did: each request it made, and those that failed. */
interface ClientRequests {
  made: number;
  failures: string[];
  edits: number;
}

/** Creates a team namespace every 200 ms and edits the `edited` distribution (v1alpha1, the data it copies) every second until stopped. */
function keepArriving(): { requests: ClientRequests; stop: () => Promise<void> } {
  const requests: ClientRequests = { made: 0, failures: [], edits: 0 };
  let running = true;
  const attempt = async (what: string, call: () => Promise<unknown>): Promise<boolean> => {
    requests.made++;
    try {
      await call();
      return true;
    } catch (error) {
      requests.failures.push(`${what}: ${String((error as { body?: unknown }).body ?? error)}`);
      return false;
    }
  };
  const namespaces = (async () => {
    while (running) {
      const name = uniqueName(`${team}-arrival`);
      arrived.push(name);
      await attempt(`create namespace ${name}`, () => core.createNamespace({ body: { metadata: { name, labels: { [LABEL]: team } } } }));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const edits = (async () => {
    while (running) {
      const patch = { spec: { resource: { data: { revision: String(requests.edits + 1) } } } };
      const edit = (): Promise<unknown> =>
        custom.patchClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: edited, body: patch }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      if (await attempt(`edit distribution ${edited}`, edit)) requests.edits++;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  })();
  return {
    requests,
    stop: async () => {
      running = false;
      await Promise.all([namespaces, edits]);
    },
  };
}

it('helm upgrade to this version while namespaces keep arriving and a distribution keeps being edited: every copy kept, no request failed, both versions read every object, statuses go on', async () => {
  const watch = await watchWrites(new Set(before.keys()));
  const previousPods = new Set((await core.listNamespacedPod({ namespace: NAMESPACE })).items.map((pod) => pod.metadata?.name ?? ''));
  const leaders = await watchLeaders();
  const [admissionBefore, conversionBefore] = [await webhookCalls(), await conversionCalls()];
  const client = keepArriving();
  const started = Date.now();
  let rolledOut: ConversionCalls | undefined;
  try {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await helm('upgrade', 'charts/resource-distributor', image.repository, image.tag, 'IfNotPresent');
    console.log(`[node tier] helm upgrade --wait from ${previousImage.tag} to ${image.tag}: ${seconds(started)} s`);
    rolledOut = await conversionCalls();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  } finally {
    await client.stop();
  }
  const rollout = await apps.readNamespacedDeployment({ namespace: NAMESPACE, name: RELEASE });
  expect(rollout.spec?.template.spec?.containers[0]?.image).toBe(`${image.repository}:${image.tag}`);
  expect(rollout.status).toMatchObject({ updatedReplicas: 2, readyReplicas: 2 });

  // Every namespace that arrived got its copies, and the copies in place before are the same objects.
  const after = await copiesIn([...teamNamespaces, ...arrived]);
  const admission: WebhookCalls = callsBetween(admissionBefore, await webhookCalls());
  const conversion = await conversionCalls();
  watch.stop();
  leaders.stop();
  const changedUids = [...before].filter(([path, { uid }]) => after.get(path)?.uid !== uid).map(([path]) => path);
  const untouchedWrites = [...before.keys()].filter((path) => !path.endsWith(`/${edited}`)).map((path) => watch.writes.get(path) ?? 0);
  const editedWrites = [...before.keys()].filter((path) => path.endsWith(`/${edited}`)).map((path) => watch.writes.get(path) ?? 0);
  const { requests } = client;
  // A replica of the previous release that takes the lead while its watch of distributions runs
  // behind the copies may write the edited copies once from the older edit and once more from the
  // newer (this version first confirms what it holds: docs/operations/failure-modes.md).
  const previousTurns = leaders.holders.slice(1).filter((holder) => previousPods.has(holder)).length;
  const turns = leaders.holders.map((holder) => `${holder} (${previousPods.has(holder) ? 'previous' : 'this version'})`).join(' -> ');
  console.log(`[node tier] the Lease held in turn by ${turns}`);
  console.log(
    `[node tier] upgrade: ${String(before.size)} copies kept (${String(changedUids.length)} replaced); writes per copy ${String(Math.max(...untouchedWrites))} (untouched distributions), ` +
      `${String(Math.min(...editedWrites))}-${String(Math.max(...editedWrites))} (the edited one, ${String(requests.edits)} edits); ${String(arrived.length)} namespaces arrived; ` +
      `client requests ${String(requests.made)}, failed ${String(requests.failures.length)}; admission calls ${String(admission.calls)}, failed ${String(admission.failed)}, failed open ${String(admission.failedOpen)}; ` +
      `conversions ${String(conversion.calls - conversionBefore.calls)}, failed ${String(conversion.failed - conversionBefore.failed)} ` +
      `(${failedBetween(conversionBefore, rolledOut)}), ` +
      `${String(conversion.failed - (rolledOut?.failed ?? 0))} after the rollout`,
  );
  expect(changedUids).toEqual([]);
  expect(requests.failures).toEqual([]);
  expect(admission.calls).toBeGreaterThanOrEqual(requests.made);
  expect(admission).toMatchObject({ failed: 0, failedOpen: 0 });
  // A new pod's first list of distributions (v1beta1, stored as v1alpha1) fails until a pod of the
  // release converts, and is retried; no request of the client's failed (above), and no conversion
  // once the release is rolled out.
  expect(conversion.failed).toBe(rolledOut?.failed);
  expect(untouchedWrites.every((writes) => writes === 0)).toBe(true);
  expect(Math.max(...editedWrites)).toBeLessThanOrEqual(requests.edits + 2 * previousTurns);

  // Statuses go on: every distribution counts the namespaces that arrived, for its latest generation.
  await statusesCounting(TEAM_NAMESPACES + arrived.length);
  // The chart kept the CRD storing v1alpha1 (as it found it); the pods made v1beta1 its storage version once they converted.
  const manifest = (await run('helm', ['get', 'manifest', RELEASE, '--namespace', NAMESPACE])).stdout;
  expect(manifest).toMatch(/- name: v1alpha1\n\s+served: true\n\s+storage: true\n/);
  const crd = await readCrd();
  expect(crd.spec.versions.map(({ name, served, storage }) => ({ name, served, storage }))).toEqual([
    { name: 'v1alpha1', served: true, storage: false },
    { name: 'v1beta1', served: true, storage: true },
  ]);
  expect(crd.status?.storedVersions).toEqual(['v1alpha1', 'v1beta1']);
  for (const version of ['v1alpha1', 'v1beta1']) {
    const listed = JSON.parse((await run('kubectl', ['get', `${PLURAL}.${version}.${GROUP}`, '-o', 'json'])).stdout) as { items: (DistributionStatus & { metadata: { name: string } })[] };
    const ours = listed.items.filter((item) => distributions.some(({ name }) => name === item.metadata.name));
    expect(ours).toHaveLength(distributions.length);
    const selectorField = version === 'v1alpha1' ? 'namespaceLabelSelector' : 'namespaceSelector';
    for (const item of ours) expect(item.spec.targets[selectorField]).toEqual({ matchLabels: { [LABEL]: team } });
  }
}, 600_000);

it('a distribution stays stored as v1alpha1 until it is written again: the status the upgraded replicas wrote, or an edit, stores it as v1beta1', async () => {
  // Every distribution's status was written again by the new version (it counts the namespaces that arrived).
  for (const { name } of distributions) expect(await storedVersion(name)).toBe(`${GROUP}/v1beta1`);
  console.log(`[node tier] the distribution nothing happened to is stored as ${await storedVersion(quiet)}`);
});
