import { describe, expect, it } from 'vitest';
import { base64, controllerRef, copyOf, distribution, foreign, T0, T1, type ResourceBuilder } from '../../test/unit/builders.js';
import { classifyExisting, isForbiddenSecretType, isInSync, isOursInSync, mergeCopy, needsRecreate, renderCopy } from './copy.js';
import { hashResource } from './hash.js';
import {
  ANNOTATION_ADOPT,
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_TEMPLATE_METADATA,
  ANNOTATION_TIMESTAMP,
  LABEL_DISTRIBUTION,
  type ResolvedDistribution,
  type Resource,
} from './types.js';

const rd = distribution('shared').configMap('settings', { a: '1' }).templateLabels({ team: 'x' }).build();

describe('renderCopy', () => {
  it('sets namespace, our annotations, label and controller reference over the template', () => {
    const copy = renderCopy(rd, 'ns-1', T0);
    expect(copy).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'settings',
        namespace: 'ns-1',
        labels: { team: 'x', [LABEL_DISTRIBUTION]: 'shared' },
        annotations: {
          [ANNOTATION_TEMPLATE_METADATA]: '{"labels":["team"]}',
          [ANNOTATION_FROM]: 'shared',
          [ANNOTATION_HASH]: hashResource(rd.spec.resource),
          [ANNOTATION_TIMESTAMP]: '2024-05-01T10:00:00Z',
        },
        ownerReferences: [
          {
            apiVersion: 'apps.kruise.io/v1beta1',
            kind: 'ResourceDistribution',
            name: 'shared',
            uid: 'uid-shared',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      data: { a: '1' },
    });
  });

  it('strips server-set metadata a template copied from a live object carries', () => {
    const template = distribution('d')
      .configMap('c', {})
      .templateMetadata({
        namespace: 'source',
        uid: 'u',
        resourceVersion: '9',
        creationTimestamp: '2020-01-01T00:00:00Z',
        managedFields: [{ manager: 'kubectl' }],
        ownerReferences: [controllerRef('apps/v1', 'Deployment', 'web')],
        generation: 3,
        selfLink: '/api/v1/x',
      })
      .build();
    expect(renderCopy(template, 'ns-2', T0).metadata).toEqual({
      name: 'c',
      namespace: 'ns-2',
      labels: { [LABEL_DISTRIBUTION]: 'd' },
      annotations: expect.any(Object),
      ownerReferences: [expect.objectContaining({ name: 'd', controller: true })],
    });
  });

  it.each<[string, () => Resource, Record<string, string> | undefined, string | undefined]>([
    [
      'folds stringData into base64 data, stringData winning',
      () => renderCopy(distribution('d').secret('s', { a: 'old', b: 'kept' }).stringData({ a: 'new', c: 'é' }).build(), 'n', T0),
      { a: base64('new'), b: base64('kept'), c: base64('é') },
      'Opaque',
    ],
    [
      'defaults a Secret type to Opaque, as the API server does',
      () => renderCopy(distribution('d').secret('s', { a: 'x' }).build(), 'n', T0),
      { a: base64('x') },
      'Opaque',
    ],
    [
      'keeps an explicit Secret type',
      () => renderCopy(distribution('d').secret('s', { 'tls.crt': 'c', 'tls.key': 'k' }, 'kubernetes.io/tls').build(), 'n', T0),
      { 'tls.crt': base64('c'), 'tls.key': base64('k') },
      'kubernetes.io/tls',
    ],
  ])('%s', (_name, render, data, type) => {
    const copy = render();
    expect(copy.data).toEqual(data);
    expect(copy.type).toBe(type);
    expect(copy).not.toHaveProperty('stringData');
  });

  it.each<[string, Resource['kind'], 'data' | 'binaryData', string, string]>([
    ['unwraps Secret data written with line breaks (the base64 tool wraps at 76)', 'Secret', 'data', 'aGVsbG8gd29y\nbGQ=', 'aGVsbG8gd29ybGQ='],
    ['unwraps CRLF line breaks', 'Secret', 'data', 'aGVs\r\nbG8=', 'aGVsbG8='],
    ['clears the unused bits of the last character', 'Secret', 'data', 'dB==', 'dA=='],
    ['leaves canonical base64 as it is', 'Secret', 'data', 'aGVsbG8=', 'aGVsbG8='],
    ['unwraps ConfigMap binaryData', 'ConfigMap', 'binaryData', 'aGVsbG8gd29y\nbGQ=', 'aGVsbG8gd29ybGQ='],
  ])('writes base64 as the API server stores it: %s', (_name, kind, field, written, stored) => {
    const template = distribution('d').field('kind', kind).field(field, { k: written }).build();
    const before = structuredClone(template);
    expect(renderCopy(template, 'n', T0)[field]).toEqual({ k: stored });
    expect(template).toEqual(before);
  });

  it('leaves ConfigMap data alone: it is not base64', () => {
    const template = distribution('d').configMap('c', { k: 'dB==\n' }).build();
    expect(renderCopy(template, 'n', T0).data).toEqual({ k: 'dB==\n' });
  });

  it('drops an adopt annotation from the template and does not modify the distribution', () => {
    const withAdopt = distribution('d').configMap('c').templateAnnotations({ [ANNOTATION_ADOPT]: 'd', note: 'n' }).build();
    const before = structuredClone(withAdopt);
    const copy = renderCopy(withAdopt, 'ns', T1);
    expect(copy.metadata.annotations?.[ANNOTATION_ADOPT]).toBeUndefined();
    expect(copy.metadata.annotations?.note).toBe('n');
    expect(copy.metadata.annotations?.[ANNOTATION_TIMESTAMP]).toBe('2024-05-01T11:30:00Z');
    expect(withAdopt).toEqual(before);
  });
});

describe('mergeCopy', () => {
  it('template wins; others’ labels, annotations, finalizers and owners are kept; resourceVersion carried', () => {
    const existing = foreign('ConfigMap', 'settings', 'ns-1')
      .label('team', 'theirs')
      .label('added-by', 'someone')
      .annotation('note', 'keep me')
      .annotation(ANNOTATION_ADOPT, 'shared')
      .finalizers('example.com/hold')
      .owner({ apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: 'p' })
      .owner(controllerRef('apps/v1', 'Deployment', 'web'))
      .data({ stale: 'x' })
      .resourceVersion('42')
      .build();
    const merged = mergeCopy(renderCopy(rd, 'ns-1', T0), existing);
    expect(merged.data).toEqual({ a: '1' });
    expect(merged.metadata.labels).toEqual({ team: 'x', 'added-by': 'someone', [LABEL_DISTRIBUTION]: 'shared' });
    expect(merged.metadata.annotations).toMatchObject({ note: 'keep me', [ANNOTATION_FROM]: 'shared' });
    expect(merged.metadata.annotations).not.toHaveProperty(ANNOTATION_ADOPT);
    expect(merged.metadata.finalizers).toEqual(['example.com/hold']);
    expect(merged.metadata.resourceVersion).toBe('42');
    expect(merged.metadata.ownerReferences?.map((ref) => [ref.kind, ref.name, ref.controller ?? false])).toEqual([
      ['ConfigMap', 'parent', false],
      ['ResourceDistribution', 'shared', true],
    ]);
  });

  it('replaces a stale reference to an earlier distribution of the same name', () => {
    const existing = copyOf(rd, 'ns-1').owners(controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'shared', 'old-uid')).build();
    const merged = mergeCopy(renderCopy(rd, 'ns-1', T0), existing);
    expect(merged.metadata.ownerReferences).toEqual([expect.objectContaining({ name: 'shared', uid: 'uid-shared' })]);
  });
});

describe('mergeCopy: keys an earlier template put on the copy', () => {
  const before = distribution('shared').configMap('settings', { a: '1' }).templateLabels({ team: 'x', tier: 'gold' }).templateAnnotations({ note: 'v1' }).build();
  /** A copy of `before` someone else then added a label and an annotation to. */
  const existing = (): ResourceBuilder => copyOf(before, 'ns-1').label('added-by', 'someone').annotation('keep', 'me');
  const after = (build: (b: ReturnType<typeof distribution>) => ReturnType<typeof distribution>) => build(distribution('shared').configMap('settings', { a: '1' })).build();

  it.each([
    [
      'a label and an annotation dropped',
      existing().build(),
      after((b) => b.templateLabels({ team: 'x' })),
      { team: 'x', 'added-by': 'someone' },
      { keep: 'me', [ANNOTATION_TEMPLATE_METADATA]: '{"labels":["team"]}' },
    ],
    ['every template key dropped (the record goes too)', existing().build(), after((b) => b), { 'added-by': 'someone' }, { keep: 'me' }],
    [
      'a key the template dropped and gave a new value later stays, with that value',
      existing().build(),
      after((b) => b.templateLabels({ tier: 'silver' })),
      { tier: 'silver', 'added-by': 'someone' },
      { keep: 'me', [ANNOTATION_TEMPLATE_METADATA]: '{"labels":["tier"]}' },
    ],
    [
      'a copy without a record (written before it existed, or adopted): nothing removed',
      existing().withoutAnnotation(ANNOTATION_TEMPLATE_METADATA).build(),
      after((b) => b),
      { team: 'x', tier: 'gold', 'added-by': 'someone' },
      { keep: 'me', note: 'v1' },
    ],
    [
      'a record edited into something unreadable: nothing removed',
      existing().annotation(ANNOTATION_TEMPLATE_METADATA, '{labels').build(),
      after((b) => b),
      { team: 'x', tier: 'gold', 'added-by': 'someone' },
      { keep: 'me', note: 'v1' },
    ],
  ])('%s', (_what, copy, rdAfter, labels, annotations) => {
    const merged = mergeCopy(renderCopy(rdAfter, 'ns-1', T1), copy);
    expect(merged.metadata.labels).toEqual({ ...labels, [LABEL_DISTRIBUTION]: 'shared' });
    const { [ANNOTATION_FROM]: _from, [ANNOTATION_HASH]: _hash, [ANNOTATION_TIMESTAMP]: _time, ...rest } = merged.metadata.annotations ?? {};
    expect(rest).toEqual(annotations);
    // What was written is in sync with the template it was written for.
    expect(isInSync(rdAfter, merged)).toBe(true);
  });

  it('copies carrying different records, merged in turn, each lose the keys of their own record', () => {
    const other = distribution('shared').configMap('settings', { a: '1' }).templateLabels({ env: 'prod' }).build();
    const copies = [existing().build(), copyOf(other, 'ns-2').label('added-by', 'someone').build(), existing().build()];
    const merged = copies.map((copy) => mergeCopy(renderCopy(after((b) => b), copy.metadata.namespace ?? '', T1), copy).metadata.labels);
    expect(merged).toEqual([
      { 'added-by': 'someone', [LABEL_DISTRIBUTION]: 'shared' },
      { 'added-by': 'someone', [LABEL_DISTRIBUTION]: 'shared' },
      { 'added-by': 'someone', [LABEL_DISTRIBUTION]: 'shared' },
    ]);
  });

  it('a copy still carrying an earlier record is out of sync, even where the rest matches', () => {
    const plain = distribution('shared').configMap('settings', { a: '1' }).build();
    const stale = copyOf(plain, 'ns-1').annotation(ANNOTATION_TEMPLATE_METADATA, '{"labels":["tier"]}').label('tier', 'gold').build();
    expect(isInSync(plain, stale)).toBe(false);
    expect(isInSync(plain, copyOf(plain, 'ns-1').build())).toBe(true);
  });

  it('never records or removes keys of ours that a source which is itself a copy carries', () => {
    const chained = distribution('second')
      .configMap('settings', { a: '1' })
      .templateLabels({ [LABEL_DISTRIBUTION]: 'first', team: 'x' })
      .templateAnnotations({ [ANNOTATION_FROM]: 'first', [ANNOTATION_TEMPLATE_METADATA]: '{"labels":["other"]}' })
      .build();
    const copy = renderCopy(chained, 'ns-1', T0);
    expect(copy.metadata.annotations?.[ANNOTATION_TEMPLATE_METADATA]).toBe('{"labels":["team"]}');
    expect(copy.metadata.annotations?.[ANNOTATION_FROM]).toBe('second');
    expect(copy.metadata.labels?.[LABEL_DISTRIBUTION]).toBe('second');
  });
});

describe('classifyExisting', () => {
  const rdRef = controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'shared', 'uid-shared');
  it.each([
    ['our copy', copyOf(rd, 'n').build(), { kind: 'ours' }],
    ['ours without any owner reference (from annotation only)', copyOf(rd, 'n').owners().build(), { kind: 'ours' }],
    [
      'ours with a stale uid (the distribution was recreated)',
      copyOf(rd, 'n').owners(controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'shared', 'old')).build(),
      { kind: 'ours' },
    ],
    [
      'adoptable when annotated for us',
      foreign('ConfigMap', 'settings', 'n').annotation(ANNOTATION_ADOPT, 'shared').build(),
      { kind: 'adoptable' },
    ],
    [
      'not adoptable when annotated for another distribution',
      foreign('ConfigMap', 'settings', 'n').annotation(ANNOTATION_ADOPT, 'other').build(),
      { kind: 'conflict', reason: 'foreign-object' },
    ],
    [
      'from changed by a user',
      copyOf(rd, 'n').annotation(ANNOTATION_FROM, 'edited').build(),
      { kind: 'conflict', reason: 'from-changed' },
    ],
    [
      'controlled by another owner',
      copyOf(rd, 'n').owners(controllerRef('apps/v1', 'Deployment', 'web')).build(),
      { kind: 'conflict', reason: 'owned-by-other' },
    ],
    [
      'a foreign controller with no from annotation',
      foreign('ConfigMap', 'settings', 'n').owner(controllerRef('v1', 'ConfigMap', 'x')).build(),
      { kind: 'conflict', reason: 'owned-by-other' },
    ],
    ['a plain foreign object', foreign('ConfigMap', 'settings', 'n').build(), { kind: 'conflict', reason: 'foreign-object' }],
    [
      'a forbidden-type Secret, even annotated for adoption',
      foreign('Secret', 'settings', 'n').type('kubernetes.io/service-account-token').annotation(ANNOTATION_ADOPT, 'shared').owner(rdRef).build(),
      { kind: 'conflict', reason: 'forbidden-type' },
    ],
  ])('%s', (_name, existing, expected) => {
    expect(classifyExisting(rd, existing)).toEqual(expected);
  });
});

describe('isInSync', () => {
  const secretRd = distribution('creds').secret('creds', { password: 'p' }).templateAnnotations({ a: 'b' }).build();
  it.each([
    ['a fresh copy', copyOf(secretRd, 'n').build(), true],
    ['written at another time (timestamp is not compared)', copyOf(secretRd, 'n', T1).build(), true],
    ['with labels and annotations others added', copyOf(secretRd, 'n').label('x', 'y').annotation('p', 'q').build(), true],
    ['Opaque type omitted by the server', copyOf(secretRd, 'n').type(undefined).build(), true],
    ['immutable false vs absent', copyOf(secretRd, 'n').immutable(false).build(), true],
    ['data drifted', copyOf(secretRd, 'n').data({ password: base64('changed') }).build(), false],
    ['a data key added', copyOf(secretRd, 'n').data({ password: base64('p'), extra: 'eA==' }).build(), false],
    ['binaryData added', copyOf(secretRd, 'n').binaryData({ b: 'eA==' }).build(), false],
    ['type changed', copyOf(secretRd, 'n').type('example.com/x').build(), false],
    ['made immutable', copyOf(secretRd, 'n').immutable(true).build(), false],
    ['template annotation changed', copyOf(secretRd, 'n').annotation('a', 'other').build(), false],
    ['hash annotation stale', copyOf(secretRd, 'n').annotation(ANNOTATION_HASH, 'old').build(), false],
    ['our label removed', copyOf(secretRd, 'n').withoutLabel(LABEL_DISTRIBUTION).build(), false],
    ['owner reference missing', copyOf(secretRd, 'n').owners().build(), false],
    // Written by an earlier release or by OpenKruise v1.9 (v1alpha1): kept, not rewritten for the version alone.
    ['owner reference in v1alpha1', copyOf(secretRd, 'n').owners(controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'creds')).build(), true],
    ['owner reference in v1beta1', copyOf(secretRd, 'n').owners(controllerRef('apps.kruise.io/v1beta1', 'ResourceDistribution', 'creds')).build(), true],
    ['owner reference in a version not served', copyOf(secretRd, 'n').owners(controllerRef('apps.kruise.io/v2', 'ResourceDistribution', 'creds')).build(), false],
    [
      'owner reference with a stale uid',
      copyOf(secretRd, 'n').owners(controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'creds', 'old')).build(),
      false,
    ],
  ])('%s -> %s', (_name, existing, expected) => {
    expect(isInSync(secretRd, existing)).toBe(expected);
  });

  it('a copy as the server stored a template written with wrapped base64 is in sync (no rewrite at every pass)', () => {
    const wrapped = distribution('creds').secret('creds').data({ cert: 'aGVsbG8gd29y\nbGQ=' }).build();
    const stored = copyOf(wrapped, 'n').data({ cert: 'aGVsbG8gd29ybGQ=' }).build();
    expect(isInSync(wrapped, stored)).toBe(true);
  });

  it('the template changed: the old copy is out of sync', () => {
    const old = copyOf(secretRd, 'n').build();
    const changed = distribution('creds').secret('creds', { password: 'new' }).templateAnnotations({ a: 'b' }).build();
    expect(isInSync(changed, old)).toBe(false);
  });
});

describe('isOursInSync (remembered per copy object)', () => {
  const rd = distribution('creds').secret('creds', { password: 'p' }).build();
  const copy = copyOf(rd, 'n').build();
  const hash = hashResource(rd.spec.resource);
  const other = distribution('creds').secret('creds', { password: 'new' }).build();
  // Judged once against `rd`, then against each of these: the answer is always a fresh judgement's.
  it.each<[string, ResolvedDistribution, boolean]>([
    ['the same distribution object', rd, true],
    ['a new object of it with a status (a status write)', { ...rd, status: { desired: 1, succeeded: 1, failed: 0, conditions: [] } }, true],
    ['another template', other, false],
    ['another uid (a distribution of the same name made again)', { ...rd, metadata: { ...rd.metadata, uid: 'uid-again' } }, false],
    ['another name', { ...rd, metadata: { ...rd.metadata, name: 'other' } }, false],
  ])('%s -> %s', (_name, judged, expected) => {
    expect(isOursInSync(rd, copy, hash)).toBe(true);
    expect(isOursInSync(judged, copy, hashResource(judged.spec.resource))).toBe(expected);
    expect(classifyExisting(judged, copy).kind === 'ours' && isInSync(judged, copy)).toBe(expected);
  });
});

describe('isOursInSync against the hash annotation', () => {
  const rd = distribution('creds').secret('creds', { password: 'p' }).build();
  const hash = hashResource(rd.spec.resource);
  it.each<[string, Resource, boolean]>([
    ['the current hash', copyOf(rd, 'n').build(), true],
    ["another template's hash, the same content", copyOf(rd, 'n').annotation(ANNOTATION_HASH, 'f'.repeat(64)).build(), false],
    ['no hash annotation, the same content', copyOf(rd, 'n').withoutAnnotation(ANNOTATION_HASH).build(), false],
  ])('%s -> %s, as judged in full', (_name, copy, expected) => {
    expect(isOursInSync(rd, copy, hash)).toBe(expected);
    expect(classifyExisting(rd, copy).kind === 'ours' && isInSync(rd, copy, hash)).toBe(expected);
  });
});

describe('needsRecreate', () => {
  const secretRd = distribution('d').secret('s', { a: 'x' }).build();
  const desired = renderCopy(secretRd, 'n', T0);
  const immutableRd = distribution('d').secret('s', { a: 'x' }).immutable().build();
  const immutableDesired = renderCopy(immutableRd, 'n', T0);
  it.each([
    ['same content', desired, copyOf(secretRd, 'n').build(), false],
    ['only data changed (mutable)', desired, copyOf(secretRd, 'n').data({ a: 'eQ==' }).build(), false],
    ['Secret type changed', desired, copyOf(secretRd, 'n').type('example.com/other').build(), true],
    ['immutable and data changed', immutableDesired, copyOf(immutableRd, 'n').data({ a: 'eQ==' }).build(), true],
    ['immutable and the template no longer immutable', desired, copyOf(secretRd, 'n').immutable(true).build(), true],
    ['immutable, same content, labels differ', immutableDesired, copyOf(immutableRd, 'n').label('x', 'y').build(), false],
    ['becoming immutable is an update', immutableDesired, copyOf(secretRd, 'n').build(), false],
  ])('%s -> %s', (_name, want, existing, expected) => {
    expect(needsRecreate(want, existing)).toBe(expected);
  });
});

describe('isForbiddenSecretType', () => {
  it.each([
    ['kubernetes.io/service-account-token', true],
    ['helm.sh/release.v1', true],
    ['Opaque', false],
    ['kubernetes.io/dockerconfigjson', false],
    [undefined, false],
  ])('%s -> %s', (type, expected) => {
    expect(isForbiddenSecretType(type)).toBe(expected);
  });
});
