import { describe, expect, it } from 'vitest';
import { applyCopyMetadata, keyAllowed, validateCopyMetadata, withoutSourceMarkers } from './copy-metadata.js';
import { distribution, T0, T1 } from '../../test/unit/builders.js';
import { isInSync, mergeCopy, renderCopy } from './copy.js';
import { hashResource } from './hash.js';
import { LABEL_DISTRIBUTION, type CopyMetadataRules, type KeyRules, type ResolvedDistribution, type Resource } from './types.js';

describe('markers of the tools that manage a source', () => {
  it.each([
    ['Helm', { 'app.kubernetes.io/managed-by': 'Helm', 'app.kubernetes.io/instance': 'shared', 'helm.sh/chart': 'shared-1.0.0' }, { 'meta.helm.sh/release-name': 'shared', 'meta.helm.sh/release-namespace': 'platform' }, { 'helm.sh/chart': 'shared-1.0.0' }, {}],
    ['Argo CD', { 'app.kubernetes.io/instance': 'platform-app', 'argocd.argoproj.io/instance': 'platform-app' }, { 'argocd.argoproj.io/tracking-id': 'platform-app:/Secret:platform/registry' }, {}, {}],
    ['Flux', { 'kustomize.toolkit.fluxcd.io/name': 'infra', 'kustomize.toolkit.fluxcd.io/namespace': 'flux-system', 'helm.toolkit.fluxcd.io/name': 'x', 'helm.toolkit.fluxcd.io/namespace': 'y' }, {}, {}, {}],
    ['cert-manager', { 'controller.cert-manager.io/fao': 'true' }, { 'cert-manager.io/certificate-name': 'wildcard', 'cert-manager.io/issuer-name': 'letsencrypt', 'cert-manager.io/issuer-kind': 'ClusterIssuer', 'cert-manager.io/issuer-group': 'cert-manager.io', 'cert-manager.io/common-name': 'example.com' }, {}, { 'cert-manager.io/common-name': 'example.com' }],
    ['kubectl', {}, { 'kubectl.kubernetes.io/last-applied-configuration': '{}' }, {}, {}],
    ['a managed-by label of another tool (kept: only Helm\'s value is a claim)', { 'app.kubernetes.io/managed-by': 'team-a' }, {}, { 'app.kubernetes.io/managed-by': 'team-a' }, {}],
  ])('%s', (_tool, labels, annotations, keptLabels, keptAnnotations) => {
    const metadata = withoutSourceMarkers({ name: 'x', labels: { ...labels, team: 'a' }, annotations: { ...annotations, note: 'n' } });
    expect(metadata.labels).toEqual({ ...keptLabels, team: 'a' });
    expect(metadata.annotations).toEqual({ ...keptAnnotations, note: 'n' });
  });
});

describe('spec.copyMetadata', () => {
  it.each<[string, KeyRules | undefined, string, boolean]>([
    ['no rules', undefined, 'anything', true],
    ['an empty include list lets everything through', { include: [] }, 'team', true],
    ['an included key', { include: ['team'] }, 'team', true],
    ['a key not included', { include: ['team'] }, 'tier', false],
    ['a glob matches the whole key', { include: ['example.com/*'] }, 'example.com/owner', true],
    ['a glob is anchored at the start', { include: ['example.com/*'] }, 'sub.example.com/owner', false],
    ['a glob is anchored at the end', { include: ['team'] }, 'team-a', false],
    ['dots are dots, not any character', { include: ['example.com/*'] }, 'exampleXcom/owner', false],
    ['exclude wins over include', { include: ['*'], exclude: ['internal.example.com/*'] }, 'internal.example.com/cost', false],
    ['exclude alone', { exclude: ['*-secret-*'] }, 'a-secret-b', false],
  ])('%s', (_what, rules, key, allowed) => {
    expect(keyAllowed(key, rules)).toBe(allowed);
  });

  const template: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', labels: { team: 'a', tier: 'gold' }, annotations: { note: 'n' } }, data: { a: '1' } };

  it('filters labels and annotations of the template, and leaves it as it was when nothing is filtered', () => {
    expect(applyCopyMetadata(template, { labels: { include: ['team'] }, annotations: { exclude: ['*'] } }).metadata).toEqual({ name: 'settings', labels: { team: 'a' } });
    expect(applyCopyMetadata(template, { labels: { include: ['*'] } })).toBe(template);
    expect(applyCopyMetadata(template, undefined)).toBe(template);
  });

  it.each([
    ['valid rules', { labels: { include: ['team', 'example.com/*'], exclude: ['*-internal'] }, annotations: {} }, []],
    ['not an object', 'all', ['spec.copyMetadata']],
    ['a list that is not one', { labels: { include: 'team' } }, ['spec.copyMetadata.labels.include']],
    ['a bad key', { annotations: { exclude: ['ok', 'not a key', 'a/b/c', ''] } }, ['spec.copyMetadata.annotations.exclude[1]', 'spec.copyMetadata.annotations.exclude[2]', 'spec.copyMetadata.annotations.exclude[3]']],
    ['a glob of many stars', { annotations: { include: ['a*a*a*a*a*a*a*a*b'] } }, []],
    ['globs that would cost too much per key', { annotations: { include: Array.from({ length: 64 }, (_, i) => `*a${i}*a*a*b`) } }, ['spec.copyMetadata.annotations']],
    ['too many globs', { labels: { include: Array.from({ length: 65 }, (_, i) => `k${i}`) } }, ['spec.copyMetadata.labels.include']],
  ])('admission: %s', (_what, value, paths) => {
    expect(validateCopyMetadata(value).map((problem) => problem.path)).toEqual(paths);
  });
});

describe('spec.copyMetadata: labels and annotations added to every copy', () => {
  const template: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', labels: { team: 'a', tier: 'gold' }, annotations: { note: 'n' } }, data: { a: '1' } };

  it.each<[string, CopyMetadataRules, Record<string, string> | undefined, Record<string, string> | undefined]>([
    ['added beside the template\'s', { labels: { add: { 'argocd.argoproj.io/secret-type': 'repository' } } }, { team: 'a', tier: 'gold', 'argocd.argoproj.io/secret-type': 'repository' }, { note: 'n' }],
    ['an added key wins over the template\'s value', { labels: { add: { team: 'platform' } } }, { team: 'platform', tier: 'gold' }, { note: 'n' }],
    ['include/exclude do not filter what is added', { labels: { exclude: ['*'], add: { team: 'platform' } }, annotations: { include: ['other'], add: { 'reloader.stakater.com/match': 'true' } } }, { team: 'platform' }, { 'reloader.stakater.com/match': 'true' }],
    ['an excluded key added back with its own value', { annotations: { exclude: ['note'], add: { note: 'from the distribution' } } }, { team: 'a', tier: 'gold' }, { note: 'from the distribution' }],
    ['an empty add changes nothing', { labels: { add: {} } }, { team: 'a', tier: 'gold' }, { note: 'n' }],
  ])('%s', (_what, rules, labels, annotations) => {
    const metadata = applyCopyMetadata(template, rules).metadata;
    expect(metadata?.labels).toEqual(labels);
    expect(metadata?.annotations).toEqual(annotations);
    expect(template.metadata?.labels).toEqual({ team: 'a', tier: 'gold' });
  });

  it('adds to a template that has no labels or annotations', () => {
    const bare: Resource = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'repo' }, data: {} };
    expect(applyCopyMetadata(bare, { labels: { add: { team: 'platform' } } }).metadata).toEqual({ name: 'repo', labels: { team: 'platform' } });
  });

  it('the hash of the resolved template covers what is added', () => {
    const one = hashResource(applyCopyMetadata(template, { labels: { add: { team: 'platform' } } }));
    const other = hashResource(applyCopyMetadata(template, { labels: { add: { team: 'ops' } } }));
    expect(one).not.toEqual(other);
    expect(one).not.toEqual(hashResource(template));
  });

  it.each<[string, unknown, string[], string?]>([
    ['valid additions', { labels: { add: { team: 'platform', 'argocd.argoproj.io/secret-type': 'repository' } }, annotations: { add: { 'reloader.stakater.com/match': 'true', note: 'any text, spaces too' } } }, []],
    ['not a map', { labels: { add: ['team'] } }, ['spec.copyMetadata.labels.add']],
    ['a bad label key', { labels: { add: { 'bad key': 'x' } } }, ['spec.copyMetadata.labels.add["bad key"]'], 'not a valid label key'],
    ['a bad annotation key', { annotations: { add: { 'a/b/c': 'x' } } }, ['spec.copyMetadata.annotations.add["a/b/c"]'], 'not a valid annotation key'],
    ['a bad label value', { labels: { add: { team: 'not a value' } } }, ['spec.copyMetadata.labels.add["team"]'], 'not a valid label value'],
    ['a label value too long', { labels: { add: { team: 'x'.repeat(64) } } }, ['spec.copyMetadata.labels.add["team"]']],
    ['a value that is not a string', { annotations: { add: { note: 1 } } }, ['spec.copyMetadata.annotations.add["note"]'], 'must be a string'],
    ['our hash marker', { annotations: { add: { 'kruise.io/resourcedistribution.resource.hashcode': 'x' } } }, ['spec.copyMetadata.annotations.add["kruise.io/resourcedistribution.resource.hashcode"]'], 'markers'],
    ['our distribution label', { labels: { add: { 'resource-distributor.io/distribution': 'other' } } }, ['spec.copyMetadata.labels.add["resource-distributor.io/distribution"]'], 'markers'],
    ['our template-metadata record', { annotations: { add: { 'resource-distributor.io/template-metadata': '{}' } } }, ['spec.copyMetadata.annotations.add["resource-distributor.io/template-metadata"]'], 'markers'],
    ['too many', { labels: { add: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) } }, ['spec.copyMetadata.labels.add']],
    ['annotations larger than an object may hold', { annotations: { add: { big: 'x'.repeat(256 * 1024) } } }, ['spec.copyMetadata.annotations.add'], 'at most 262144'],
    ['a bad addition beside a bad glob: both said', { labels: { add: { 'bad key': 'x' }, include: ['not a key'] } }, ['spec.copyMetadata.labels.add["bad key"]', 'spec.copyMetadata.labels.include[0]']],
  ])('admission: %s', (_what, value, paths, message) => {
    const problems = validateCopyMetadata(value);
    expect(problems.map((problem) => problem.path)).toEqual(paths);
    if (message !== undefined) expect(problems[0]?.message).toContain(message);
  });
});

describe('labels added to copies, on the copies', () => {
  const base = distribution('shared').configMap('settings', { a: '1' }).templateLabels({ team: 'a' }).build();
  const adding = (add: Record<string, string>): ResolvedDistribution => ({ ...base, spec: { ...base.spec, resource: applyCopyMetadata(base.spec.resource, { labels: { add } }) } });

  it('are recorded as the template\'s keys: one no longer added leaves the copies, the template\'s value comes back, keys of others stay', () => {
    const copy = renderCopy(adding({ team: 'platform', extra: 'yes' }), 'n', T0);
    expect(copy.metadata.labels).toEqual({ team: 'platform', extra: 'yes', [LABEL_DISTRIBUTION]: 'shared' });
    const edited = { ...copy, metadata: { ...copy.metadata, labels: { ...copy.metadata.labels, mine: 'kept' } } };
    expect(mergeCopy(renderCopy(base, 'n', T1), edited).metadata.labels).toEqual({ team: 'a', mine: 'kept', [LABEL_DISTRIBUTION]: 'shared' });
    expect(mergeCopy(renderCopy(adding({ team: 'platform' }), 'n', T1), edited).metadata.labels).toEqual({ team: 'platform', mine: 'kept', [LABEL_DISTRIBUTION]: 'shared' });
  });

  it('a copy that lost an added label by hand is not in sync', () => {
    const rd = adding({ extra: 'yes' });
    const copy = renderCopy(rd, 'n', T0);
    expect(isInSync(rd, copy)).toBe(true);
    const { extra: _extra, ...rest } = copy.metadata.labels ?? {};
    expect(isInSync(rd, { ...copy, metadata: { ...copy.metadata, labels: rest } })).toBe(false);
  });
});
