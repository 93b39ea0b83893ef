import { describe, expect, it, vi } from 'vitest';
import { base64, distribution, seedSample, type DistributionBuilder } from '../../test/unit/builders.js';
import { loadCrdSchema } from '../k8s/crd-schema.js';
import { compileSpecValidator } from './schema.js';
import { validateContent } from './validate-content.js';
import { validateDistribution } from './validate.js';

const schema = compileSpecValidator(loadCrdSchema());
const NS_RULE = "lowercase letters, digits and '-', at most 63 characters";
const LABEL_VALUE_RULE = "at most 63 characters: letters, digits, '-', '_' and '.', starting and ending with a letter or digit";
const KEY_RULE = "letters, digits, '-', '_' and '.', at most 253 characters";

function check(object: unknown, options: { oldObject?: unknown; namespaceExists?: (name: string) => boolean | undefined } = {}) {
  return validateDistribution({ object, schema, ...options });
}

/** `{a: {a: ... 'x'}}` with `levels` objects. */
function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

const cm = (): DistributionBuilder => distribution('d').configMap('c', { k: 'v' }).included('ns-1');
const withTargets = (targets: unknown): unknown => ({ ...cm().build(), spec: { ...cm().build().spec, targets } });
const secret = (): DistributionBuilder => distribution('d').secret('s', { k: 'v' }).included('ns-1');

describe('validateDistribution: valid objects', () => {
  it.each([
    ['the seed example', seedSample()],
    ['a Secret with stringData', secret().stringData({ password: 'p' })],
    ['a dockerconfigjson Secret', distribution('p').secret('pull', { '.dockerconfigjson': '{"auths":{}}' }, 'kubernetes.io/dockerconfigjson').allNamespaces()],
    ['a tls Secret', distribution('t').secret('tls', { 'tls.crt': 'c', 'tls.key': 'k' }, 'kubernetes.io/tls').allNamespaces()],
    ['a ConfigMap with binaryData', cm().binaryData({ 'logo.png': base64('png') })],
    ['every selector operator', distribution('s').configMap('c').expression('a', 'In', ['x']).expression('b', 'NotIn', ['y']).expression('c', 'Exists').expression('d', 'DoesNotExist')],
    ['a wrapped base64 value', secret().data({ k: 'YWJj\nZGVm' })],
  ])('%s', (_name, builder) => {
    expect(check(builder.build(), { namespaceExists: () => true })).toEqual({ problems: [], warnings: [] });
  });
});

describe('validateDistribution: each rule', () => {
  const longName = `${'a'.repeat(60)}.bcdefghij`;
  it.each<[string, unknown, { path: string; message: string }[]]>([
    ['not an object', 'hello', [{ path: '(object)', message: 'must be a ResourceDistribution object' }]],
    [
      'name not a DNS subdomain',
      { ...cm().build(), metadata: { name: 'Bad_Name' } },
      [{ path: 'metadata.name', message: `"Bad_Name" is not a valid name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters)` }],
    ],
    ['name missing', { ...cm().build(), metadata: { generateName: 'd-' } }, [{ path: 'metadata.name', message: 'is required (generateName is not supported)' }]],
    ['name too long for a label value', { ...cm().build(), metadata: { name: longName } }, [{ path: 'metadata.name', message: 'is 70 characters long: at most 63, because copies are labelled with it' }]],
    ['spec missing', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ResourceDistribution', metadata: { name: 'd' } }, [{ path: 'spec', message: 'is required: spec.resource (or spec.source) and spec.targets' }]],
    ['schema: a wrong type', { ...cm().build(), spec: { ...cm().build().spec, targets: { allNamespaces: 'yes' } } }, [{ path: 'spec.targets.allNamespaces', message: 'must be boolean' }]],
    ['resource missing', { ...cm().build(), spec: { targets: {} } }, [{ path: 'spec.resource', message: 'is required: a complete manifest (Secret or ConfigMap)' }]],
    [
      'a template nested deeper than 64 levels (its other problems untold: nothing else walks it)',
      cm().templateMetadata({ name: 'c', managedFields: [{ fieldsV1: nested(61) }] }).field('apiVersion', 'v2').build(),
      [{ path: 'spec.resource', message: 'nested deeper than 64 levels: a Kubernetes object needs far fewer' }],
    ],
    ['targets missing', { ...cm().build(), spec: { resource: cm().build().spec.resource } }, [{ path: 'spec.targets', message: 'is required: which namespaces get the copy ({} selects none)' }]],
    ['resource not v1', cm().field('apiVersion', 'apps/v1').build(), [{ path: 'spec.resource.apiVersion', message: '"apps/v1" is not supported for ConfigMap: set "v1"' }]],
    [
      'resource without apiVersion and kind',
      cm().template({ metadata: { name: 'c' }, data: {} }).build(),
      [
        { path: 'spec.resource.apiVersion', message: 'is required, e.g. "v1"' },
        { path: 'spec.resource.kind', message: 'is required: Secret or ConfigMap' },
      ],
    ],
    ['a misspelled Secret field (dropped by the API server: an empty Secret everywhere)', distribution('d').secret('s').field('stringdata', { token: 'x' }).included('a').build(), [{ path: 'spec.resource.stringdata', message: 'is not a field of a Secret: did you mean "stringData"?' }]],
    ['an unknown ConfigMap field', cm().field('dat', { a: 'b' }).build(), [{ path: 'spec.resource.dat', message: 'is not a field of a ConfigMap: a ConfigMap has apiVersion, kind, metadata, data, binaryData, immutable' }]],
    ['finalizers in the template', cm().template({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers: ['example.com/hold'] }, data: {} }).build(), [{ path: 'spec.resource.metadata.finalizers', message: 'is not allowed: every copy would keep it and never finish deleting when the distribution goes' }]],
    ['owner references in the template', cm().template({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u' }] }, data: {} }).build(), [{ path: 'spec.resource.metadata.ownerReferences', message: 'is not allowed: the distribution owns its copies (remove the field)' }]],
    ['resource kind not Secret/ConfigMap', cm().field('kind', 'Deployment').build(), [{ path: 'spec.resource.kind', message: '"Deployment" is not supported: use Secret or ConfigMap (allowed by RD_ALLOWED_KINDS)' }]],
    [
      'resource name missing, generateName used',
      cm().templateMetadata({ name: undefined, generateName: 'c-' }).build(),
      [
        { path: 'spec.resource.metadata.generateName', message: 'is not allowed: every copy needs the same, fixed name' },
        { path: 'spec.resource.metadata.name', message: 'is required: the name every copy gets' },
      ],
    ],
    ['resource name invalid', cm().templateMetadata({ name: 'My Config' }).build(), [{ path: 'spec.resource.metadata.name', message: expect.stringMatching(/^"My Config" is not a valid name \(lowercase/) as string }]],
    ['template label invalid', cm().templateLabels({ 'bad key!': 'v' }).build(), [{ path: 'spec.resource.metadata.labels["bad key!"]', message: expect.stringMatching(/^"bad key!" is not a valid label key/) as string }]],
    ['data key invalid', cm().data({ 'bad key': 'v' }).build(), [{ path: 'spec.resource.data["bad key"]', message: `"bad key" is not a valid key (${KEY_RULE})` }]],
    ['data key ".."', cm().data({ '..': 'v' }).build(), [{ path: 'spec.resource.data[".."]', message: `".." is not a valid key (${KEY_RULE})` }]],
    ['ConfigMap data value not a string', cm().field('data', { n: 3 }).build(), [{ path: 'spec.resource.data["n"]', message: 'must be a string' }]],
    ['Secret data not base64', secret().data({ password: 'not base64!' }).build(), [{ path: 'spec.resource.data["password"]', message: 'is not valid base64 (standard alphabet, padded)' }]],
    ['Secret data unpadded base64', secret().data({ password: 'YWJjZA' }).build(), [{ path: 'spec.resource.data["password"]', message: 'is not valid base64 (standard alphabet, padded)' }]],
    ['binaryData not base64', cm().binaryData({ b: '***' }).build(), [{ path: 'spec.resource.binaryData["b"]', message: 'is not valid base64 (standard alphabet, padded)' }]],
    ['a key in data and binaryData', cm().binaryData({ k: 'eA==' }).build(), [{ path: 'spec.resource.binaryData["k"]', message: '"k" is also in data: a key may be in only one' }]],
    ['Secret with binaryData', secret().binaryData({ b: 'eA==' }).build(), [{ path: 'spec.resource.binaryData', message: 'a Secret has no binaryData: use data (values are base64 already)' }]],
    ['ConfigMap with stringData', cm().stringData({ s: 'x' }).build(), [{ path: 'spec.resource.stringData', message: 'a ConfigMap has no stringData: use data (plain strings)' }]],
    ['immutable not a boolean', cm().field('immutable', 'yes').build(), [{ path: 'spec.resource.immutable', message: 'must be true or false' }]],
    [
      'Secret over 1 MiB',
      secret().stringData({ big: 'x'.repeat(1048576) }).build(),
      [{ path: 'spec.resource', message: 'the Secret holds 1048577 bytes, over the 1 MiB (1048576 bytes) limit: split it' }],
    ],
    [
      'ConfigMap over 1 MiB (data + binaryData)',
      cm().data({ a: 'x'.repeat(1048000) }).binaryData({ b: base64('y'.repeat(1000)) }).build(),
      [{ path: 'spec.resource', message: 'the ConfigMap holds 1049000 bytes, over the 1 MiB (1048576 bytes) limit: split it' }],
    ],
    ['Secret type invalid', secret().type('my type').build(), [{ path: 'spec.resource.type', message: '"my type" is not a valid Secret type (e.g. Opaque or kubernetes.io/tls)' }]],
    [
      'forbidden Secret type',
      secret().type('kubernetes.io/service-account-token').build(),
      [{ path: 'spec.resource.type', message: 'Secrets of type "kubernetes.io/service-account-token" are never distributed: they belong to one namespace or tool' }],
    ],
    ['tls Secret without its keys', secret().type('kubernetes.io/tls').build(), [{ path: 'spec.resource.data', message: 'a Secret of type "kubernetes.io/tls" needs the key "tls.crt" and "tls.key"' }]],
    ['basic-auth Secret without its keys', secret().type('kubernetes.io/basic-auth').build(), [{ path: 'spec.resource.data', message: 'a Secret of type "kubernetes.io/basic-auth" needs the key "username" or "password"' }]],
    [
      'dockerconfigjson that is not JSON',
      distribution('p').secret('pull', { '.dockerconfigjson': '{nope' }, 'kubernetes.io/dockerconfigjson').included('a').build(),
      [{ path: 'spec.resource.data[".dockerconfigjson"]', message: 'must hold valid JSON (a Docker config file)' }],
    ],
    [
      'included namespace not a DNS label',
      distribution('d').configMap('c').included('ns-1', 'Bad_NS').build(),
      [{ path: 'spec.targets.includedNamespaces.list[1].name', message: `"Bad_NS" is not a valid namespace name (${NS_RULE})` }],
    ],
    [
      'excluded namespace not a DNS label',
      cm().excluded('a.b').build(),
      [{ path: 'spec.targets.excludedNamespaces.list[0].name', message: `"a.b" is not a valid namespace name (${NS_RULE})` }],
    ],
    ['a name pattern', { ...cm().build(), spec: { ...cm().build().spec, targets: { includedNamespaces: { list: [{ pattern: 'team-*' }] }, excludedNamespaces: { list: [{ pattern: '*-prod' }] } } } }, []],
    ['a bad name pattern', { ...cm().build(), spec: { ...cm().build().spec, targets: { includedNamespaces: { list: [{ pattern: 'Team_*' }] } } } }, [{ path: 'spec.targets.includedNamespaces.list[0].pattern', message: '"Team_*" is not a namespace name pattern (lowercase letters, digits, \'-\' and \'*\' for any characters, matched against the whole name, e.g. "team-*")' }]],
    ['a name and a pattern in one entry', { ...cm().build(), spec: { ...cm().build().spec, targets: { includedNamespaces: { list: [{ name: 'a', pattern: 'b*' }] } } } }, [{ path: 'spec.targets.includedNamespaces.list[0]', message: 'has both name and pattern: keep one of them' }]],
    ['namespace entry without a name', { ...cm().build(), spec: { ...cm().build().spec, targets: { includedNamespaces: { list: [{}] } } } }, [{ path: 'spec.targets.includedNamespaces.list[0].name', message: 'is required: a namespace name (or a pattern such as "team-*")' }]],
    // A 718-byte distribution made to stall admission: answered at once, whatever its patterns' stars.
    [
      'a pattern of many stars against long names',
      withTargets({ includedNamespaces: { list: Array.from({ length: 5 }, (_, i) => ({ name: `${'a'.repeat(62)}${i}` })) }, excludedNamespaces: { list: [{ pattern: 'a*a*a*a*a*a*a*b' }] } }),
      [],
    ],
    [
      'patterns that would cost too much per namespace',
      withTargets({ includedNamespaces: { list: Array.from({ length: 70 }, (_, i) => ({ pattern: `*a${i}*b*` })) } }),
      [{ path: 'spec.targets', message: `its name patterns could take 17642 comparisons to test one namespace name, more than the 1024 allowed: use fewer patterns, or fewer that share their start or that start and end with '*' (a pattern such as "team-a-*" is looked up, not tried)` }],
    ],
    [
      'many names against exclusion patterns that are all tried',
      withTargets({
        includedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ name: `${'n'.repeat(57)}-${i}` })) },
        excludedNamespaces: { list: Array.from({ length: 5 }, (_, i) => ({ pattern: `*x${i}*` })) },
      }),
      [{ path: 'spec.targets.excludedNamespaces', message: 'testing its 10000 included names against 5 exclusion patterns takes more than the 2000000 comparisons allowed: exclude by name, or list fewer names or patterns' }],
    ],
    [
      'many names against many exclusion patterns that are looked up',
      withTargets({
        includedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ name: `ns-${i}` })) },
        excludedNamespaces: { list: Array.from({ length: 10_000 }, (_, i) => ({ pattern: `old-${i}-*` })) },
      }),
      [],
    ],
    [
      'a namespace both included and excluded',
      cm().included('ns-3').excluded('ns-3').build(),
      [{ path: 'spec.targets.includedNamespaces.list[1].name', message: '"ns-3" is both included and excluded: remove it from one of the lists' }],
    ],
    [
      'selector: invalid matchLabels key and value',
      cm().matchLabels({ 'a/b/c': 'ok', good: 'bad value' }).build(),
      [
        { path: 'spec.targets.namespaceLabelSelector.matchLabels["a/b/c"]', message: expect.stringMatching(/^"a\/b\/c" is not a valid label key/) as string },
        { path: 'spec.targets.namespaceLabelSelector.matchLabels["good"]', message: `"bad value" is not a valid label value (${LABEL_VALUE_RULE})` },
      ],
    ],
    ['selector: In without values', cm().expression('env', 'In', []).build(), [{ path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].values', message: 'must not be empty for operator In' }]],
    ['selector: NotIn without values', cm().expression('env', 'NotIn').build(), [{ path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].values', message: 'must not be empty for operator NotIn' }]],
    ['selector: Exists with values', cm().expression('env', 'Exists', ['x']).build(), [{ path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].values', message: 'must be empty for operator Exists' }]],
    ['selector: unknown operator', cm().expression('env', 'Gt' as 'In', ['1']).build(), [{ path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].operator', message: '"Gt" is not a valid operator: use In, NotIn, Exists or DoesNotExist' }]],
    ['selector: invalid key and value', cm().expression('-bad', 'In', ['ok', 'no way']).build(), [
      { path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].key', message: expect.stringMatching(/^"-bad" is not a valid label key/) as string },
      { path: 'spec.targets.namespaceLabelSelector.matchExpressions[0].values[1]', message: `"no way" is not a valid label value (${LABEL_VALUE_RULE})` },
    ]],
    ['unknown writePolicy', cm().writePolicy('always' as 'strict').build(), [{ path: 'spec.writePolicy', message: '"always" is not a write policy: use ignore, overwrite or strict' }]],
    ['syncPolicy CreateOnce', cm().syncPolicy('CreateOnce').build(), []],
    ['syncPolicy Sync', cm().syncPolicy('Sync').build(), []],
    ['unknown syncPolicy', cm().syncPolicy('Once' as 'Sync').build(), [{ path: 'spec.syncPolicy', message: expect.stringMatching(/^"Once" is not a sync policy: use Sync .* or CreateOnce/) as string }]],
    ['a label added to copies under one of our keys', { ...cm().build(), spec: { ...cm().build().spec, copyMetadata: { labels: { add: { 'resource-distributor.io/distribution': 'x' } } } } }, [
      { path: 'spec.copyMetadata.labels.add["resource-distributor.io/distribution"]', message: expect.stringContaining('is not allowed') as string },
    ]],
  ])('%s', (_name, object, expected) => {
    const result = check(object);
    expect(result.problems).toEqual(expected);
  });

  it('UPDATE: apiVersion, kind and name of the resource are immutable', () => {
    const before = distribution('d').secret('s', { k: 'v' }).included('a').build();
    const after = distribution('d').configMap('other', { k: 'v' }).included('a').build();
    expect(check(after, { oldObject: before }).problems).toEqual([
      { path: 'spec.resource.kind', message: 'is immutable (was "Secret"): create a new ResourceDistribution for a different object' },
      { path: 'spec.resource.metadata.name', message: 'is immutable (was "s"): create a new ResourceDistribution for a different object' },
    ]);
    expect(check(before, { oldObject: before }).problems).toEqual([]);
    const content = distribution('d').secret('s', { k: 'changed' }).included('a').build();
    expect(check(content, { oldObject: before }).problems).toEqual([]);
  });

  it('reports all problems at once', () => {
    const object = { ...distribution('d').configMap('c').field('kind', 'Pod').included('Bad').writePolicy('x' as 'strict').build(), metadata: { name: 'X' } };
    expect(check(object).problems.map((p) => p.path)).toEqual([
      'metadata.name',
      'spec.resource.kind',
      'spec.targets.includedNamespaces.list[0].name',
      'spec.writePolicy',
    ]);
  });
});

describe('validateDistribution: spec.imagePullSecretInjection', () => {
  const pull = (): DistributionBuilder => distribution('p').secret('pull', { '.dockerconfigjson': '{"auths":{}}' }, 'kubernetes.io/dockerconfigjson').allNamespaces();
  const legacy = (): DistributionBuilder => distribution('p').secret('pull', { '.dockercfg': '{}' }, 'kubernetes.io/dockercfg').allNamespaces();
  const withMode = (builder: DistributionBuilder, mode: unknown): unknown => {
    const rd = builder.build();
    return { ...rd, spec: { ...rd.spec, imagePullSecretInjection: mode } };
  };
  const FIELD = 'spec.imagePullSecretInjection';

  it.each([
    ['MatchingImages on a dockerconfigjson Secret', withMode(pull(), 'MatchingImages'), []],
    ['Always on a legacy dockercfg Secret', withMode(legacy(), 'Always'), []],
    ['Never on anything', withMode(cm(), 'Never'), []],
    ['Always on an Opaque Secret', withMode(secret(), 'Always'), [FIELD]],
    ['MatchingImages on a ConfigMap', withMode(cm(), 'MatchingImages'), [FIELD]],
    ['a mode that does not exist', withMode(pull(), 'Sometimes'), [FIELD]],
  ])('%s', (_what, object, paths) => {
    expect(check(object, { namespaceExists: () => true }).problems.map((problem) => problem.path)).toEqual(paths);
  });
});

describe('validateDistribution: warnings', () => {
  it.each<[string, DistributionBuilder, ((name: string) => boolean | undefined) | undefined, string[]]>([
    ['included namespaces that do not exist', cm().included('ns-2'), (name) => name === 'ns-1', ['namespace "ns-2" does not exist yet: copied when it appears']],
    ['unknown existence (cache not synced): no warning', cm(), () => undefined, []],
    [
      'kube-system and kube-public listed',
      cm().included('kube-system', 'kube-public'),
      () => true,
      ['namespace "kube-system" is never a target and is ignored', 'namespace "kube-public" is never a target and is ignored'],
    ],
    [
      'many missing namespaces are summed up',
      distribution('d').configMap('c').included('a', 'b', 'c', 'd', 'e', 'f', 'g'),
      () => false,
      [...['a', 'b', 'c', 'd', 'e'].map((n) => `namespace "${n}" does not exist yet: copied when it appears`), '2 more included namespaces do not exist yet'],
    ],
    [
      'a name listed twice: missing once; kube-system listed twice: ignored twice',
      distribution('d').configMap('c').included('a', 'kube-system', 'b', 'a', 'kube-system'),
      (name) => name === 'b',
      [
        'namespace "kube-system" is never a target and is ignored',
        'namespace "kube-system" is never a target and is ignored',
        'namespace "a" does not exist yet: copied when it appears',
      ],
    ],
    ['targets select nothing', distribution('d').configMap('c'), undefined, ['spec.targets selects no namespace: set allNamespaces, includedNamespaces or namespaceLabelSelector']],
    ['an included name an exclusion pattern removes', cm().included('team-a', 'ops').patterns([], ['team-*']), () => true, ['namespace "team-a" is included but an excludedNamespaces pattern removes it: never a target']],
    ['an included name no exclusion pattern matches', cm().included('ops').patterns([], ['team-*']), () => true, []],
    [
      'many removed by patterns are summed up',
      cm().included('t-1', 't-2', 't-3', 't-4', 't-5', 't-6', 't-7').patterns([], ['t-*']),
      () => true,
      [...[1, 2, 3, 4, 5].map((n) => `namespace "t-${n}" is included but an excludedNamespaces pattern removes it: never a target`), '2 more included namespaces are removed by excludedNamespaces patterns'],
    ],
    ['resource namespace set', cm().templateMetadata({ namespace: 'source' }), () => true, ['spec.resource.metadata.namespace is ignored: copies go to the target namespaces']],
  ])('%s', (_name, builder, namespaceExists, expected) => {
    const result = check(builder.build(), { namespaceExists });
    expect(result.problems).toEqual([]);
    expect(result.warnings).toEqual(expected);
  });

  it('keeps every warning under 120 characters', () => {
    const longest = 'n'.repeat(63);
    const result = check(cm().included(longest, 'kube-system').templateMetadata({ namespace: 'x' }).build(), { namespaceExists: () => false });
    expect(result.warnings.length).toBeGreaterThan(2);
    for (const warning of result.warnings) expect(warning.length).toBeLessThan(120);
  });
});

describe('validateDistribution: never echoes Secret data', () => {
  it('a bad base64 value is not quoted', () => {
    const result = check(secret().data({ password: 'hunter2 is my password' }).build());
    expect(JSON.stringify(result)).not.toContain('hunter2');
  });
});

describe('validateContent cost', () => {
  /** A map that counts how often its key list is taken. */
  function counted(entries: Record<string, string>): { map: Record<string, string>; listings: () => number } {
    let listings = 0;
    const map = new Proxy(entries, {
      ownKeys(target) {
        listings++;
        return Reflect.ownKeys(target);
      },
    });
    return { map, listings: () => listings };
  }

  // Keys present in two maps at once were found by listing one map once per key of the other:
  // 10,000 shared keys froze the event loop for seconds.
  it.each([
    ['Secret', 'data', 'stringData'],
    ['ConfigMap', 'data', 'binaryData'],
  ] as const)('%s: lists %s a bounded number of times, however many keys %s shares with it', (kind, listed, other) => {
    const keys = Array.from({ length: 2_000 }, (_, i) => `k${i}`);
    const { map, listings } = counted(Object.fromEntries(keys.map((key) => [key, base64('v')])));
    const resource = { apiVersion: 'v1', kind, metadata: { name: 'x' }, [listed]: map, [other]: Object.fromEntries(keys.map((key) => [key, other === 'binaryData' ? base64('v') : 'v'])) };
    const includes = vi.spyOn(Array.prototype, 'includes');
    try {
      validateContent(resource, kind);
      // Neither re-listing one map per key of the other, nor searching a key array per key.
      expect(listings()).toBeLessThanOrEqual(10);
      expect(includes.mock.calls.length).toBeLessThanOrEqual(50);
    } finally {
      includes.mockRestore();
    }
  });
});
