import { describe, expect, it } from 'vitest';
import { distribution } from '../../test/unit/builders.js';
import { podCopyKey, podReferenceKeys, referencedBy } from './pending-copies.js';
import { podReferences } from './pod-references.js';
import type { ResourceDistribution } from './types.js';

const secret = distribution('pull').secret('pull', { token: 'dA==' }).allNamespaces().build();
const configMap = distribution('settings').configMap('settings', { a: '1' }).allNamespaces().build();
const fromSource: ResourceDistribution = { ...configMap, metadata: { name: 'from-source' }, spec: { targets: { allNamespaces: true }, source: { apiVersion: 'v1', kind: 'Secret', namespace: 'platform', name: 'origin' } } };
const renamed: ResourceDistribution = { ...fromSource, metadata: { name: 'renamed' }, spec: { ...fromSource.spec, rename: 'copy-name' } };
const otherKind = distribution('roles').template({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'reader' } }).allNamespaces().build();

describe('podCopyKey: what a pod can name of a distribution', () => {
  it.each([
    ['a Secret template', secret, 'Secret/pull'],
    ['a ConfigMap template', configMap, 'ConfigMap/settings'],
    ['a source, by its name', fromSource, 'Secret/origin'],
    ['a renamed source, by the copy name', renamed, 'Secret/copy-name'],
    ['another kind: none', otherKind, undefined],
  ])('%s', (_, rd, key) => {
    expect(podCopyKey(rd)).toBe(key);
  });
});

describe('podReferenceKeys', () => {
  it.each([
    ['nothing referenced', {}, []],
    ['a pull Secret and a ConfigMap volume', { imagePullSecrets: [{ name: 'pull' }], volumes: [{ name: 'v', configMap: { name: 'settings' } }] }, ['Secret/pull', 'ConfigMap/settings']],
    ['a Secret and a ConfigMap of the same name', { containers: [{ name: 'c', envFrom: [{ secretRef: { name: 'x' } }, { configMapRef: { name: 'x' } }] }] }, ['Secret/x', 'ConfigMap/x']],
  ])('%s', (_, spec, keys) => {
    expect(podReferenceKeys(podReferences({ spec }))).toEqual(keys);
  });

  it('finds by key exactly what referencedBy finds by scanning', () => {
    const all = [secret, configMap, fromSource, renamed, otherKind];
    const refs = podReferences({ spec: { imagePullSecrets: [{ name: 'pull' }, { name: 'copy-name' }], volumes: [{ name: 'v', configMap: { name: 'settings' } }] } });
    const keys = new Set(podReferenceKeys(refs));
    expect(all.filter((rd) => keys.has(podCopyKey(rd) ?? ''))).toEqual(referencedBy(all, refs));
  });
});
