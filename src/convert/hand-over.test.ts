// The copies each tool leaves, as it marks them (replicator: replicated-at and -from-version;
// reflector's automatic mirrors: reflects and auto-reflects; Kyverno: generate.kyverno.io labels),
// found in the input beside their source: a note to hand each over, never a new target.
import { describe, expect, it } from 'vitest';
import { convertManifests } from './convert.js';
import { parseManifests } from './manifests.js';

function object(kind: string, namespace: string, name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}): object {
  return { apiVersion: 'v1', kind, metadata: { name, namespace, annotations, labels }, data: {} };
}

function convert(...objects: object[]): ReturnType<typeof convertManifests> {
  return convertManifests(parseManifests(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }), 'test'));
}

const handOver = (subject: string, tool: string, command: string): object => ({ level: 'note', subject, message: expect.stringContaining(`made or filled by ${tool}; to keep it in place, hand it over: kubectl annotate ${command}`) });

describe('copies the tools already made', () => {
  it.each([
    ['a replicator push copy', [
      object('Secret', 'platform', 'registry', { 'replicator.v1.mittwald.de/replicate-to': 'team-.*' }),
      object('Secret', 'team-a', 'registry', { 'replicator.v1.mittwald.de/replicated-at': '2026-01-01T00:00:00Z', 'replicator.v1.mittwald.de/replicated-from-version': '42' }),
    ], handOver('Secret team-a/registry', 'mittwald replicator', 'secret registry -n team-a resource-distributor.io/adopt=platform-registry && kubectl label secret registry -n team-a resource-distributor.io/distribution=platform-registry'), { includedNamespaces: { list: [{ pattern: 'team-*' }] } }],
    ['a reflector automatic mirror, which names its source too', [
      object('ConfigMap', 'platform', 'ca', { 'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true', 'reflector.v1.k8s.emberstack.com/reflection-auto-enabled': 'true', 'reflector.v1.k8s.emberstack.com/reflection-auto-namespaces': 'team-a' }),
      object('ConfigMap', 'elsewhere', 'ca', { 'reflector.v1.k8s.emberstack.com/reflects': 'platform/ca', 'reflector.v1.k8s.emberstack.com/auto-reflects': 'True' }),
    ], handOver('ConfigMap elsewhere/ca', 'emberstack reflector', 'configmap ca -n elsewhere'), { includedNamespaces: { list: [{ name: 'team-a' }] } }],
    ['a Kyverno clone', [
      object('Secret', 'default', 'regcred'),
      { apiVersion: 'kyverno.io/v1', kind: 'ClusterPolicy', metadata: { name: 'sync' }, spec: { generateExisting: true, rules: [{ name: 'r', match: { any: [{ resources: { kinds: ['Namespace'] } }] }, generate: { apiVersion: 'v1', kind: 'Secret', name: 'regcred', namespace: '{{request.object.metadata.name}}', synchronize: true, clone: { namespace: 'default', name: 'regcred' } } }] } },
      object('Secret', 'team-a', 'regcred', {}, { 'app.kubernetes.io/managed-by': 'kyverno', 'generate.kyverno.io/policy-name': 'sync' }),
    ], handOver('Secret team-a/regcred', 'Kyverno', 'secret regcred -n team-a resource-distributor.io/adopt=default-regcred'), { allNamespaces: true }],
  ])('%s', (_, objects, finding, targets) => {
    const { distributions, findings } = convert(...objects);
    expect(findings).toContainEqual(finding);
    expect(distributions.map((distribution) => distribution.object.spec.targets)).toEqual([targets]);
  });

  it('says nothing of an unmarked object of the same name, nor of the source', () => {
    const { findings } = convert(object('Secret', 'platform', 'registry', { 'replicator.v1.mittwald.de/replicate-to': 'team-a' }), object('Secret', 'team-a', 'registry'));
    expect(findings).toEqual([]);
  });
});
