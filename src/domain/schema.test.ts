import { describe, expect, it } from 'vitest';
import { distribution, seedSample } from '../../test/unit/builders.js';
import { loadCrdSchema } from '../k8s/crd-schema.js';
import { compileSpecValidator, toFieldPath } from './schema.js';

const validate = compileSpecValidator(loadCrdSchema());

function withSpec(patch: (object: Record<string, unknown>) => void): unknown {
  const object = JSON.parse(JSON.stringify(seedSample().build())) as Record<string, unknown>;
  patch(object);
  return object;
}

const spec = (o: Record<string, unknown>): Record<string, unknown> => o.spec as Record<string, unknown>;
const targets = (o: Record<string, unknown>): Record<string, unknown> => spec(o).targets as Record<string, unknown>;

describe('compileSpecValidator with the CRD schema', () => {
  it('accepts the seed example and a full-featured distribution', () => {
    expect(validate(seedSample().build())).toEqual([]);
    const full = distribution('full')
      .secret('s', { a: 'b' })
      .allNamespaces()
      .excluded('x')
      .expression('env', 'NotIn', ['prod'])
      .writePolicy('overwrite')
      .status({
        desired: 2,
        succeeded: 1,
        failed: 1,
        observedGeneration: 4,
        conditions: [{ type: 'ConflictOccurred', status: 'True', reason: 'ResourceConflict', message: 'm', lastTransitionTime: '2024-05-01T10:00:00Z', failedNamespace: ['x'] }],
      })
      .build();
    expect(validate(full)).toEqual([]);
  });

  it.each<[string, (o: Record<string, unknown>) => void, { path: string; message: string }[]]>([
    ['unknown writePolicy', (o) => (spec(o).writePolicy = 'always'), [{ path: 'spec.writePolicy', message: 'must be one of: ignore, overwrite, strict' }]],
    ['targets missing', (o) => delete spec(o).targets, [{ path: 'spec.targets', message: 'required field is missing' }]],
    // Either resource or source: the validator's own rule says which is missing (and the CEL rule in the API server).
    ['resource missing', (o) => delete spec(o).resource, []],
    [
      'a source without namespace and name',
      (o) => {
        delete spec(o).resource;
        spec(o).source = { apiVersion: 'v1', kind: 'Secret' };
      },
      [
        { path: 'spec.source.namespace', message: 'required field is missing' },
        { path: 'spec.source.name', message: 'required field is missing' },
      ],
    ],
    ['resource not an object', (o) => (spec(o).resource = 'ConfigMap'), [{ path: 'spec.resource', message: 'must be object' }]],
    ['allNamespaces not a boolean', (o) => (targets(o).allNamespaces = 'yes'), [{ path: 'spec.targets.allNamespaces', message: 'must be boolean' }]],
    [
      'a namespace name not a string',
      (o) => (targets(o).includedNamespaces = { list: [{ name: 'a' }, { name: 7 }] }),
      [{ path: 'spec.targets.includedNamespaces.list[1].name', message: 'must be string' }],
    ],
    [
      'a matchLabels value not a string, key with a slash',
      (o) => (targets(o).namespaceLabelSelector = { matchLabels: { 'example.com/x': true } }),
      [{ path: 'spec.targets.namespaceLabelSelector.matchLabels["example.com/x"]', message: 'must be string' }],
    ],
    [
      'an expression without operator',
      (o) => (targets(o).namespaceLabelSelector = { matchExpressions: [{ key: 'k' }] }),
      [{ path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].operator', message: 'required field is missing' }],
    ],
    // Bounds: one crafted distribution must not carry inputs that cost the webhook and every
    // reconcile more than a real one ever needs.
    [
      'more than 10000 included namespaces',
      (o) => (targets(o).includedNamespaces = { list: Array.from({ length: 10_001 }, (_, i) => ({ name: `ns-${i}` })) }),
      [{ path: 'spec.targets.includedNamespaces.list', message: 'must NOT have more than 10000 items' }],
    ],
    [
      'an excluded namespace name longer than a DNS label',
      (o) => (targets(o).excludedNamespaces = { list: [{ name: 'x'.repeat(64) }] }),
      [{ path: 'spec.targets.excludedNamespaces.list[0].name', message: 'must NOT have more than 63 characters' }],
    ],
    [
      'more than 64 matchExpressions',
      (o) => (targets(o).namespaceLabelSelector = { matchExpressions: Array.from({ length: 65 }, () => ({ key: 'k', operator: 'Exists' })) }),
      [{ path: 'spec.targets.namespaceLabelSelector.matchExpressions', message: 'must NOT have more than 64 items' }],
    ],
    [
      'more than 64 matchLabels',
      (o) => (targets(o).namespaceLabelSelector = { matchLabels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }),
      [{ path: 'spec.targets.namespaceLabelSelector.matchLabels', message: 'must NOT have more than 64 properties' }],
    ],
    [
      'more than 10000 values in an expression',
      (o) => (targets(o).namespaceLabelSelector = { matchExpressions: [{ key: 'k', operator: 'In', values: Array.from({ length: 10_001 }, (_, i) => `v${i}`) }] }),
      [{ path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].values', message: 'must NOT have more than 10000 items' }],
    ],
    ['int32 overflow', (o) => (o.status = { desired: 2 ** 31 }), [{ path: 'status.desired', message: 'must match format "int32"' }]],
    ['not an integer', (o) => (o.status = { failed: 1.5 }), [{ path: 'status.failed', message: 'must be integer' }]],
    [
      'lastTransitionTime not a date-time',
      (o) => (o.status = { conditions: [{ type: 'X', status: 'True', lastTransitionTime: 'yesterday' }] }),
      [{ path: 'status.conditions[0].lastTransitionTime', message: 'must match format "date-time"' }],
    ],
  ])('%s', (_name, patch, expected) => {
    expect(validate(withSpec(patch))).toEqual(expected);
  });

  it('reports every problem at once', () => {
    const problems = validate(withSpec((o) => {
      spec(o).writePolicy = 'x';
      targets(o).allNamespaces = 1;
    }));
    expect(problems.map((p) => p.path).sort()).toEqual(['spec.targets.allNamespaces', 'spec.writePolicy']);
  });
});

describe('toFieldPath', () => {
  it.each([
    ['', ''],
    ['/spec/writePolicy', 'spec.writePolicy'],
    ['/spec/targets/includedNamespaces/list/1/name', 'spec.targets.includedNamespaces.list[1].name'],
    ['/spec/resource/data/tls.crt', 'spec.resource.data["tls.crt"]'],
    ['/a/b~1c/d~0e', 'a["b/c"]["d~e"]'],
  ])('%s -> %s', (pointer, expected) => {
    expect(toFieldPath(pointer)).toBe(expected);
  });
});
