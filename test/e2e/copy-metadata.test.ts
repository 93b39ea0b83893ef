// Which labels and annotations reach copies: a source managed by Helm, Argo CD, Flux and
// cert-manager passes none of their markers on (the rest of its metadata goes), the API server
// names the product as the copies' field manager, and
// spec.copyMetadata narrows what reaches copies for a template or a source alike; changing the
// rules rewrites each copy exactly once.
import { describe, expect, it } from 'vitest';
import { LABEL_DISTRIBUTION, type ResourceDistribution, type Resource } from '../../src/domain/types.js';
import { createMetrics } from '../../src/metrics.js';
import { configMapOf, distributionOf } from './fixtures/kube.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName } from './support/cluster.js';

const metrics = createMetrics();
const { kube } = useReconcileSuite({ metrics });

const MARKED_LABELS = {
  'app.kubernetes.io/managed-by': 'Helm',
  'app.kubernetes.io/instance': 'platform',
  'argocd.argoproj.io/instance': 'platform',
  'kustomize.toolkit.fluxcd.io/name': 'infra',
  'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
  'helm.toolkit.fluxcd.io/name': 'platform',
  'helm.toolkit.fluxcd.io/namespace': 'flux-system',
  'controller.cert-manager.io/fao': 'true',
};
const MARKED_ANNOTATIONS = {
  'meta.helm.sh/release-name': 'platform',
  'meta.helm.sh/release-namespace': 'platform',
  'argocd.argoproj.io/tracking-id': 'platform:/ConfigMap:platform/settings',
  'cert-manager.io/certificate-name': 'wildcard',
  'cert-manager.io/issuer-name': 'letsencrypt',
  'kubectl.kubernetes.io/last-applied-configuration': '{}',
};

async function updates(): Promise<number> {
  return (await metrics.apiRequests.get()).values.filter((v) => v.labels.verb === 'update' && v.labels.resource === 'configmaps').reduce((sum, v) => sum + v.value, 0);
}

/** Labels and annotations of a copy, without the ones the product itself puts there. */
function theirs(copy: Resource | undefined): { labels: Record<string, string>; annotations: Record<string, string> } {
  const labels = { ...copy?.metadata.labels };
  delete labels[LABEL_DISTRIBUTION];
  const annotations = Object.fromEntries(Object.entries(copy?.metadata.annotations ?? {}).filter(([key]) => !key.startsWith('kruise.io/') && !key.startsWith('resource-distributor.io/')));
  return { labels, annotations };
}

describe('copy metadata', () => {
  it("never passes on the markers of the tools that manage a source, and passes on the rest", async () => {
    const source = (await kube.createNamespace('cm-source')).metadata!.name!;
    const target = (await kube.createNamespace('cm-target')).metadata!.name!;
    await kube.put(configMapOf('settings', { a: '1' }, { namespace: source, labels: { ...MARKED_LABELS, team: 'a' }, annotations: { ...MARKED_ANNOTATIONS, note: 'kept' } }));
    const name = uniqueName('rd-markers');
    const rd: ResourceDistribution = { ...distributionOf(name, configMapOf('settings', {}), { includedNamespaces: { list: [{ name: target }] } }) };
    delete rd.spec.resource;
    rd.spec.source = { apiVersion: 'v1', kind: 'ConfigMap', namespace: source, name: 'settings' };
    await kube.createDistribution(rd);

    const copy = await kube.waitForObject('ConfigMap', target, 'settings', (o) => o !== undefined);
    console.log(`source metadata: labels ${JSON.stringify({ ...MARKED_LABELS, team: 'a' })}, annotations ${JSON.stringify({ ...MARKED_ANNOTATIONS, note: 'kept' })}`);
    console.log(`copy metadata (ours left out): ${JSON.stringify(theirs(copy))}`);
    expect(theirs(copy)).toEqual({ labels: { team: 'a' }, annotations: { note: 'kept' } });
    // The API server records who wrote the copy's fields by the writer's User-Agent.
    const managers = (copy?.metadata as { managedFields?: { manager?: string }[] } | undefined)?.managedFields?.map((entry) => entry.manager);
    expect(managers).toEqual(['resource-distributor']);
  });

  it('narrows what reaches copies with spec.copyMetadata, and rewrites each copy once when the rules change', async () => {
    const targets = [(await kube.createNamespace('cm-rules')).metadata!.name!, (await kube.createNamespace('cm-rules')).metadata!.name!];
    const name = uniqueName('rd-rules');
    const template = configMapOf('settings', { a: '1' }, {
      labels: { team: 'a', tier: 'gold', 'cost.example.com/center': '42' },
      annotations: { note: 'n', 'internal.example.com/owner': 'ops', 'internal.example.com/ticket': 'T-1' },
    });
    await kube.createDistribution({
      ...distributionOf(name, template, { includedNamespaces: { list: targets.map((ns) => ({ name: ns })) } }),
      spec: { resource: template, targets: { includedNamespaces: { list: targets.map((ns) => ({ name: ns })) } }, copyMetadata: { labels: { include: ['team', '*.example.com/*'] }, annotations: { exclude: ['internal.example.com/*'] } } },
    });
    for (const ns of targets) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o !== undefined);
      expect(theirs(copy)).toEqual({ labels: { team: 'a', 'cost.example.com/center': '42' }, annotations: { note: 'n' } });
    }
    await kube.waitForStatus(name, (s) => s.succeeded === 2);

    const before = await updates();
    await kube.updateDistribution(name, (rd) => {
      rd.spec.copyMetadata = { labels: { exclude: ['cost.example.com/*'] } };
    });
    for (const ns of targets) {
      const copy = await kube.waitForObject('ConfigMap', ns, 'settings', (o) => o?.metadata.labels?.tier === 'gold');
      expect(theirs(copy)).toEqual({ labels: { team: 'a', tier: 'gold' }, annotations: { note: 'n', 'internal.example.com/owner': 'ops', 'internal.example.com/ticket': 'T-1' } });
    }
    await kube.waitForStatus(name, (s) => s.observedGeneration === 2 && s.succeeded === 2);
    // Settled: nothing more is written than one update per copy.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await updates()) - before).toBe(targets.length);
  });
});
