import { describe, expect, it } from 'vitest';
import { applyCopyMetadata, keyAllowed, validateCopyMetadata, withoutSourceMarkers } from './copy-metadata.js';
import type { KeyRules, Resource } from './types.js';

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
