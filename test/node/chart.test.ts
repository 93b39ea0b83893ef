// The product installed as users install it: the chart packaged and pushed to a registry as an
// OCI artifact, `helm install oci://…` of it with the image built from the Dockerfile, its two
// replicas scheduled onto the node by kube-scheduler, the API server calling their webhooks
// through the Service (endpoint routing to a pod's address), and `helm uninstall` keeping the
// copies. (The chart's path, `helm install charts/resource-distributor`, is installed by the
// end-to-end tier: test/e2e/chart-install.test.ts.)
import { readdir, readFile } from 'node:fs/promises';
import { AdmissionregistrationV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, PolicyV1Api } from '@kubernetes/client-node';
import { afterAll, expect, inject, it } from 'vitest';
import { GROUP, PLURAL, VERSION } from '../../src/domain/types.js';
import { configMap, distribution, included, rejection, secret } from '../e2e/support/admission.js';
import { run } from '../e2e/support/tools.js';
import { publishChart, type PublishedChart } from './oci-chart.js';
import { conversionTraffic, type ConversionTraffic } from './conversion-endpoints.js';
import { callsBetween, conversionCalls, webhookCalls, type WebhookCalls } from './webhook-calls.js';
import { adminKubeConfig, createNamespace, uniqueName, waitFor, waitForPhase } from './support.js';
import { percentile, pullingPod, userPod } from './user-pods.js';

const node = inject('node');
const image = inject('productImage');
const registry = inject('registry');
const kubeConfig = adminKubeConfig();
const core = kubeConfig.makeApiClient(CoreV1Api);
const custom = kubeConfig.makeApiClient(CustomObjectsApi);
const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
const policy = kubeConfig.makeApiClient(PolicyV1Api);

const CHART = 'charts/resource-distributor';
const RELEASE = 'resource-distributor';
const NAMESPACE = 'resource-distributor';
const SELECTOR = 'app.kubernetes.io/name=resource-distributor';
const TEAM_LABEL = 'rd-node-team';
const team = uniqueName('team');
const distributionName = uniqueName('team-token');
const distributions = [distributionName];
const namespaces: string[] = [];
let published: PublishedChart | undefined;

afterAll(async () => {
  await run('helm', ['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait']).catch(() => undefined);
  for (const name of distributions) await custom.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name }).catch(() => undefined);
  await Promise.all([NAMESPACE, ...namespaces].map((name) => core.deleteNamespace({ name }).catch(() => undefined)));
  await published?.remove();
});

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);

it('helm push of the packaged chart to a registry, helm install oci://… of it: both replicas Ready on the node, one holds the Lease, the pods patched the caBundle and serve the webhooks through the Service', async () => {
  published = await publishChart(CHART, registry);
  const shown = await run('helm', ['show', 'chart', published.reference, '--version', published.version, ...published.registryFlags]);
  expect(shown.stdout).toContain(`version: ${published.version}`);
  const started = Date.now();
  await run('helm', [
    'install',
    RELEASE,
    published.reference,
    '--version',
    published.version,
    ...published.registryFlags,
    '--namespace',
    NAMESPACE,
    '--create-namespace',
    '--set',
    `image.repository=${image.repository}`,
    '--set',
    `image.tag=${image.tag}`,
    // Present on the node already (imported): the chart's default policy pulls only when missing.
    '--set',
    'image.pullPolicy=IfNotPresent',
    '--wait',
    '--timeout',
    '5m',
  ]);
  const installSeconds = seconds(started);

  const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: SELECTOR })).items;
  expect(pods).toHaveLength(2);
  for (const pod of pods) {
    expect(pod.spec?.nodeName).toBe(node.name);
    expect(pod.status?.conditions?.find((condition) => condition.type === 'Ready')?.status).toBe('True');
  }
  const names = pods.map((pod) => pod.metadata?.name);
  const lease = await waitFor('a replica holds the Lease', async () => {
    const current = await coordination.readNamespacedLease({ namespace: NAMESPACE, name: RELEASE }).catch(() => undefined);
    return current?.spec?.holderIdentity ? current : undefined;
  });
  expect(names).toContain(lease.spec?.holderIdentity);

  // The CA of the TLS Secret the pods made is what the API server verifies the webhooks with.
  const tls = await core.readNamespacedSecret({ namespace: NAMESPACE, name: `${RELEASE}-tls` });
  const ca = tls.data?.['ca.crt'];
  expect(ca).toBeTruthy();
  const validating = await admission.readValidatingWebhookConfiguration({ name: `${RELEASE}-distributions` });
  const mutating = await admission.readMutatingWebhookConfiguration({ name: `${RELEASE}-pods` });
  for (const webhook of [...(validating.webhooks ?? []), ...(mutating.webhooks ?? [])]) expect(webhook.clientConfig.caBundle).toBe(ca);

  // An invalid distribution is denied by a pod: the API server reached it through the Service.
  const invalid = distribution(uniqueName('pod-kind'), { ...secret('x'), kind: 'Pod' }, included('a'));
  const denial = await rejection(custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: invalid }));
  expect(denial.message).toContain('admission webhook "resourcedistributions.resource-distributor.io" denied the request');
  expect(denial.message).toContain('spec.resource.kind: "Pod" is not supported');
  console.log(`[node tier] helm install --wait of ${published.reference} ${published.version} with ${image.repository}:${image.tag}: 2/2 Ready in ${installSeconds} s; leader ${String(lease.spec?.holderIdentity)}`);
});

const USER_NAMESPACES = 50;

it(`${USER_NAMESPACES} namespaces created at once, each with a pod mounting a distributed ConfigMap and Secret: all Running, no FailedMount`, async () => {
  const label = { [TEAM_LABEL]: uniqueName('users') };
  const [settings, token, pull] = [uniqueName('settings'), uniqueName('token'), uniqueName('pull')];
  const dockerConfig = { auths: { [image.repository.split('/')[0] ?? '']: { auth: Buffer.from('user:password').toString('base64') } } };
  const pullSecret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: pull }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify(dockerConfig)).toString('base64') } };
  for (const [name, resource] of [
    [settings, configMap(settings)],
    [token, secret(token)],
    [pull, pullSecret],
  ] as const) {
    distributions.push(name);
    await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(name, resource, { namespaceLabelSelector: { matchLabels: label } }) });
  }

  const names = Array.from({ length: USER_NAMESPACES }, (_, i) => `${uniqueName('user')}-${String(i)}`);
  namespaces.push(...names);
  const started = Date.now();
  const running = await Promise.all(
    names.map(async (namespace) => {
      const created = Date.now();
      // As a user's manifest does: the namespace, then its pod (once ServiceAccount admission lets it in).
      await createNamespace(core, namespace, label);
      await core.createNamespacedPod({ namespace, body: userPod(node.name, settings, token, pull) });
      await waitForPhase(core, namespace, 'app', 'Running', 300_000);
      return (Date.now() - created) / 1000;
    }),
  );
  const events = (await Promise.all(names.map((namespace) => core.listNamespacedEvent({ namespace })))).flatMap((list) => list.items);
  const failures = events.filter((event) => event.reason === 'FailedMount' || event.reason === 'CreateContainerConfigError');
  console.log(
    `[node tier] ${USER_NAMESPACES} namespaces at once: ${running.length}/${USER_NAMESPACES} pods Running in ${seconds(started)} s; ` +
      `namespace create -> pod Running p50 ${percentile(running, 50).toFixed(1)} s, p99 ${percentile(running, 99).toFixed(1)} s; ` +
      `${failures.length} FailedMount/CreateContainerConfigError events`,
  );
  expect(running).toHaveLength(USER_NAMESPACES);
  expect(failures.map((event) => `${event.metadata.namespace ?? ''}: ${event.reason ?? ''} ${event.message ?? ''}`)).toEqual([]);
}, 360_000);

it('a private image: without credentials the pull fails (401); with imagePullSecretInjection: MatchingImages a pod without imagePullSecrets, in a namespace created a moment before, pulls it and runs', async () => {
  // The product's image, pushed to the registry, under the address the node reaches it at.
  const privateImage = `${registry.nodeHost}/resource-distributor:${image.tag}`;
  const bare = uniqueName('no-pull-secret');
  namespaces.push(bare);
  await createNamespace(core, bare);
  await core.createNamespacedPod({ namespace: bare, body: pullingPod(node.name, privateImage) });
  const refused = await waitFor('the pull refused', async () => {
    const waiting = (await core.readNamespacedPod({ namespace: bare, name: 'app' })).status?.containerStatuses?.[0]?.state?.waiting;
    return waiting?.reason === 'ErrImagePull' || waiting?.reason === 'ImagePullBackOff' ? waiting : undefined;
  });
  expect(refused.message).toMatch(/401|unauthorized/i);

  const pullSecret = uniqueName('registry-pull');
  const label = { [TEAM_LABEL]: uniqueName('pullers') };
  const auth = Buffer.from(`${registry.username}:${registry.password}`).toString('base64');
  const dockerConfig = Buffer.from(JSON.stringify({ auths: { [`https://${registry.nodeHost}`]: { auth } } })).toString('base64');
  distributions.push(pullSecret);
  const resource = { apiVersion: 'v1', kind: 'Secret', metadata: { name: pullSecret }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': dockerConfig } };
  const body = distribution(pullSecret, resource, { namespaceLabelSelector: { matchLabels: label } }) as { spec: Record<string, unknown> };
  body.spec.imagePullSecretInjection = 'MatchingImages';
  await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body });

  const namespace = uniqueName('pullers');
  namespaces.push(namespace);
  const created = Date.now();
  await createNamespace(core, namespace, label);
  const pod = await core.createNamespacedPod({ namespace, body: pullingPod(node.name, privateImage) });
  expect(pod.spec?.imagePullSecrets).toEqual([{ name: pullSecret }]);
  await waitForPhase(core, namespace, 'app', 'Succeeded', 180_000);
  expect(await core.readNamespacedPodLog({ namespace, name: 'app' })).toBe('pulled\n');
  console.log(`[node tier] private image pulled with the injected Secret: namespace create -> pod Succeeded in ${seconds(created)} s`);
}, 240_000);

const holderOf = async (): Promise<string | undefined> => (await coordination.readNamespacedLease({ namespace: NAMESPACE, name: RELEASE })).spec?.holderIdentity ?? undefined;

/** The pid (on the machine) of the product's process in the pod with `uid` (the kubelet's cgroup `pod<uid>`). */
async function productProcessOf(uid: string): Promise<number> {
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [cgroup, cmdline] = await Promise.all([readFile(`/proc/${entry}/cgroup`, 'utf8'), readFile(`/proc/${entry}/cmdline`, 'utf8')]).catch(() => ['', '']);
    if (cgroup.includes(`pod${uid}`) && cmdline.includes('dist/main.js')) return Number(entry);
  }
  throw new Error(`no process of pod ${uid} runs dist/main.js`);
}

const readyReplicas = async (): Promise<string[] | undefined> => {
  const pods = (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: SELECTOR })).items.filter(
    (pod) => !pod.metadata?.deletionTimestamp && pod.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True'),
  );
  return pods.length === 2 ? pods.map((pod) => pod.metadata?.name ?? '') : undefined;
};

/**
 * Creates a labelled namespace every 200 ms while `disrupt` runs (from 2 s after the first) and for
 * 5 s after it, with a distribution targeting them; then expects every namespace created (each
 * create passes the namespace webhook) and every copy present. Returns how many namespaces arrived
 * and the API server's calls to our webhooks during the disruption and after it.
 */
async function acrossArrivals(disrupt: () => Promise<void>): Promise<{ namespaces: number; during: WebhookCalls; after: WebhookCalls }> {
  const label = { [TEAM_LABEL]: uniqueName('arrivals') };
  const name = uniqueName('arrival-token');
  distributions.push(name);
  await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(name, secret(name), { namespaceLabelSelector: { matchLabels: label } }) });
  await waitFor('both replicas Ready', readyReplicas, 120_000);
  const before = await webhookCalls();
  const arrived: string[] = [];
  let arriving = true;
  const arrivals = (async () => {
    while (arriving) {
      const namespace = uniqueName('arrival');
      arrived.push(namespace);
      await core.createNamespace({ body: { metadata: { name: namespace, labels: label } } });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  let recovered: WebhookCalls | undefined;
  try {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await disrupt();
    recovered = await webhookCalls();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  } finally {
    arriving = false;
    await arrivals;
    namespaces.push(...arrived);
  }
  const missing = async (): Promise<string[]> =>
    (await Promise.all(arrived.map((namespace) => core.readNamespacedSecret({ namespace, name }).then(() => '', () => namespace)))).filter(Boolean);
  await waitFor('every copy', async () => ((await missing()).length === 0 ? true : undefined), 60_000, () => `${String(arrived.length)} namespaces`);
  const end = await webhookCalls();
  const during = callsBetween(before, recovered ?? end);
  const after = callsBetween(recovered, end);
  // Every namespace create called the namespace webhook: the counts are real.
  expect(during.calls + after.calls).toBeGreaterThanOrEqual(arrived.length);
  expect(after).toMatchObject({ failed: 0, failedOpen: 0 });
  return { namespaces: arrived.length, during, after };
}

it('the leader pod deleted while namespaces keep arriving: another replica takes the Lease, no failed admission, every copy present', async () => {
  const { namespaces: arrived, during, after } = await acrossArrivals(async () => {
    const leader = await holderOf();
    const deleted = Date.now();
    await core.deleteNamespacedPod({ namespace: NAMESPACE, name: leader ?? '' });
    const next = await waitFor('another replica holds the Lease', async () => {
      const holder = await holderOf();
      return holder && holder !== leader ? holder : undefined;
    }, 90_000);
    console.log(`[node tier] leader ${String(leader)} deleted: ${next} holds the Lease ${seconds(deleted)} s later`);
    await waitFor('the replacement replica Ready', readyReplicas, 120_000);
  });
  // A pod deleted stops being an endpoint before its process stops serving (preStop delay, graceful shutdown).
  expect(during).toMatchObject({ failed: 0, failedOpen: 0 });
  console.log(`[node tier] ${String(arrived)} namespaces created across the failover: every copy present; ${String(during.calls + after.calls)} webhook calls, 0 failed`);
}, 300_000);

it('a replica deleted while a distribution is written in v1alpha1 (stored as v1beta1, so every write is converted): the conversion Service lists a replica only while it accepts connections, no conversion and no write fails', async () => {
  const name = uniqueName('converted');
  distributions.push(name);
  await custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body: distribution(name, configMap(name), included(`${name}-nowhere`)) });
  const [deleted = '', kept = ''] = await waitFor('both replicas Ready', readyReplicas, 120_000);
  const ipOf = async (pod: string): Promise<string> => (await core.readNamespacedPod({ namespace: NAMESPACE, name: pod })).status?.podIP ?? '';
  const deletedIp = await ipOf(deleted);
  const before = await conversionCalls();
  const traffic = conversionTraffic(kubeConfig, { namespace: NAMESPACE, service: `${RELEASE}-conversion`, distribution: name });
  let replacementIp: string | undefined;
  let seen: ConversionTraffic | undefined;
  const started = Date.now();
  try {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await core.deleteNamespacedPod({ namespace: NAMESPACE, name: deleted });
    await waitFor('the deleted replica gone', () => core.readNamespacedPod({ namespace: NAMESPACE, name: deleted }).then(() => undefined, () => true), 90_000);
    const replicas = await waitFor('the replacement replica Ready', readyReplicas, 120_000);
    replacementIp = await ipOf(replicas.find((pod) => pod !== kept) ?? '');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  } finally {
    seen = await traffic.stop();
  }
  const after = await conversionCalls();
  console.log(
    `[node tier] replica ${deleted} deleted and replaced in ${seconds(started)} s: ${String(seen.dials)} dials to the conversion Service's addresses ` +
      `(${[...seen.addresses].join(', ')}), ${String(seen.refused.length)} not answered; ${String(seen.writes)} v1alpha1 writes, ${String(seen.failedWrites.length)} failed; ` +
      `conversions ${String(after.calls - before.calls)}, failed ${String(after.failed - before.failed)}`,
  );
  // Both ends were seen: the deleted replica while it served, the replacement once it did.
  expect(seen.addresses).toContain(deletedIp);
  expect(seen.addresses).toContain(replacementIp);
  expect(seen.refused).toEqual([]);
  expect(seen.failedWrites).toEqual([]);
  expect(after.failed - before.failed).toBe(0);
  expect(after.calls - before.calls).toBeGreaterThanOrEqual(seen.writes);
}, 300_000);

it('the leader process killed with SIGKILL (as by the OOM killer) while namespaces keep arriving: the Lease is renewed again, every namespace admitted, every copy present, no failed call once the replica is back', async () => {
  const { namespaces: arrived, during, after } = await acrossArrivals(async () => {
    const leader = await holderOf();
    const pod = await core.readNamespacedPod({ namespace: NAMESPACE, name: leader ?? '' });
    const killed = Date.now();
    // The node's processes are the machine's too: the container's is in the pod's cgroup.
    process.kill(await productProcessOf(pod.metadata?.uid ?? ''), 'SIGKILL');
    const renewed = await waitFor('the Lease renewed after the kill', async () => {
      const lease = await coordination.readNamespacedLease({ namespace: NAMESPACE, name: RELEASE });
      const renewTime = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
      return renewTime > killed + 1_000 ? lease.spec?.holderIdentity ?? '' : undefined;
    }, 90_000);
    console.log(`[node tier] leader ${String(leader)} killed: the Lease renewed by ${renewed} ${seconds(killed)} s later`);
    await waitFor('both replicas Ready again', readyReplicas, 120_000);
    // The kubelet restarted the killed container in place.
    const restarted = await core.readNamespacedPod({ namespace: NAMESPACE, name: leader ?? '' });
    expect(restarted.status?.containerStatuses?.[0]?.restartCount).toBe(1);
  });
  // A process killed outright drops the calls it was answering, and calls dialled to its address
  // until its endpoint goes are refused: the API server sends an admission call once, without retry.
  // The namespace webhook fails open, so those namespaces were admitted (above) and got their copies
  // from the reconciler; what failed did so only while the replica was down.
  expect(during.failed).toBe(during.failedOpen);
  console.log(
    `[node tier] ${String(arrived)} namespaces created across the SIGKILL: every copy present; ${String(during.calls + after.calls)} webhook calls, ` +
      `${String(during.failedOpen)} failed open while the killed replica was down, 0 after`,
  );
}, 300_000);

it('an eviction of one replica is allowed, of the other right after refused: the PodDisruptionBudget keeps one', async () => {
  const [first = '', second = ''] = await waitFor('both replicas Ready', readyReplicas, 120_000);
  await waitFor('the budget allows one disruption', async () => {
    const budget = await policy.readNamespacedPodDisruptionBudget({ namespace: NAMESPACE, name: RELEASE });
    return budget.status?.disruptionsAllowed === 1 ? true : undefined;
  });
  const evict = (name: string): Promise<unknown> => core.createNamespacedPodEviction({ namespace: NAMESPACE, name, body: { metadata: { name, namespace: NAMESPACE } } });
  await evict(first);
  const refused = await rejection(evict(second));
  expect(refused.code).toBe(429);
  expect(refused.message).toMatch(/disruption budget/);
  await waitFor('both replicas Ready again', readyReplicas, 120_000);
}, 300_000);

it('a namespace created after the distribution gets its copy; helm uninstall keeps it', async () => {
  await custom.createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: PLURAL,
    body: distribution(distributionName, secret(distributionName), { namespaceLabelSelector: { matchLabels: { [TEAM_LABEL]: team } } }),
  });
  const namespace = uniqueName('node-team');
  namespaces.push(namespace);
  const created = Date.now();
  await createNamespace(core, namespace, { [TEAM_LABEL]: team });
  await waitFor('the copy in the new namespace', () => core.readNamespacedSecret({ namespace, name: distributionName }).then(() => true, () => undefined));
  console.log(`[node tier] namespace create -> its copy: ${seconds(created)} s`);

  await run('helm', ['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait']);
  await waitFor('the pods gone', async () => ((await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: SELECTOR })).items.length === 0 ? true : undefined));
  const copy = await core.readNamespacedSecret({ namespace, name: distributionName });
  expect(Buffer.from(copy.data?.token ?? '', 'base64').toString()).toBe('t0k3n');
  await expect(admission.readValidatingWebhookConfiguration({ name: `${RELEASE}-distributions` })).rejects.toThrow();
});
