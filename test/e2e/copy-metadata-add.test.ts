// Labels and annotations added to every copy (spec.copyMetadata.labels.add, .annotations.add),
// with the whole product registered in the API server: they reach the copies of a template and of
// a source, win over the template's value of the same key, are not filtered by include/exclude,
// leave the copies when removed (keys others added stay), and our own markers cannot be set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABEL_DISTRIBUTION, PLURAL, VERSION, type ResourceDistribution, type Resource } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { distributionWebhookCalled, rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName } from './support/cluster.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
let server: RunningServer;
let targets: string[] = [];

const ADDED_LABELS = { 'argocd.argoproj.io/secret-type': 'repository', team: 'platform' };
const ADDED_ANNOTATIONS = { 'reloader.stakater.com/match': 'true' };

/** Labels and annotations of a copy, without the ones the product itself puts there. */
function theirs(copy: Resource | undefined): { labels: Record<string, string>; annotations: Record<string, string> } {
  const labels = { ...copy?.metadata.labels };
  delete labels[LABEL_DISTRIBUTION];
  const annotations = Object.fromEntries(Object.entries(copy?.metadata.annotations ?? {}).filter(([key]) => !key.startsWith('kruise.io/') && !key.startsWith('resource-distributor.io/')));
  return { labels, annotations };
}

const toTargets = (): ResourceDistribution['spec']['targets'] => ({ includedNamespaces: { list: targets.map((ns) => ({ name: ns })) } });

function createDryRun(body: object): Promise<unknown> {
  return kube.custom.createClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, body, dryRun: 'All' });
}

beforeAll(async () => {
  targets = [(await kube.createNamespace('cma-target')).metadata!.name!, (await kube.createNamespace('cma-target')).metadata!.name!];
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics: createMetrics(),
    overrides: { webhookNames: { distributions: uniqueName('e2e-cma-distributions'), namespaces: uniqueName('e2e-cma-namespaces') }, shutdownDelayMs: 0 },
  });
  // Only the webhook refuses a key that is none (the schema lets it through).
  await distributionWebhookCalled(kube.custom, distributionOf(uniqueName('probe'), configMapOf('x', {}), toTargets(), { copyMetadata: { labels: { add: { 'bad key': 'x' } } } }));
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('labels and annotations added to copies', () => {
  it('reach every copy of a template, win over its values, and leave the copies when removed', async () => {
    const name = uniqueName('rd-add');
    const template = configMapOf('repo', { url: 'https://git.example.com/platform.git' }, {
      labels: { team: 'template-team', tier: 'gold' },
      annotations: { note: 'n', 'internal.example.com/owner': 'ops' },
    });
    await kube.createDistribution(
      distributionOf(name, template, toTargets(), {
        copyMetadata: { labels: { add: ADDED_LABELS }, annotations: { add: ADDED_ANNOTATIONS, exclude: ['internal.example.com/*', 'reloader.stakater.com/*'] } },
      }),
    );
    for (const ns of targets) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'repo', (o) => o !== undefined);
      console.log(`copy metadata (ours left out): ${JSON.stringify(theirs(copy))}`);
      // The added team wins over the template's; exclude filters the template's annotations, not the added one.
      expect(theirs(copy)).toEqual({ labels: { tier: 'gold', ...ADDED_LABELS }, annotations: { note: 'n', ...ADDED_ANNOTATIONS } });
    }
    await kube.waitForStatus(name, (s) => s.succeeded === targets.length);

    // Someone adds a label of their own to a copy: it stays when an added key is removed.
    const edited = await kube.get('ConfigMap', targets[0]!, 'repo');
    await kube.put({ ...edited!, metadata: { ...edited!.metadata, labels: { ...edited!.metadata.labels, mine: 'kept' } } });
    await kube.updateDistribution(name, (rd) => {
      rd.spec.copyMetadata = { labels: { add: { 'argocd.argoproj.io/secret-type': 'repository' } } };
    });
    for (const ns of targets) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'repo', (o) => o?.metadata.labels?.team === 'template-team');
      expect(theirs(copy)).toEqual({
        labels: { team: 'template-team', tier: 'gold', 'argocd.argoproj.io/secret-type': 'repository', ...(ns === targets[0] ? { mine: 'kept' } : {}) },
        annotations: { note: 'n', 'internal.example.com/owner': 'ops' },
      });
    }
    await kube.deleteDistribution(name);
  });

  it('reach every copy of a source', async () => {
    const source = (await kube.createNamespace('cma-source')).metadata!.name!;
    await kube.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'git-credentials', namespace: source, labels: { team: 'source-team' } }, type: 'Opaque', data: { password: Buffer.from('s3cret').toString('base64') } });
    const name = uniqueName('rd-add-source');
    const rd: ResourceDistribution = distributionOf(name, configMapOf('unused', {}), toTargets(), { copyMetadata: { labels: { add: ADDED_LABELS }, annotations: { add: ADDED_ANNOTATIONS } } });
    delete rd.spec.resource;
    rd.spec.source = { apiVersion: 'v1', kind: 'Secret', namespace: source, name: 'git-credentials' };
    await kube.createDistribution(rd);
    for (const ns of targets) {
      const copy = await kube.waitForObject('Secret', ns, 'git-credentials', (o) => o !== undefined);
      expect(theirs(copy)).toEqual({ labels: ADDED_LABELS, annotations: ADDED_ANNOTATIONS });
    }
    await kube.waitForStatus(name, (s) => s.succeeded === targets.length);
    await kube.deleteDistribution(name);
  });

  it.each([
    ['our distribution label', { labels: { add: { [LABEL_DISTRIBUTION]: 'other' } } }, `spec.copyMetadata.labels.add["${LABEL_DISTRIBUTION}"]`, 'resource-distributor.io/'],
    ['our hash annotation', { annotations: { add: { 'kruise.io/resourcedistribution.resource.hashcode': 'x' } } }, 'spec.copyMetadata.annotations.add["kruise.io/resourcedistribution.resource.hashcode"]', 'kruise.io/resourcedistribution.'],
    ['a key that is no label key', { labels: { add: { 'bad key': 'x' } } }, 'spec.copyMetadata.labels.add["bad key"]', 'not a valid label key'],
    ['a label value that is none', { labels: { add: { team: 'two words' } } }, 'spec.copyMetadata.labels.add["team"]', 'not a valid label value'],
  ])('denies %s, naming the field and why', async (_what, copyMetadata, field, reason) => {
    const denied = await rejection(createDryRun(distributionOf(uniqueName('rd-add-denied'), configMapOf('x', {}), toTargets(), { copyMetadata })));
    console.log(`denied: ${denied.message}`);
    expect(denied.message).toContain('denied the request');
    expect(denied.message).toContain(field);
    expect(denied.message).toContain(reason);
  });
});
