import { describe, expect, it } from 'vitest';
import { CORE_REGISTRY } from '../../../src/domain/kinds.js';
import { isDistributable, resolveDistribution } from '../../../src/reconcile/distributable.js';
import { distribution } from '../builders.js';

function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

/** A template whose managedFields[0].fieldsV1 nests `levels` deep (the template itself is 4 levels above it). */
function withDepth(levels: number) {
  const rd = distribution('deep').configMap('settings', { a: 'b' }).included('ns-a').build();
  rd.spec.resource.metadata.managedFields = [{ manager: 'kubectl', fieldsV1: nested(levels) }];
  return rd;
}

const noSources = { get: () => ({ synced: true as const, object: undefined }) };

describe('a template nested too deeply is not distributable', () => {
  it.each([
    { levels: 1, distributable: true },
    { levels: 60, distributable: true },
    { levels: 61, distributable: false },
    // 5,000 levels (every pass overflowed the stack), and far deeper.
    { levels: 5_000, distributable: false },
    { levels: 100_000, distributable: false },
  ])('$levels levels under managedFields: $distributable', ({ levels, distributable }) => {
    const rd = withDepth(levels);
    expect(isDistributable(rd, CORE_REGISTRY)).toBe(distributable);
    expect(resolveDistribution(rd, { sources: noSources, kinds: CORE_REGISTRY }).state).toBe(distributable ? 'ready' : 'invalid');
  });

  it('a source nested too deeply is not either', () => {
    const rd = distribution('from-source').source('platform', 'settings').included('ns-a').build();
    const source = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'platform', managedFields: [{ fieldsV1: nested(5_000) }] }, data: { a: 'b' } };
    expect(resolveDistribution(rd, { sources: { get: () => ({ synced: true, object: source }) }, kinds: CORE_REGISTRY }).state).toBe('invalid');
  });
});

describe('why nothing is distributed is said in the words of what was found', () => {
  const withSource = (object: Record<string, unknown> | undefined) => ({ get: () => ({ synced: true as const, object: object as never }) });
  const fromSource = distribution('from-source').source('platform', 'release', 'Secret').included('ns-a').build();
  const helmRelease = { apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1', metadata: { name: 'release', namespace: 'platform' }, data: { release: 'eA==' } };
  const caSource = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'release', namespace: 'platform' }, data: { 'ca.crt': 'Yw==', 'tls.crt': 'dA==', 'tls.key': 'c2VjcmV0' } };
  const inlineTls = distribution('inline-tls').secret('ca', { 'ca.crt': 'c', 'tls.crt': 't', 'tls.key': 'secret' }, 'kubernetes.io/tls').included('ns-a').build();
  const inlineHelm = distribution('inline').secret('release', { a: 'b' }, 'helm.sh/release.v1').included('ns-a').build();
  it.each([
    ['a source that is a Helm release', fromSource, withSource(helmRelease), { state: 'invalid', message: 'source Secret platform/release exists but is of type helm.sh/release.v1, which is never distributed: nothing is copied from it' }],
    ['a template of a forbidden type', inlineHelm, noSources, { state: 'invalid', message: 'spec.resource is a Secret of type helm.sh/release.v1, which is never distributed' }],
    ['a source that is missing', fromSource, noSources, { state: 'source-missing' }],
    ['an Opaque source', fromSource, withSource({ ...helmRelease, type: 'Opaque' }), { state: 'ready' }],
    [
      'a tls source shared as its CA only (copyData), of its own type',
      { ...fromSource, spec: { ...fromSource.spec, copyData: { include: ['ca.crt'] } } },
      withSource(caSource),
      {
        state: 'invalid',
        message:
          'source Secret platform/release: the copies would be Secrets of type "kubernetes.io/tls" without the key "tls.crt" and "tls.key", which that type requires: set spec.copyData.secretType: Opaque to copy it as an Opaque Secret, or let spec.copyData select the key',
      },
    ],
    ['a tls source shared as its CA only, as Opaque', { ...fromSource, spec: { ...fromSource.spec, copyData: { include: ['ca.crt'], secretType: 'Opaque' } } }, withSource(caSource), { state: 'ready', rd: { spec: { resource: { type: 'Opaque', data: { 'ca.crt': 'Yw==' } } } } }],
    [
      'a template stored without admission, its selection leaving its type without a key',
      { ...inlineTls, spec: { ...inlineTls.spec, copyData: { exclude: ['tls.key'] } } },
      noSources,
      { state: 'invalid', message: expect.stringMatching(/^spec\.resource: the copies would be Secrets of type "kubernetes.io\/tls" without the key "tls.key"/) as unknown as string },
    ],
    [
      'a template stored without admission, its copies given a type never distributed',
      { ...inlineTls, spec: { ...inlineTls.spec, copyData: { secretType: 'kubernetes.io/service-account-token' } } },
      noSources,
      { state: 'invalid', message: 'spec.resource is a Secret of type kubernetes.io/service-account-token, which is never distributed' },
    ],
    [
      'a source whose copies are given a type never distributed',
      { ...fromSource, spec: { ...fromSource.spec, copyData: { secretType: 'helm.sh/release.v1' } } },
      withSource(caSource),
      { state: 'invalid', message: 'source Secret platform/release is a Secret of type helm.sh/release.v1, which is never distributed' },
    ],
    ['a template shared as its CA only, as Opaque', { ...inlineTls, spec: { ...inlineTls.spec, copyData: { include: ['ca.crt'], secretType: 'Opaque' } } }, noSources, { state: 'ready', rd: { spec: { resource: { type: 'Opaque', data: { 'ca.crt': 'Yw==' } } } } }],
  ])('%s', (_case, rd, sources, expected) => {
    const resolved = resolveDistribution(rd, { sources, kinds: CORE_REGISTRY });
    expect(resolved).toMatchObject(expected);
    if ('message' in resolved) expect(resolved.message).not.toContain('not found');
    // The private key's value (c2VjcmV0 is "secret") is never in what the copies are made of, nor in a message.
    if (rd.spec.copyData !== undefined) expect(JSON.stringify(resolved)).not.toMatch(/c2VjcmV0/);
  });
});
