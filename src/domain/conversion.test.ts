import { describe, expect, it } from 'vitest';
import { ANNOTATION_CONVERSION, convertDistribution } from './conversion.js';
import type { UnknownRecord } from './field-problem.js';

const ALPHA = 'apps.kruise.io/v1alpha1';
const BETA = 'apps.kruise.io/v1beta1';

/** Every field of the API, in one object; `selectorKey` and `failedKey` are the version's spellings. */
function everyField(apiVersion: string, selectorKey: string, failedKey: string): UnknownRecord {
  return {
    apiVersion,
    kind: 'ResourceDistribution',
    metadata: { name: 'every-field', uid: 'u-1', resourceVersion: '42', generation: 3, labels: { app: 'demo' }, annotations: { keep: 'me' } },
    spec: {
      resource: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull', labels: { a: 'b' } }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'e30=' } },
      source: { apiVersion: 'v1', kind: 'Secret', namespace: 'vault', name: 'pull' },
      copyData: { include: ['.dockerconfigjson', '*.json'], exclude: ['internal-*'], secretType: 'kubernetes.io/dockerconfigjson' },
      targets: {
        allNamespaces: true,
        includedNamespaces: { list: [{ name: 'ns-1' }, { pattern: 'team-*' }] },
        excludedNamespaces: { list: [{ name: 'ns-2' }, { pattern: 'tmp-*' }] },
        [selectorKey]: { matchLabels: { team: 'platform' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
      },
      writePolicy: 'strict',
      imagePullSecretInjection: 'MatchingImages',
      copyMetadata: { labels: { include: ['app.kubernetes.io/*'], exclude: ['internal'] }, annotations: { exclude: ['*'] } },
    },
    status: {
      desired: 3,
      succeeded: 2,
      failed: 1,
      observedGeneration: 3,
      conditions: [
        { type: 'CreateResourceFailed', status: 'True', reason: 'CreateFailed', message: 'create failed in ns-2', lastTransitionTime: '2026-11-27T10:00:00Z', [failedKey]: ['ns-2'] },
        { type: 'Ready', status: 'False', reason: 'Failing', lastTransitionTime: '2026-11-27T10:00:00Z' },
      ],
    },
  };
}

/** OpenKruise's own examples (its conversion tests), in our words. */
const kruiseConvertTo = {
  apiVersion: ALPHA,
  kind: 'ResourceDistribution',
  metadata: { name: 'demo', labels: { app: 'demo' } },
  spec: {
    resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'demo' }, data: { k: 'v' } },
    targets: { allNamespaces: true, includedNamespaces: { list: [{ name: 'ns-1' }] }, excludedNamespaces: { list: [{ name: 'ns-2' }] } },
  },
  status: { desired: 3, succeeded: 2, failed: 1, observedGeneration: 7, conditions: [{ type: 'CreateResourceFailed', status: 'True', reason: 'create failed', failedNamespace: ['ns-2'] }] },
};
const kruiseConvertFrom = {
  apiVersion: BETA,
  kind: 'ResourceDistribution',
  metadata: { name: 'demo', annotations: { keep: 'me' } },
  spec: {
    resource: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'demo' }, type: 'Opaque' },
    targets: { namespaceSelector: { matchLabels: { team: 'platform' } } },
  },
  status: { conditions: [{ type: 'NamespaceNotExists', status: 'True', failedNamespaces: ['ns-a', 'ns-b'] }] },
};

describe('convertDistribution', () => {
  const PAIRS: [string, UnknownRecord, UnknownRecord][] = [
    ['every field of both versions', everyField(ALPHA, 'namespaceLabelSelector', 'failedNamespace'), everyField(BETA, 'namespaceSelector', 'failedNamespaces')],
    [
      "OpenKruise's v1alpha1 example: lists and counts as they are, failedNamespace becomes failedNamespaces",
      kruiseConvertTo,
      { ...kruiseConvertTo, apiVersion: BETA, status: { ...kruiseConvertTo.status, conditions: [{ type: 'CreateResourceFailed', status: 'True', reason: 'create failed', failedNamespaces: ['ns-2'] }] } },
    ],
    [
      "OpenKruise's v1beta1 example: namespaceSelector becomes namespaceLabelSelector, annotations kept",
      {
        ...kruiseConvertFrom,
        apiVersion: ALPHA,
        spec: { ...kruiseConvertFrom.spec, targets: { namespaceLabelSelector: { matchLabels: { team: 'platform' } } } },
        status: { conditions: [{ type: 'NamespaceNotExists', status: 'True', failedNamespace: ['ns-a', 'ns-b'] }] },
      },
      kruiseConvertFrom,
    ],
    [
      'an empty selector stays an empty selector (it matches nothing in both)',
      { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 'e' }, spec: { targets: { namespaceLabelSelector: {} } } },
      { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'e' }, spec: { targets: { namespaceSelector: {} } } },
    ],
    [
      'a CA shared from a cert-manager Secret (copyData): its selection and type as they are, in both',
      { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 'ca' }, spec: { source: { apiVersion: 'v1', kind: 'Secret', namespace: 'cert-manager', name: 'internal-ca' }, targets: { namespaceLabelSelector: { matchLabels: { ca: 'internal' } } }, copyData: { include: ['ca.crt'], exclude: ['tls.key'], secretType: 'Opaque' } } },
      { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'ca' }, spec: { source: { apiVersion: 'v1', kind: 'Secret', namespace: 'cert-manager', name: 'internal-ca' }, targets: { namespaceSelector: { matchLabels: { ca: 'internal' } } }, copyData: { include: ['ca.crt'], exclude: ['tls.key'], secretType: 'Opaque' } } },
    ],
    [
      'an empty copyData stays empty (every key, the source\'s type)',
      { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 'all' }, spec: { targets: {}, copyData: {} } },
      { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'all' }, spec: { targets: {}, copyData: {} } },
    ],
    [
      'no spec and no status (a list of conversions may carry any stored object)',
      { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 'bare' } },
      { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'bare' } },
    ],
    ...(['Sync', 'CreateOnce'] as const).map((syncPolicy): [string, UnknownRecord, UnknownRecord] => {
      const spec = {
        targets: { allNamespaces: true },
        syncPolicy,
        copyMetadata: { labels: { add: { 'argocd.argoproj.io/secret-type': 'repository', team: 'platform' } }, annotations: { add: { 'reloader.stakater.com/match': 'true' }, exclude: ['internal.example.com/*'] } },
      };
      return [`syncPolicy ${syncPolicy} and labels and annotations added to copies`, { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 's' }, spec }, { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 's' }, spec }];
    }),
    [
      'empty targets, an empty condition list',
      { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 'm' }, spec: { targets: {} }, status: { desired: 0, conditions: [] } },
      { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'm' }, spec: { targets: {} }, status: { desired: 0, conditions: [] } },
    ],
  ];

  it.each(PAIRS)('%s: v1alpha1 to v1beta1 and back, both ways', (_name, alpha, beta) => {
    expect(convertDistribution(alpha, BETA)).toEqual({ ok: true, object: beta });
    expect(convertDistribution(beta, ALPHA)).toEqual({ ok: true, object: alpha });
    const there = convertDistribution(alpha, BETA);
    const back = there.ok ? convertDistribution(there.object, ALPHA) : there;
    expect(back).toEqual({ ok: true, object: alpha });
  });

  it.each(PAIRS)('%s: the input is not changed', (_name, alpha) => {
    const before = structuredClone(alpha);
    convertDistribution(alpha, BETA);
    expect(alpha).toEqual(before);
  });

  it.each([ALPHA, BETA])('to its own version (%s), an object is returned as it is', (version) => {
    const object = everyField(version, 'x', 'y');
    expect(convertDistribution(object, version)).toEqual({ ok: true, object });
  });

  // A later version may add fields the other has no place for: kept in the annotation, put back on the way back.
  const FUTURE: [string, UnknownRecord, { path: (string | number)[]; value: unknown }[]][] = [
    [
      'a spec field',
      { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'f' }, spec: { targets: {}, rollout: { maxUnavailable: 2 } } },
      [{ path: ['spec', 'rollout'], value: { maxUnavailable: 2 } }],
    ],
    [
      'a targets field, beside a renamed one',
      { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'f', annotations: { keep: 'me' } }, spec: { targets: { namespaceSelector: { matchLabels: { a: 'b' } }, namespaceFieldSelector: 'x' } } },
      [{ path: ['spec', 'targets', 'namespaceFieldSelector'], value: 'x' }],
    ],
    [
      "a condition's field, and a status field",
      {
        apiVersion: BETA,
        kind: 'ResourceDistribution',
        metadata: { name: 'f' },
        spec: { targets: {} },
        status: { desired: 1, pending: 4, conditions: [{ type: 'Ready', status: 'True', reason: 'Synced' }, { type: 'ConflictOccurred', status: 'True', reason: 'C', failedNamespaces: ['a'], observedAt: 'x' }] },
      },
      [
        { path: ['status', 'pending'], value: 4 },
        { path: ['status', 'conditions', 1, 'observedAt'], value: 'x' },
      ],
    ],
    ['a top-level field', { apiVersion: BETA, kind: 'ResourceDistribution', metadata: { name: 'f' }, spec: { targets: {} }, extra: [1, 2] }, [{ path: ['extra'], value: [1, 2] }]],
  ];

  it.each(FUTURE)('%s that v1alpha1 lacks is kept in the annotation and put back in v1beta1', (_name, beta, kept) => {
    const alpha = convertDistribution(beta, ALPHA);
    if (!alpha.ok) throw new Error(alpha.message);
    const annotation = (alpha.object.metadata as { annotations: Record<string, string> }).annotations[ANNOTATION_CONVERSION];
    expect(JSON.parse(annotation ?? '')).toEqual(kept);
    for (const { path } of kept) expect(JSON.stringify(alpha.object)).not.toContain(`"${String(path.at(-1))}":`);
    expect(convertDistribution(alpha.object, BETA)).toEqual({ ok: true, object: beta });
  });

  it('a field kept in the annotation survives an update in v1alpha1 and any number of round trips', () => {
    const beta = FUTURE[1]?.[1] ?? {};
    let object = beta;
    for (let i = 0; i < 3; i++) {
      const alpha = convertDistribution(object, ALPHA);
      if (!alpha.ok) throw new Error(alpha.message);
      (alpha.object.spec as { writePolicy?: string }).writePolicy = 'overwrite';
      const back = convertDistribution(alpha.object, BETA);
      if (!back.ok) throw new Error(back.message);
      object = back.object;
    }
    expect(object).toEqual({ ...beta, spec: { ...(beta.spec as object), writePolicy: 'overwrite' } });
  });

  it.each<[string, UnknownRecord, string, string]>([
    ['an unknown desired version', { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 'x' } }, 'apps.kruise.io/v1', 'cannot convert to apps.kruise.io/v1: only apps.kruise.io/v1alpha1 and apps.kruise.io/v1beta1 are served'],
    ['an object of another group', { apiVersion: 'apps/v1', kind: 'ResourceDistribution', metadata: { name: 'x' } }, BETA, 'cannot convert from apiVersion "apps/v1"'],
    [
      'an annotation that is not ours to read',
      { apiVersion: ALPHA, kind: 'ResourceDistribution', metadata: { name: 'x', annotations: { [ANNOTATION_CONVERSION]: 'hello' } } },
      BETA,
      `metadata.annotations["${ANNOTATION_CONVERSION}"] is not a list of preserved fields`,
    ],
  ])('refuses %s', (_name, object, desired, message) => {
    expect(convertDistribution(object, desired)).toEqual({ ok: false, message });
  });
});
