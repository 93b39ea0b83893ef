import { describe, expect, it } from 'vitest';
import { createKindRegistry, type ApiKind } from './kinds.js';
import { openApiPath, topLevelFields } from './kind-fields.js';
import { validateResource } from './validate-resource.js';

// Shaped as the API server publishes them (/openapi/v3/apis/networking.k8s.io/v1, and a CRD's group version).
const NETWORKING_V1 = {
  openapi: '3.0.0',
  components: {
    schemas: {
      'io.k8s.api.networking.v1.NetworkPolicySpec': { type: 'object', properties: { podSelector: {}, ingress: {}, egress: {}, policyTypes: {} } },
      'io.k8s.api.networking.v1.NetworkPolicy': {
        type: 'object',
        properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: {}, spec: {} },
        'x-kubernetes-group-version-kind': [{ group: 'networking.k8s.io', kind: 'NetworkPolicy', version: 'v1' }],
      },
      'io.k8s.api.networking.v1.NetworkPolicyList': {
        type: 'object',
        properties: { apiVersion: {}, items: {}, kind: {}, metadata: {} },
        'x-kubernetes-group-version-kind': [{ group: 'networking.k8s.io', kind: 'NetworkPolicyList', version: 'v1' }],
      },
      'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions': {
        type: 'object',
        properties: { apiVersion: {}, kind: {}, propagationPolicy: {} },
        'x-kubernetes-group-version-kind': [
          { group: '', kind: 'DeleteOptions', version: 'v1' },
          { group: 'networking.k8s.io', kind: 'DeleteOptions', version: 'v1' },
        ],
      },
    },
  },
};

const CRD_V1 = {
  components: {
    schemas: {
      'io.example.v1.Open': { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-group-version-kind': [{ group: 'example.io', kind: 'Open', version: 'v1' }] },
      'io.example.v1.Shut': { type: 'object', properties: { apiVersion: {}, kind: {}, metadata: {}, spec: {} }, 'x-kubernetes-group-version-kind': [{ group: 'example.io', kind: 'Shut', version: 'v1' }] },
    },
  },
};

describe('the fields a kind has, from its OpenAPI document', () => {
  it.each<[string, unknown, [string, string, string], string[] | undefined]>([
    ['a built-in kind', NETWORKING_V1, ['networking.k8s.io', 'v1', 'NetworkPolicy'], ['apiVersion', 'kind', 'metadata', 'spec']],
    ['its list is another kind', NETWORKING_V1, ['networking.k8s.io', 'v1', 'NetworkPolicyList'], ['apiVersion', 'items', 'kind', 'metadata']],
    ['a kind declared for many groups', NETWORKING_V1, ['networking.k8s.io', 'v1', 'DeleteOptions'], ['apiVersion', 'kind', 'propagationPolicy']],
    ['another version', NETWORKING_V1, ['networking.k8s.io', 'v1beta1', 'NetworkPolicy'], undefined],
    ['a kind the document does not describe', NETWORKING_V1, ['networking.k8s.io', 'v1', 'Ingress'], undefined],
    ['a CRD that keeps unknown fields: anything goes', CRD_V1, ['example.io', 'v1', 'Open'], undefined],
    ['a CRD with a structural schema', CRD_V1, ['example.io', 'v1', 'Shut'], ['apiVersion', 'kind', 'metadata', 'spec']],
    ['no document', undefined, ['example.io', 'v1', 'Shut'], undefined],
    ['not a document', { components: 'x' }, ['example.io', 'v1', 'Shut'], undefined],
  ])('%s', (_case, document, [group, version, kind], fields) => {
    expect(topLevelFields(document, group, version, kind)).toEqual(fields);
  });

  it.each([
    ['', 'v1', '/openapi/v3/api/v1'],
    ['networking.k8s.io', 'v1', '/openapi/v3/apis/networking.k8s.io/v1'],
  ])('the document of %j %s is at %s', (group, version, path) => {
    expect(openApiPath(group, version)).toBe(path);
  });
});

describe('a template of another kind, checked by the fields the cluster publishes', () => {
  const published: ApiKind = { group: 'networking.k8s.io', kind: 'NetworkPolicy', plural: 'networkpolicies', version: 'v1', versions: ['v1', 'v1beta1'], fields: { v1: ['apiVersion', 'kind', 'metadata', 'spec'] } };
  const unpublished: ApiKind = { group: 'batch', kind: 'CronJob', plural: 'cronjobs', version: 'v1', versions: ['v1'], fields: {} };
  const kinds = createKindRegistry([published, unpublished]);
  const policy = (body: object, apiVersion = 'networking.k8s.io/v1'): object => ({ apiVersion, kind: 'NetworkPolicy', metadata: { name: 'p' }, ...body });

  it.each<[string, object, { path: string; message: string }[]]>([
    ['its fields', policy({ spec: { podSelector: {} } }), []],
    ['a misspelled field', policy({ spex: { podSelector: {} } }), [{ path: 'spec.resource.spex', message: 'is not a field of a NetworkPolicy: a NetworkPolicy has apiVersion, kind, metadata, spec' }]],
    ['another case', policy({ Spec: {} }), [{ path: 'spec.resource.Spec', message: 'is not a field of a NetworkPolicy: did you mean "spec"?' }]],
    ['a version whose fields are not published: the API server checks it', policy({ spex: {} }, 'networking.k8s.io/v1beta1'), []],
    ['a kind whose fields are not published', { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'c' }, spex: {} }, []],
  ])('%s', (_case, template, problems) => {
    expect(validateResource(template, [], kinds)).toEqual(problems);
  });
});
