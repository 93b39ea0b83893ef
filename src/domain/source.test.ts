import { describe, expect, it } from 'vitest';
import { requiredAccess } from '../admission/required-access.js';
import { loadCrdSchema } from '../k8s/crd-schema.js';
import { distribution, namespace, T0 } from '../../test/unit/builders.js';
import { hashResource } from './hash.js';
import { compileSpecValidator } from './schema.js';
import { normaliseSource, sourceKey, sourceWarnings, undistributableSource, withSource, type SourceFound } from './source.js';
import { computeStatus, type SourceStatus } from './status.js';
import { computeTargets, forbiddenFor } from './targets.js';
import { ANNOTATION_FROM, ANNOTATION_HASH, CONDITION_TYPES, LABEL_DISTRIBUTION, type CopyDataRules, type Resource, type ResourceDistribution, type SourceRef } from './types.js';
import { validateDistribution } from './validate.js';

const schema = compileSpecValidator(loadCrdSchema());
const REF: SourceRef = { apiVersion: 'v1', kind: 'Secret', namespace: 'cert-manager', name: 'wildcard-tls' };

/** A distribution as a user writes it with spec.source (no spec.resource). */
function fromSource(ref: object = REF, targets: object = { allNamespaces: true }): ResourceDistribution {
  const rd = distribution('tls').build() as ResourceDistribution;
  delete rd.spec.resource;
  return { ...rd, spec: { ...rd.spec, source: ref as SourceRef, targets } };
}

/** A source as the API server returns it. */
const served: Resource = {
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'kubernetes.io/tls',
  metadata: {
    name: 'wildcard-tls',
    namespace: 'cert-manager',
    uid: 'u-1',
    resourceVersion: '812',
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'cert-manager' }],
    ownerReferences: [{ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', name: 'wildcard', uid: 'c-1', controller: true }],
    labels: { 'controller.cert-manager.io/fao': 'true', [LABEL_DISTRIBUTION]: 'upstream', tier: 'edge' },
    annotations: {
      'cert-manager.io/certificate-name': 'wildcard',
      'cert-manager.io/alt-names': '*.example.com',
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
      [ANNOTATION_FROM]: 'upstream',
      [ANNOTATION_HASH]: 'abc',
    },
  },
  data: { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5' },
};

describe('normaliseSource', () => {
  it("keeps content and the metadata its owner gave it, drops what the server owns, another distribution's marks and the managing tool's", () => {
    expect(normaliseSource(served)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: {
        name: 'wildcard-tls',
        labels: { tier: 'edge' },
        annotations: { 'cert-manager.io/alt-names': '*.example.com' },
      },
      data: { 'tls.crt': 'Y3J0', 'tls.key': 'a2V5' },
    });
  });

  it.each<[string, boolean, (r: Resource) => Resource]>([
    ['a new resourceVersion', false, (r) => ({ ...r, metadata: { ...r.metadata, resourceVersion: '813', managedFields: [] } })],
    ['a renewed certificate', true, (r) => ({ ...r, data: { ...r.data, 'tls.crt': 'bmV3' } })],
    ['a label its owner adds', true, (r) => ({ ...r, metadata: { ...r.metadata, labels: { ...r.metadata.labels, team: 'a' } } })],
  ])('%s: the hash changes = %s', (_what, changes, change) => {
    expect(hashResource(normaliseSource(change(served))) !== hashResource(normaliseSource(served))).toBe(changes);
  });

  it('never changes the object it was given', () => {
    const before = structuredClone(served);
    normaliseSource(served);
    expect(served).toEqual(before);
  });
});

describe('a distribution with spec.source', () => {
  it('resolves to the normalised source as its template', () => {
    const resolved = withSource(fromSource(), served);
    expect(resolved.spec.resource).toEqual(normaliseSource(served));
    expect(resolved.spec.source).toEqual(REF);
    expect(sourceKey(REF)).toBe('Secret/cert-manager/wildcard-tls');
  });

  it("never targets the source's namespace, whatever the targets say", () => {
    const rd = fromSource(REF, { allNamespaces: true, includedNamespaces: { list: [{ name: 'cert-manager' }] } });
    const namespaces = [namespace('cert-manager'), namespace('team-a')];
    expect(computeTargets(rd.spec.targets, namespaces, forbiddenFor(rd, ['vault']))).toEqual({ targeted: ['team-a'], missing: [] });
    expect(forbiddenFor(distribution('inline').build(), ['vault'])).toEqual(['vault']);
  });

  it('asks the author to read the source and to write its kind in every target', () => {
    expect(requiredAccess(fromSource(REF, { includedNamespaces: { list: [{ name: 'team-a' }, { name: 'cert-manager' }] } }))).toEqual({
      group: '',
      resource: 'secrets',
      verbs: ['create', 'update'],
      namespaces: ['team-a'],
      source: { namespace: 'cert-manager', name: 'wildcard-tls' },
    });
  });
});

describe('validateDistribution with spec.source', () => {
  const check = (rd: unknown, oldObject?: unknown) => validateDistribution({ object: rd, schema, ...(oldObject ? { oldObject } : {}) });

  it('accepts a source, warning when its namespace is listed as a target', () => {
    expect(check(fromSource())).toEqual({ problems: [], warnings: [] });
    expect(check(fromSource(REF, { includedNamespaces: { list: [{ name: 'cert-manager' }] } })).warnings).toEqual([
      'spec.targets.includedNamespaces: cert-manager holds the source and is never a target',
    ]);
  });

  it.each<[string, object, { path: string; message: string }[]]>([
    ['another apiVersion', { ...REF, apiVersion: 'v2' }, [{ path: 'spec.source.apiVersion', message: '"v2" is not supported for Secret: set "v1"' }]],
    ['another kind', { ...REF, kind: 'Pod' }, [{ path: 'spec.source.kind', message: '"Pod" is not supported: use Secret or ConfigMap (allowed by RD_ALLOWED_KINDS)' }]],
    [
      'a namespace that is no DNS label',
      { ...REF, namespace: 'Cert_Manager' },
      [{ path: 'spec.source.namespace', message: `"Cert_Manager" is not a namespace name (lowercase letters, digits and '-', at most 63 characters)` }],
    ],
    ['no name', { ...REF, name: undefined }, [{ path: 'spec.source.name', message: expect.stringMatching(/^"" is not a valid name/) }]],
  ])('denies %s', (_what, ref, problems) => {
    expect(check(fromSource(ref)).problems).toEqual(problems);
  });

  it('denies resource and source together', () => {
    const both = { ...fromSource(), spec: { ...fromSource().spec, resource: distribution('x').build().spec.resource } };
    expect(check(both).problems).toEqual([{ path: 'spec.source', message: 'cannot be set together with spec.resource: keep one of them' }]);
  });

  it("UPDATE: the copies' kind and name cannot change, the source's namespace can", () => {
    expect(check(fromSource({ ...REF, namespace: 'certs' }), fromSource()).problems).toEqual([]);
    expect(check(fromSource({ ...REF, name: 'other' }), fromSource()).problems).toEqual([
      { path: 'spec.source.name', message: 'is immutable (was "wildcard-tls"): create a new ResourceDistribution for a different object' },
    ]);
  });
});

describe('status with spec.source', () => {
  it('appends SourceNotFound after the six, False while the source is there', () => {
    const status = computeStatus({ distribution: fromSource(), outcomes: [], now: T0, source: { found: true } });
    expect(status.conditions.map((c) => `${c.type}=${c.status}`)).toEqual([
      'GetResourceFailed=False',
      'CreateResourceFailed=False',
      'UpdateResourceFailed=False',
      'DeleteResourceFailed=False',
      'ConflictOccurred=False',
      'NamespaceNotExists=False',
      'SourceNotFound=False',
      'Ready=True',
      'Stalled=False',
    ]);
  });

  it('counts every target as not in sync while the source is missing, and says why', () => {
    const status = computeStatus({ distribution: fromSource(), outcomes: [], now: T0, source: { found: false, desired: 3, message: 'source Secret cert-manager/wildcard-tls not found: the copies are kept as they are' } });
    expect(status).toMatchObject({ desired: 3, succeeded: 0, failed: 3 });
    expect(status.conditions[6]).toEqual({
      type: 'SourceNotFound',
      status: 'True',
      reason: 'SourceNotFound',
      message: 'source Secret cert-manager/wildcard-tls not found: the copies are kept as they are',
      lastTransitionTime: '2024-05-01T10:00:00Z',
    });
  });

  it.each<[string, SourceStatus, string[], { desired: number; succeeded: number }]>([
    ['found, its author allowed', { found: true }, ['SourceNotFound=False', 'Ready=True', 'Stalled=False'], { desired: 0, succeeded: 0 }],
    ['found, its author denied', { found: true, denied: { desired: 2, message: 'author "alice" may not get secrets' } }, ['SourceNotFound=False', 'AuthorAccessDenied=True', 'Ready=False', 'Stalled=True'], { desired: 2, succeeded: 0 }],
    ['missing', { found: false, desired: 2, message: 'not found' }, ['SourceNotFound=True', 'Ready=False', 'Stalled=True'], { desired: 2, succeeded: 0 }],
  ])('source %s: conditions after the six, and the counts', (_name, source, after, counts) => {
    const status = computeStatus({ distribution: fromSource(), outcomes: [], now: T0, source });
    expect(status.conditions.slice(6).map((c) => `${c.type}=${c.status}`)).toEqual(after);
    expect(status).toMatchObject(counts);
  });

  it('says why the author is denied, and keeps the time it turned True', () => {
    const denied: SourceStatus = { found: true, denied: { desired: 1, message: 'author "alice" may not get secrets "db" in namespace "home"' } };
    const first = computeStatus({ distribution: fromSource(), outcomes: [], now: T0, source: denied });
    expect(first.conditions[7]).toEqual({ type: 'AuthorAccessDenied', status: 'True', reason: 'AuthorLacksAccess', message: denied.denied?.message, lastTransitionTime: '2024-05-01T10:00:00Z' });
    const later = computeStatus({ distribution: { ...fromSource(), status: first }, outcomes: [], now: new Date('2024-05-02T00:00:00Z'), source: denied });
    expect(later.conditions[7]?.lastTransitionTime).toBe('2024-05-01T10:00:00Z');
  });

  it('keeps the six conditions, then Ready and Stalled, for an inline template', () => {
    expect(computeStatus({ distribution: distribution('inline').build(), outcomes: [], now: T0 }).conditions.map((c) => c.type)).toEqual([...CONDITION_TYPES, 'Ready', 'Stalled']);
  });
});

describe('undistributableSource', () => {
  const ref: SourceRef = { apiVersion: 'v1', kind: 'Secret', namespace: 'team-a', name: 'release' };
  it.each([
    ['a Helm release Secret', { apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1' }, 'source Secret team-a/release exists but is of type helm.sh/release.v1, which is never distributed: nothing is copied from it'],
    ['a service-account token', { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token' }, 'source Secret team-a/release exists but is of type kubernetes.io/service-account-token, which is never distributed: nothing is copied from it'],
    ['an Opaque Secret', { apiVersion: 'v1', kind: 'Secret', type: 'Opaque' }, undefined],
    ['a Secret without a type', { apiVersion: 'v1', kind: 'Secret' }, undefined],
    ['a ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap' }, undefined],
    ['another group\'s Secret kind', { apiVersion: 'example.com/v1', kind: 'Secret', type: 'helm.sh/release.v1' }, undefined],
  ])('%s', (_case, source, expected) => {
    const message = undistributableSource(ref, source);
    expect(message).toBe(expected);
    if (message !== undefined) expect(message).not.toContain('not found');
  });

  it('held in the status under its own condition: found, counted, not "not found"', () => {
    const rd = distribution('release-copy').source('team-a', 'release', 'Secret').build();
    const message = undistributableSource(ref, { apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1' }) ?? '';
    const status = computeStatus({ distribution: rd, outcomes: [], now: T0, source: { found: true }, undistributable: { desired: 2, message } });
    expect(status).toMatchObject({ desired: 2, succeeded: 0, failed: 2 });
    expect(status.conditions.slice(6)).toEqual([
      { type: 'SourceNotFound', status: 'False', reason: 'Succeeded', lastTransitionTime: expect.any(String) },
      { type: 'NotDistributable', status: 'True', reason: 'NotDistributable', message, lastTransitionTime: expect.any(String) },
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'NotDistributable' }),
      // It waits on someone: the source's type, or the distribution, must change.
      expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'NotDistributable' }),
    ]);
  });
});

describe('sourceWarnings: what admission says of the source it found', () => {
  const ref: SourceRef = { apiVersion: 'v1', kind: 'Secret', namespace: 'team-a', name: 'release' };
  it.each([
    ['missing', null, ['spec.source: Secret team-a/release does not exist yet: its copies appear once it does']],
    ['a Helm release', { apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1' }, ['spec.source: source Secret team-a/release exists but is of type helm.sh/release.v1, which is never distributed: nothing is copied from it']],
    ['an Opaque Secret', { apiVersion: 'v1', kind: 'Secret', type: 'Opaque' }, []],
  ])('%s', (_case, found, expected) => {
    expect(sourceWarnings(ref, found)).toEqual(expected);
  });

  const tls = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls' };
  it.each<[string, SourceFound, CopyDataRules, string[]]>([
    [
      'a tls Secret shared as its CA only',
      tls,
      { include: ['ca.crt'] },
      ['spec.copyData: source Secret team-a/release is of type "kubernetes.io/tls", and the copies would be Secrets of type "kubernetes.io/tls" without the key "tls.crt" and "tls.key", which that type requires: set spec.copyData.secretType: Opaque to copy it as an Opaque Secret, or let spec.copyData select the key; nothing is copied until then'],
    ],
    ['a tls Secret shared as its CA only, as Opaque', tls, { include: ['ca.crt'], secretType: 'Opaque' }, []],
    ['a tls Secret without its key, by a glob', tls, { exclude: ['*.key'] }, [expect.stringContaining('without the key "tls.key"')]],
    ['a tls Secret whose keys the rules may select', tls, { include: ['tls.*', 'ca.crt'] }, []],
    ['a registry Secret without its config', { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/dockerconfigjson' }, { exclude: ['.dockerconfigjson'] }, [expect.stringContaining('without the key ".dockerconfigjson"')]],
    ['an Opaque Secret made a basic-auth one without username or password', { apiVersion: 'v1', kind: 'Secret', type: 'Opaque' }, { include: ['token'], secretType: 'kubernetes.io/basic-auth' }, [expect.stringContaining('without the key "username" or "password"')]],
    ['a ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap' }, { include: ['a'] }, []],
    ['missing: said as missing', null, { include: ['ca.crt'] }, ['spec.source: Secret team-a/release does not exist yet: its copies appear once it does']],
  ])('with spec.copyData: %s', (_case, found, copyData, expected) => {
    expect(sourceWarnings(ref, found, copyData)).toEqual(expected);
  });
});
