import { describe, expect, it } from 'vitest';
import { podInjection, type InjectionCandidate } from './pod-injection.js';
import { parseKey } from './registry-credentials.js';

const registry = (distribution: string, secret: string, mode: InjectionCandidate['mode'], ...keys: string[]): InjectionCandidate => ({
  distribution,
  secret,
  mode,
  keys: keys.map((key) => parseKey(key)!),
});

const pod = (spec: object, metadata: object = { name: 'p' }): object => ({ apiVersion: 'v1', kind: 'Pod', metadata, spec });
const app = (image: string): object => ({ containers: [{ name: 'app', image }] });

describe('image-pull Secrets added to a pod', () => {
  it.each([
    ['Always, whatever the image', pod(app('nginx')), [registry('a', 'pull', 'Always')], ['pull']],
    ['MatchingImages, an image of that registry', pod(app('registry.example.com/team/app:1')), [registry('a', 'pull', 'MatchingImages', 'registry.example.com')], ['pull']],
    ['MatchingImages, another registry', pod(app('quay.io/team/app:1')), [registry('a', 'pull', 'MatchingImages', 'registry.example.com')], []],
    ['MatchingImages, a Docker Hub short name and an index.docker.io key', pod(app('nginx')), [registry('a', 'hub', 'MatchingImages', 'https://index.docker.io/v1/')], ['hub']],
    ['MatchingImages, an init container', pod({ initContainers: [{ name: 'i', image: 'registry.example.com/init' }], containers: [{ name: 'c', image: 'nginx' }] }), [registry('a', 'pull', 'MatchingImages', 'registry.example.com')], ['pull']],
    ['MatchingImages, an ephemeral container only: not pulled before the pod runs', pod({ containers: [{ name: 'c', image: 'nginx' }], ephemeralContainers: [{ name: 'e', image: 'registry.example.com/debug' }] }), [registry('a', 'pull', 'MatchingImages', 'registry.example.com')], []],
    ['a name the pod lists already is not repeated', pod({ ...app('nginx'), imagePullSecrets: [{ name: 'pull' }] }), [registry('a', 'pull', 'Always')], []],
    ['two distributions of the same name: once', pod(app('nginx')), [registry('b', 'pull', 'Always'), registry('a', 'pull', 'Always')], ['pull']],
    ['in distribution-name order', pod(app('nginx')), [registry('zeta', 'z', 'Always'), registry('alpha', 'a', 'Always')], ['a', 'z']],
    ['a pod that opts out', pod(app('nginx'), { name: 'p', labels: { 'resource-distributor.io/inject': 'disabled' } }), [registry('a', 'pull', 'Always')], []],
    ['an unparseable image matches nothing', pod(app('Bad Image')), [registry('a', 'pull', 'MatchingImages', 'registry.example.com')], []],
  ])('%s', (_what, object, candidates, names) => {
    expect(podInjection(object, candidates).names).toEqual(names);
  });

  it.each([
    ['a pod without imagePullSecrets or annotations', pod(app('nginx')), [
      { op: 'add', path: '/spec/imagePullSecrets', value: [{ name: 'a' }, { name: 'b' }] },
      { op: 'add', path: '/metadata/annotations', value: { 'resource-distributor.io/injected-image-pull-secrets': 'a,b' } },
    ]],
    ['a pod with both', pod({ ...app('nginx'), imagePullSecrets: [{ name: 'own' }] }, { name: 'p', annotations: { team: 'x' } }), [
      { op: 'add', path: '/spec/imagePullSecrets/-', value: { name: 'a' } },
      { op: 'add', path: '/spec/imagePullSecrets/-', value: { name: 'b' } },
      { op: 'add', path: '/metadata/annotations/resource-distributor.io~1injected-image-pull-secrets', value: 'a,b' },
    ]],
    ['a pod mutated before (reinvocation adds to the annotation)', pod({ ...app('nginx'), imagePullSecrets: [{ name: 'a' }] }, { name: 'p', annotations: { 'resource-distributor.io/injected-image-pull-secrets': 'a' } }), [
      { op: 'add', path: '/spec/imagePullSecrets/-', value: { name: 'b' } },
      { op: 'add', path: '/metadata/annotations/resource-distributor.io~1injected-image-pull-secrets', value: 'a,b' },
    ]],
  ])('patches %s by adding only', (_what, object, patch) => {
    expect(podInjection(object, [registry('1', 'a', 'Always'), registry('2', 'b', 'Always')]).patch).toEqual(patch);
  });

  it('patches nothing when nothing is added', () => {
    expect(podInjection(pod(app('nginx')), [])).toEqual({ names: [], patch: [] });
  });
});
