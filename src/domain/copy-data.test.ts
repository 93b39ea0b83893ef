import { describe, expect, it } from 'vitest';
import { base64, distribution, type DistributionBuilder } from '../../test/unit/builders.js';
import { loadCrdSchema } from '../k8s/crd-schema.js';
import { applyCopyData, copyDataProblem } from './copy-data.js';
import { hashResource } from './hash.js';
import { compileSpecValidator } from './schema.js';
import { withSource } from './source.js';
import type { CopyDataRules, Resource, ResourceDistribution } from './types.js';
import { validateDistribution } from './validate.js';

const schema = compileSpecValidator(loadCrdSchema());
const PRIVATE_KEY = base64('-----BEGIN PRIVATE KEY----- never copied');

/** A Secret as cert-manager writes it for a CA Certificate. */
const caSecret: Resource = {
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'kubernetes.io/tls',
  metadata: { name: 'internal-ca', namespace: 'cert-manager', uid: 'u-1', resourceVersion: '7' },
  data: { 'ca.crt': base64('ca'), 'tls.crt': base64('crt'), 'tls.key': PRIVATE_KEY },
};
const settings: Resource = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings' },
  data: { 'app.yaml': 'a', 'db.yaml': 'b', 'internal.yaml': 'c' },
  binaryData: { 'logo.png': base64('png'), 'internal.bin': base64('bin') },
};
const keysOf = (resource: Resource): Record<string, string[]> =>
  Object.fromEntries((['data', 'binaryData', 'stringData'] as const).filter((field) => resource[field] !== undefined).map((field) => [field, Object.keys(resource[field] ?? {})]));

describe('applyCopyData: the keys and type the copies get', () => {
  it.each<[string, Resource, CopyDataRules, Record<string, string[]>, string | undefined]>([
    ['a CA only, as an Opaque Secret', caSecret, { include: ['ca.crt'], secretType: 'Opaque' }, { data: ['ca.crt'] }, 'Opaque'],
    ['everything but the private key (a type that then lacks it: see copyDataProblem)', caSecret, { exclude: ['tls.key'] }, { data: ['ca.crt', 'tls.crt'] }, 'kubernetes.io/tls'],
    ['globs: every certificate', caSecret, { include: ['*.crt'], secretType: 'Opaque' }, { data: ['ca.crt', 'tls.crt'] }, 'Opaque'],
    ['exclude wins over include', caSecret, { include: ['*'], exclude: ['tls.*'], secretType: 'Opaque' }, { data: ['ca.crt'] }, 'Opaque'],
    ['an empty include list selects every key', caSecret, { include: [] }, { data: ['ca.crt', 'tls.crt', 'tls.key'] }, 'kubernetes.io/tls'],
    ['a ConfigMap: data and binaryData alike', settings, { exclude: ['internal.*'] }, { data: ['app.yaml', 'db.yaml'], binaryData: ['logo.png'] }, undefined],
    ['a ConfigMap: a map left empty is left out', settings, { include: ['*.yaml'] }, { data: ['app.yaml', 'db.yaml', 'internal.yaml'] }, undefined],
    ['a ConfigMap has no type, whatever secretType says', settings, { include: ['app.yaml'], secretType: 'Opaque' }, { data: ['app.yaml'] }, undefined],
    ['a template\'s stringData', { ...caSecret, type: 'Opaque', data: { a: base64('a') }, stringData: { password: 'p', user: 'u' } }, { exclude: ['password'] }, { data: ['a'], stringData: ['user'] }, 'Opaque'],
    ['no key left', settings, { include: ['nothing-matches'] }, {}, undefined],
  ])('%s', (_what, resource, rules, keys, type) => {
    const selected = applyCopyData(resource, rules);
    expect(keysOf(selected)).toEqual(keys);
    expect(selected.type).toBe(type);
    expect(keysOf(resource)).not.toEqual({}); // the input is never changed
  });

  it('returns the same object when the rules change nothing (its hash is remembered with it)', () => {
    expect(applyCopyData(caSecret, undefined)).toBe(caSecret);
    expect(applyCopyData(caSecret, { include: ['*'] })).toBe(caSecret);
    expect(applyCopyData(caSecret, { secretType: 'kubernetes.io/tls' })).toBe(caSecret);
    const roleBinding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'r' }, data: { a: 'b' } };
    expect(applyCopyData(roleBinding, { include: ['x'] })).toBe(roleBinding);
  });

  it('the hash of the copies covers the selection and the type', () => {
    const hashes = [undefined, { include: ['ca.crt'], secretType: 'Opaque' }, { include: ['ca.crt', 'tls.crt'], secretType: 'Opaque' }, { include: ['ca.crt', 'tls.crt'], secretType: 'example.com/ca' }].map((rules) =>
      hashResource(applyCopyData(caSecret, rules)),
    );
    expect(new Set(hashes).size).toBe(hashes.length);
  });
});

describe('copyDataProblem: copies a Secret type forbids', () => {
  it.each<[string, Resource, string | undefined]>([
    ['tls without its key', applyCopyData(caSecret, { exclude: ['tls.key'] }), 'the copies would be Secrets of type "kubernetes.io/tls" without the key "tls.key", which that type requires: set spec.copyData.secretType: Opaque to copy it as an Opaque Secret, or let spec.copyData select the key'],
    ['tls with its CA only', applyCopyData(caSecret, { include: ['ca.crt'] }), 'the copies would be Secrets of type "kubernetes.io/tls" without the key "tls.crt" and "tls.key", which that type requires: set spec.copyData.secretType: Opaque to copy it as an Opaque Secret, or let spec.copyData select the key'],
    ['tls with its CA only, as Opaque', applyCopyData(caSecret, { include: ['ca.crt'], secretType: 'Opaque' }), undefined],
    ['basic-auth keeps one of username and password (as the API server requires)', { ...caSecret, type: 'kubernetes.io/basic-auth', data: { password: 'cA==' } }, undefined],
    ['basic-auth with neither', { ...caSecret, type: 'kubernetes.io/basic-auth', data: { other: 'cA==' } }, 'the copies would be Secrets of type "kubernetes.io/basic-auth" without the key "username" or "password", which that type requires: set spec.copyData.secretType: Opaque to copy it as an Opaque Secret, or let spec.copyData select the key'],
    ['ssh-auth without its private key', { ...caSecret, type: 'kubernetes.io/ssh-auth', data: { known_hosts: 'aA==' } }, expect.stringContaining('without the key "ssh-privatekey"')],
    ['dockerconfigjson without its config', { ...caSecret, type: 'kubernetes.io/dockerconfigjson', data: {} }, expect.stringContaining('without the key ".dockerconfigjson"')],
    ['dockercfg without its config', { ...caSecret, type: 'kubernetes.io/dockercfg', data: {} }, expect.stringContaining('without the key ".dockercfg"')],
    ['a registry Secret whose config is selected', { ...caSecret, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': 'e30=' } }, undefined],
    ['a Secret of a type of its own', { ...caSecret, type: 'example.com/anything', data: {} }, undefined],
    ['a ConfigMap', settings, undefined],
  ])('%s', (_what, selected, problem) => {
    expect(copyDataProblem(selected)).toEqual(problem);
  });
});

describe('a source shared through copyData', () => {
  const ca = (copyData: CopyDataRules): ResourceDistribution => {
    const rd = distribution('internal-ca').source('cert-manager', 'internal-ca', 'Secret').allNamespaces().build() as ResourceDistribution;
    return { ...rd, spec: { ...rd.spec, copyData } };
  };

  it('its excluded values are nowhere in what the copies are made of, nor in the problem', () => {
    const resolved = withSource(ca({ include: ['ca.crt'] }), caSecret);
    expect(JSON.stringify(resolved)).not.toContain(PRIVATE_KEY);
    expect(copyDataProblem(resolved.spec.resource)).not.toContain(PRIVATE_KEY);
    expect(withSource(ca({ include: ['ca.crt'], secretType: 'Opaque' }), caSecret).spec.resource).toMatchObject({ type: 'Opaque', data: { 'ca.crt': base64('ca') } });
  });
});

describe('admission of spec.copyData', () => {
  const tls = (): DistributionBuilder => distribution('ca').secret('internal-ca', { 'ca.crt': 'ca', 'tls.crt': 'crt', 'tls.key': 'key' }, 'kubernetes.io/tls').allNamespaces();
  const cm = (): DistributionBuilder => distribution('cm').configMap('settings', { 'app.yaml': 'a' }).binaryData({ 'logo.png': base64('png') }).allNamespaces();
  const fromSource = (kind: 'Secret' | 'ConfigMap'): DistributionBuilder => distribution('s').source('platform', 'shared', kind).allNamespaces();
  const withCopyData = (builder: DistributionBuilder, copyData: unknown, extra: Record<string, unknown> = {}): unknown => {
    const rd = builder.build();
    return { ...rd, spec: { ...rd.spec, copyData, ...extra } };
  };
  const FIX = 'set spec.copyData.secretType: Opaque to copy it as an Opaque Secret, or let spec.copyData select the key';

  it.each<[string, unknown, { path: string; message: string }[]]>([
    ['a CA only, as Opaque', withCopyData(tls(), { include: ['ca.crt'], secretType: 'Opaque' }), []],
    ['a tls Secret without its private key', withCopyData(tls(), { exclude: ['tls.key'] }), [{ path: 'spec.copyData', message: `the copies would be Secrets of type "kubernetes.io/tls" without the key "tls.key", which that type requires: ${FIX}` }]],
    ['a type that the selected keys do not make', withCopyData(tls(), { include: ['ca.crt'], secretType: 'kubernetes.io/ssh-auth' }), [{ path: 'spec.copyData.secretType', message: `the copies would be Secrets of type "kubernetes.io/ssh-auth" without the key "ssh-privatekey", which that type requires: ${FIX}` }]],
    ['a forbidden type stays forbidden', withCopyData(tls(), { secretType: 'kubernetes.io/service-account-token' }), [{ path: 'spec.copyData.secretType', message: 'Secrets of type "kubernetes.io/service-account-token" are never distributed: they belong to one namespace or tool' }]],
    ['not a type', withCopyData(tls(), { secretType: 'no spaces' }), [{ path: 'spec.copyData.secretType', message: '"no spaces" is not a valid Secret type (e.g. Opaque or kubernetes.io/tls)' }]],
    ['secretType on a ConfigMap', withCopyData(cm(), { secretType: 'Opaque' }), [{ path: 'spec.copyData.secretType', message: 'is only for Secrets: the copies of a ConfigMap have no type' }]],
    ['secretType on a ConfigMap source', withCopyData(fromSource('ConfigMap'), { secretType: 'Opaque' }), [{ path: 'spec.copyData.secretType', message: 'is only for Secrets: the copies of a ConfigMap have no type' }]],
    ['a ConfigMap include and exclude', withCopyData(cm(), { include: ['*.yaml', 'logo.png'], exclude: ['internal-*'] }), []],
    ['the costliest single glob admitted: seven stars', withCopyData(cm(), { include: ['*a*a*a*a*a*b*'] }), []],
    ['globs of many extensions and prefixes', withCopyData(cm(), { include: ['*.crt', '*.pem', '*.cer', 'ca-*', 'ca.*'], exclude: ['*.key', 'tls.*', 'private-*'] }), []],
    ['a source: its type is known when it is read', withCopyData(fromSource('Secret'), { include: ['ca.crt'] }), []],
    ['keys that are not data keys', withCopyData(cm(), { include: ['ok.yaml', 'a/b', ''], exclude: ['no spaces'] }), [
      { path: 'spec.copyData.include[1]', message: '"a/b" is not a data key, or a glob of one (* for any characters, e.g. "*.crt")' },
      { path: 'spec.copyData.include[2]', message: '"" is not a data key, or a glob of one (* for any characters, e.g. "*.crt")' },
      { path: 'spec.copyData.exclude[0]', message: '"no spaces" is not a data key, or a glob of one (* for any characters, e.g. "*.crt")' },
    ]],
    ['not a list', withCopyData(cm(), { include: 'ca.crt' }), [{ path: 'spec.copyData.include', message: 'must be a list of keys or key globs' }]],
    ['globs that would cost too much per key: eight stars', withCopyData(cm(), { include: ['*a*a*a*a*a*a*b*'] }), [{ path: 'spec.copyData', message: expect.stringContaining('more than the 2048 allowed') }]],
    ['another kind than Secret or ConfigMap', withCopyData(distribution('r').template({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'r' } }).allNamespaces(), { include: ['a'] }), [{ path: 'spec.copyData', message: 'is only for Secrets and ConfigMaps (it selects keys of their data)' }]],
    ['not an object', withCopyData(cm(), ['ca.crt']), [{ path: 'spec.copyData', message: 'must be an object: {include: [...], exclude: [...], secretType}' }]],
  ])('%s', (_what, object, problems) => {
    expect(validateDistribution({ object, schema, namespaceExists: () => true }).problems.filter((p) => p.path.startsWith('spec.copyData'))).toEqual(problems);
  });

  it('allows a selection that leaves no key (an empty ConfigMap or Opaque Secret is valid), saying so', () => {
    for (const object of [withCopyData(cm(), { include: ['nothing'] }), withCopyData(tls(), { include: ['nothing'], secretType: 'Opaque' })]) {
      expect(validateDistribution({ object, schema, namespaceExists: () => true })).toEqual({ problems: [], warnings: ["spec.copyData: selects none of the template's keys: the copies hold no data"] });
    }
  });

  it.each<[string, unknown, string[]]>([
    ['a registry Secret whose config is selected', withCopyData(distribution('p').secret('pull', { '.dockerconfigjson': '{"auths":{}}', note: 'n' }, 'kubernetes.io/dockerconfigjson').allNamespaces(), { exclude: ['note'] }, { imagePullSecretInjection: 'MatchingImages' }), []],
    ['an Opaque copy of a registry Secret', withCopyData(distribution('p').secret('pull', { '.dockerconfigjson': '{"auths":{}}' }, 'kubernetes.io/dockerconfigjson').allNamespaces(), { secretType: 'Opaque' }, { imagePullSecretInjection: 'Always' }), ['spec.imagePullSecretInjection']],
    ['an Opaque copy of a registry Secret source', withCopyData(fromSource('Secret'), { secretType: 'Opaque' }, { imagePullSecretInjection: 'Always' }), ['spec.imagePullSecretInjection']],
    ['a registry copy of an Opaque Secret with the config', withCopyData(distribution('p').secret('pull', { '.dockerconfigjson': '{"auths":{}}' }).allNamespaces(), { secretType: 'kubernetes.io/dockerconfigjson' }, { imagePullSecretInjection: 'Always' }), []],
  ])('injection: %s', (_what, object, paths) => {
    expect(validateDistribution({ object, schema, namespaceExists: () => true }).problems.map((p) => p.path)).toEqual(paths);
  });

  it('says why injection is refused for an Opaque copy', () => {
    const object = withCopyData(fromSource('Secret'), { secretType: 'Opaque' }, { imagePullSecretInjection: 'Always' });
    expect(validateDistribution({ object, schema }).problems[0]?.message).toBe(
      'is only for registry Secrets (kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg): spec.copyData.secretType makes the copies "Opaque", which pods cannot pull images with',
    );
  });
});
