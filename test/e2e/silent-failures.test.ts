// No silent failures, with the whole product registered in the API server: a source that is never
// copied is warned about at admission and reported in the status and an Event in the words of what
// was found; conflict messages name the real distribution and give advice that fits its API; an
// ObjectSync deleted with propagation Orphan keeps its copies; `kubectl get -o wide` has one NAME.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OBJECT_SYNC_GROUP, OBJECT_SYNC_PLURAL, OBJECT_SYNC_VERSION, type ObjectSync } from '../../src/domain/object-sync.js';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, ANNOTATION_OBJECT_SYNC, GROUP, LABEL_DISTRIBUTION, VERSION, type ResourceDistribution, type SourceRef } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { connectionOf } from '../kube-client.js';
import { condition, configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';
import { run } from './support/tools.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const OS = { group: OBJECT_SYNC_GROUP, version: OBJECT_SYNC_VERSION, plural: OBJECT_SYNC_PLURAL };
const team = uniqueName('silent');
const b64 = (text: string): string => Buffer.from(text).toString('base64');
let sourceNs: string;
let targetA: string;
let targetB: string;
let server: RunningServer;

function fromSource(name: string, ref: SourceRef): ResourceDistribution {
  return { apiVersion: `${GROUP}/${VERSION}`, kind: 'ResourceDistribution', metadata: { name }, spec: { source: ref, targets: { namespaceLabelSelector: { matchLabels: { team } } } } };
}

function secret(name: string, type: string) {
  return { metadata: { name, namespace: sourceNs }, type, data: { release: b64('payload') } };
}

async function events(namespace: string, name: string): Promise<{ reason: string; message: string }[]> {
  const list = await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
  return list.items.map((event) => ({ reason: event.reason ?? '', message: event.message ?? '' }));
}

async function readObjectSync(namespace: string, name: string): Promise<ObjectSync | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ ...OS, namespace, name })) as ObjectSync;
  } catch {
    return undefined;
  }
}

function objectSyncOf(name: string, source: string, destinations: string[]): ObjectSync {
  return {
    apiVersion: `${OBJECT_SYNC_GROUP}/${OBJECT_SYNC_VERSION}`,
    kind: 'ObjectSync',
    metadata: { name, namespace: sourceNs },
    spec: { source: { group: '', kind: 'ConfigMap', name: source }, destinations: destinations.map((namespace) => ({ namespace })) },
  };
}

beforeAll(async () => {
  sourceNs = (await kube.createNamespace('silent-source')).metadata!.name!;
  targetA = (await kube.createNamespace('silent-a', { team })).metadata!.name!;
  targetB = (await kube.createNamespace('silent-b', { team })).metadata!.name!;
  server = await startLocalServer({
    connection: connectionOf(kc),
    overrides: { webhookNames: { distributions: uniqueName('e2e-silent-distributions'), namespaces: uniqueName('e2e-silent-namespaces') }, shutdownDelayMs: 0 },
  });
  await waitFor(
    async () => {
      const probe = fromSource(uniqueName('probe'), { apiVersion: 'v1', kind: 'Pod', namespace: sourceNs, name: 'x' });
      const answer = await rejection(kube.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: 'resourcedistributions', body: probe, dryRun: 'All' })).catch(() => undefined);
      return answer?.message.includes('spec.source.kind') ? true : undefined;
    },
    { what: 'the distribution webhook of this server to be called' },
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('a source of a type never distributed', () => {
  it('is warned about at admission, and reported with a condition and an Event while it stays so, in the words of what was found', async () => {
    await core.createNamespacedSecret({ namespace: sourceNs, body: secret('sh.helm.release.v1.app.v1', 'helm.sh/release.v1') });
    const name = uniqueName('helm-source');
    const ref: SourceRef = { apiVersion: 'v1', kind: 'Secret', namespace: sourceNs, name: 'sh.helm.release.v1.app.v1' };
    const said = `source Secret ${sourceNs}/sh.helm.release.v1.app.v1 exists but is of type helm.sh/release.v1, which is never distributed: nothing is copied from it`;

    const { stderr } = await run('kubectl', ['create', '--dry-run=server', '-f', '-'], { input: JSON.stringify(fromSource(name, ref)) });
    expect(stderr).toContain(`Warning: spec.source: ${said}`);
    await kube.createDistribution(fromSource(name, ref));

    const rd = await kube.waitForStatus(name, (s) => s.conditions.some((c) => c.type === 'NotDistributable'));
    expect(rd.status).toMatchObject({ desired: 2, succeeded: 0, failed: 2 });
    expect(condition(rd, 'SourceNotFound')).toMatchObject({ status: 'False' });
    expect(condition(rd, 'NotDistributable')).toMatchObject({ status: 'True', reason: 'NotDistributable', message: said });
    await waitFor(async () => ((await events('default', name)).some((e) => e.reason === 'NotDistributable' && e.message === said) ? true : undefined), { what: 'a NotDistributable Event' });
    expect(await kube.get('Secret', targetA, 'sh.helm.release.v1.app.v1')).toBeUndefined();
  });

  it('a source recreated with that type is reported as found and never copied, not as "not found"; its copies stay', async () => {
    const name = uniqueName('recreated');
    const ref: SourceRef = { apiVersion: 'v1', kind: 'Secret', namespace: sourceNs, name: 'becomes-helm' };
    await core.createNamespacedSecret({ namespace: sourceNs, body: secret('becomes-helm', 'Opaque') });
    await kube.createDistribution(fromSource(name, ref));
    await kube.waitForStatus(name, (s) => s.succeeded === 2);

    await core.deleteNamespacedSecret({ namespace: sourceNs, name: 'becomes-helm' });
    await kube.waitForStatus(name, (s) => s.conditions.some((c) => c.type === 'SourceNotFound' && c.status === 'True'));
    await core.createNamespacedSecret({ namespace: sourceNs, body: secret('becomes-helm', 'helm.sh/release.v1') });
    const rd = await kube.waitForStatus(name, (s) => s.conditions.some((c) => c.type === 'NotDistributable'));
    expect(condition(rd, 'SourceNotFound')).toMatchObject({ status: 'False' });
    expect(condition(rd, 'NotDistributable')?.message).toContain('exists but is of type helm.sh/release.v1');
    expect(JSON.stringify(rd.status)).not.toContain('not found');
    expect(await kube.get('Secret', targetA, 'becomes-helm')).toBeDefined();
  });
});

describe('an ObjectSync whose source is of a type never distributed', () => {
  it('is warned about at admission, and its status says so in the same words', async () => {
    const name = uniqueName('os-helm');
    await core.createNamespacedSecret({ namespace: sourceNs, body: secret('sh.helm.release.v1.os.v1', 'helm.sh/release.v1') });
    const said = `source Secret ${sourceNs}/sh.helm.release.v1.os.v1 exists but is of type helm.sh/release.v1, which is never distributed: nothing is copied from it`;
    const body: ObjectSync = { ...objectSyncOf(name, 'sh.helm.release.v1.os.v1', [targetA]), spec: { source: { group: '', kind: 'Secret', name: 'sh.helm.release.v1.os.v1' }, destinations: [{ namespace: targetA }] } };
    const { stderr } = await run('kubectl', ['create', '-f', '-'], { input: JSON.stringify(body) });
    expect(stderr).toContain(`Warning: spec.source: ${said}`);
    const os = await waitFor(
      async () => {
        const found = await readObjectSync(sourceNs, name);
        return found?.status?.conditions.some((c) => c.type === 'NotDistributable' && c.status === 'True') ? found : undefined;
      },
      { what: `ObjectSync ${name} to report NotDistributable` },
    );
    expect(os.status?.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'NotDistributable', message: said });
    // In the ObjectSync's namespace, about it (an Event naming no namespace is refused there).
    await waitFor(async () => ((await events(sourceNs, name)).some((e) => e.reason === 'NotDistributable' && e.message === said) ? true : undefined), { what: 'a NotDistributable Event' });
    await custom.deleteNamespacedCustomObject({ ...OS, namespace: sourceNs, name });
  });
});

describe('conflict messages', () => {
  it("name the real distribution in a ResourceDistribution's advice", async () => {
    const name = uniqueName('conflicted');
    await kube.put(configMapOf('taken', { mine: 'yes' }, { namespace: targetA }));
    await kube.createDistribution(distributionOf(name, configMapOf('taken', { a: 'b' }), { includedNamespaces: { list: [{ name: targetA }] } }));
    const rd = await kube.waitForStatus(name, (s) => s.conditions.some((c) => c.type === 'ConflictOccurred' && c.status === 'True'));
    const message = condition(rd, 'ConflictOccurred')?.message ?? '';
    expect(message).toContain(`${ANNOTATION_ADOPT}=${name} `);
    expect(message).not.toContain('<distribution>');
  });

  it("name the ObjectSync, advise nothing it does not have, and the advice followed adopts at once", async () => {
    const name = uniqueName('os-conflict');
    await core.createNamespacedConfigMap({ namespace: sourceNs, body: { metadata: { name: 'shared-settings' }, data: { a: 'b' } } });
    await core.createNamespacedConfigMap({ namespace: targetB, body: { metadata: { name: 'shared-settings' }, data: { mine: 'yes' } } });
    await custom.createNamespacedCustomObject({ ...OS, namespace: sourceNs, body: objectSyncOf(name, 'shared-settings', [targetB]) });
    const os = await waitFor(
      async () => {
        const found = await readObjectSync(sourceNs, name);
        return found?.status?.conditions.some((c) => c.type === 'ConflictOccurred' && c.status === 'True') ? found : undefined;
      },
      { what: `ObjectSync ${name} to report the conflict` },
    );
    const message = os.status?.conditions.find((c) => c.type === 'ConflictOccurred')?.message ?? '';
    expect(message).toContain(`${ANNOTATION_ADOPT}=${sourceNs}/${name} `);
    expect(message).not.toContain(LABEL_DISTRIBUTION);
    expect(message).not.toContain('<distribution>');
    expect(message).not.toContain('writePolicy');

    // The advice as given: annotate; the copy is taken in place long before any sweep.
    const adoptedAt = Date.now();
    await core.patchNamespacedConfigMap({ namespace: targetB, name: 'shared-settings', body: { metadata: { annotations: { [ANNOTATION_ADOPT]: `${sourceNs}/${name}` } } } }, merge);
    await waitFor(
      async () => {
        const copy = await core.readNamespacedConfigMap({ namespace: targetB, name: 'shared-settings' });
        return copy.data?.a === 'b' && copy.metadata?.annotations?.[ANNOTATION_FROM]?.startsWith('objectsync-') === true ? true : undefined;
      },
      { what: 'the annotated object adopted', timeoutMs: 15_000, intervalMs: 50 },
    );
    console.log(`ObjectSync adoption by the advised annotation: taken ${Date.now() - adoptedAt} ms after the patch`);
    await custom.deleteNamespacedCustomObject({ ...OS, namespace: sourceNs, name });
  });
});

describe('an ObjectSync deleted with propagation Orphan', () => {
  it('keeps its copies, untied from it, as a distribution does', async () => {
    const name = uniqueName('os-orphan');
    await core.createNamespacedConfigMap({ namespace: sourceNs, body: { metadata: { name: 'kept-settings' }, data: { a: 'b' } } });
    await custom.createNamespacedCustomObject({ ...OS, namespace: sourceNs, body: objectSyncOf(name, 'kept-settings', [targetA, targetB]) });
    await waitFor(
      async () => {
        const found = await Promise.all([targetA, targetB].map((ns) => kube.get('ConfigMap', ns, 'kept-settings')));
        return found.every((copy) => copy?.metadata.annotations?.[ANNOTATION_OBJECT_SYNC] !== undefined) ? true : undefined;
      },
      { what: 'both copies of the ObjectSync' },
    );

    await custom.deleteNamespacedCustomObject({ ...OS, namespace: sourceNs, name, propagationPolicy: 'Orphan' });
    await waitFor(async () => ((await readObjectSync(sourceNs, name)) === undefined ? true : undefined), { what: `ObjectSync ${name} gone` });
    // Long enough for a pass that would delete orphans to have run.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (const ns of [targetA, targetB]) {
      const copy = await kube.get('ConfigMap', ns, 'kept-settings');
      expect(copy?.data).toEqual({ a: 'b' });
      expect(copy?.metadata.labels?.[LABEL_DISTRIBUTION]).toBeUndefined();
      expect(copy?.metadata.annotations?.[ANNOTATION_OBJECT_SYNC]).toBeUndefined();
    }
  });
});

describe('kubectl get distributor -o wide', () => {
  it('has one NAME column', async () => {
    const name = uniqueName('wide');
    await kube.createDistribution(distributionOf(name, configMapOf('wide-settings', { a: 'b' }), { includedNamespaces: { list: [{ name: targetA }] } }));
    const { stdout } = await run('kubectl', ['get', 'distributor', name, '-o', 'wide']);
    const header = stdout.split('\n')[0]!.trim().split(/\s+/);
    expect(header.filter((column) => column === 'NAME')).toEqual(['NAME']);
    expect(header).toContain('RESOURCE-NAME');
  });
});
