// Copies of ConfigMaps and Secrets are written in protobuf, against the real API server: every
// shape a copy takes (data with multi-byte text and long values, binaryData, a Secret's bytes that
// are not UTF-8, its type or the default one, stringData, immutable, labels, annotations, an owner
// reference) is stored as sent, and the answer decoded from protobuf is the object a JSON read gives.
// An update goes the same way; an error's Status reads as JSON's does; an object the encoder
// cannot say exactly goes as JSON.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClusterApi } from '../../src/k8s/client-cluster-api.js';
import { describeApiError } from '../../src/k8s/errors.js';
import type { CallOptions, KubeClient } from '../../src/k8s/kube-client.js';
import type { Resource } from '../../src/domain/types.js';
import { kubeClientOf } from '../kube-client.js';
import { Kube } from './fixtures/kube.js';
import { loadKubeConfig } from './support/cluster.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const real = kubeClientOf(kc);
/** How each request's body went: bytes (protobuf) or an object (JSON). */
const sent: { method: string; path: string; protobuf: boolean }[] = [];
const recording: KubeClient = {
  ...real,
  request: <T>(method: string, path: string, call?: CallOptions): Promise<T> => {
    sent.push({ method, path, protobuf: Buffer.isBuffer(call?.body) });
    return real.request<T>(method, path, call);
  },
};
const api = createClusterApi(recording);
let namespace = '';
let owner: { apiVersion: string; kind: string; name: string; uid: string };

beforeAll(async () => {
  const created = await kube.createNamespace('wire');
  namespace = created.metadata?.name ?? '';
  owner = { apiVersion: 'v1', kind: 'Namespace', name: namespace, uid: created.metadata?.uid ?? '' };
});

afterAll(async () => {
  await kube.cleanup();
  real.close();
});

const b64 = (bytes: Buffer | string): string => Buffer.from(bytes).toString('base64');

/** Built once the namespace exists. */
const meta = (name: string): Resource['metadata'] => ({
  name,
  namespace,
  labels: { 'apps.kruise.io/resource-distribution': 'wire', team: 'a' },
  annotations: { note: 'ünïcode ✓', empty: '' },
  ownerReferences: [{ ...owner, controller: false, blockOwnerDeletion: false }],
});

const SHAPES: [string, () => Resource][] = [
  ['a ConfigMap with multi-byte text, an empty value and one of 20 KiB', () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm-data'), data: { 'a.properties': 'x=1\nü=2\n', empty: '', big: 'v'.repeat(20_480) } })],
  ['an immutable ConfigMap with binaryData', () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('cm-binary'), binaryData: { blob: b64(Buffer.from([0, 1, 254, 255])) }, immutable: true })],
  ['a registry Secret', () => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta('pull'), type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('{"auths":{"r.example":{"auth":"dTpw"}}}') } })],
  ['a Secret of bytes that are not UTF-8, with no type (Opaque by default)', () => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta('raw'), data: { key: b64(Buffer.from([0xc3, 0x28, 0x00, 0xff])) } })],
  ['a Secret written with stringData', () => ({ apiVersion: 'v1', kind: 'Secret', metadata: meta('plain'), stringData: { token: 'héllo' } })],
];

describe('copies in protobuf on the real API server', () => {
  it.each(SHAPES)('%s: created and updated in protobuf, stored as sent, the answer the object a JSON read gives', async (_case, shape) => {
    const object = shape();
    sent.length = 0;
    const created = await api.createCopy(object);
    const read = await api.getCopy({ kind: object.kind, namespace, name: object.metadata.name ?? '' });
    expect(created).toEqual(read);
    expect(created.metadata).toMatchObject({ ...object.metadata, uid: expect.any(String), resourceVersion: expect.any(String), creationTimestamp: expect.any(String) });
    if (object.stringData) expect(created.data).toEqual({ token: b64('héllo') });
    else {
      expect(created.data).toEqual(object.data);
      expect(created.binaryData).toEqual(object.binaryData);
    }
    if (object.kind === 'Secret') expect(created.type).toBe(object.type ?? 'Opaque');

    const changed: Resource = { ...created, metadata: { ...created.metadata, labels: { ...created.metadata.labels, round: '2' } } };
    const updated = await api.replaceCopy(changed);
    expect(updated).toEqual(await api.getCopy({ kind: object.kind, namespace, name: object.metadata.name ?? '' }));
    expect(updated.metadata.labels).toMatchObject({ round: '2' });
    expect(updated.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    expect(sent.filter((request) => request.method !== 'GET')).toEqual([
      { method: 'POST', path: `/api/v1/namespaces/${namespace}/${object.kind === 'Secret' ? 'secrets' : 'configmaps'}`, protobuf: true },
      { method: 'PUT', path: `/api/v1/namespaces/${namespace}/${object.kind === 'Secret' ? 'secrets' : 'configmaps'}/${object.metadata.name}`, protobuf: true },
    ]);
  });

  const errorsMap = (data: Record<string, string>, resourceVersion?: string): Resource => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'errors', namespace, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    data,
  });

  it.each<[string, () => Promise<unknown>, { code: number; reason: string; message: RegExp }]>([
    ['a create of a name that exists', () => api.createCopy(errorsMap({ a: '2' })), { code: 409, reason: 'AlreadyExists', message: /already exists/ }],
    ['an update over an old resourceVersion', () => api.replaceCopy(errorsMap({ a: '2' }, '1')), { code: 409, reason: 'Conflict', message: /has been modified/ }],
    ['an invalid data key', () => api.createCopy({ ...errorsMap({ 'not a key!': 'x' }), metadata: { name: 'invalid', namespace } }), { code: 422, reason: 'Invalid', message: /not a key!/ }],
  ])('%s: the error, answered in protobuf, reads as its JSON would', async (_case, write, expected) => {
    if ((await api.getCopy({ kind: 'ConfigMap', namespace, name: 'errors' })) === undefined) await api.createCopy(errorsMap({ a: '1' }));
    sent.length = 0;
    const described = describeApiError(await write().catch((e: unknown) => e));
    expect(described).toMatchObject({ code: expected.code, reason: expected.reason, message: expect.stringMatching(expected.message) });
    expect(sent).toEqual([expect.objectContaining({ protobuf: true })]);
  });

  it('an object with a field the encoder does not know goes as JSON, and is stored as sent', async () => {
    sent.length = 0;
    const object: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'in-json', namespace, selfLink: '/api/v1/old-style' }, data: { a: '1' } };
    const created = await api.createCopy(object);
    expect(created).toMatchObject({ metadata: { name: 'in-json' }, data: { a: '1' } });
    expect(sent).toEqual([{ method: 'POST', path: `/api/v1/namespaces/${namespace}/configmaps`, protobuf: false }]);
  });
});
