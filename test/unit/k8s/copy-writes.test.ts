// How the cluster API writes copies: ConfigMaps and Secrets in protobuf, an answer it cannot decode
// read again as JSON, anything else as JSON. (The real API server's side: test/e2e/copy-wire-format.)
import { describe, expect, it } from 'vitest';
import { createClusterApi } from '../../../src/k8s/client-cluster-api.js';
import { PROTOBUF, UndecodableAnswer } from '../../../src/k8s/core-protobuf.js';
import type { CallOptions, KubeClient } from '../../../src/k8s/kube-client.js';
import type { Resource } from '../../../src/domain/types.js';

interface Call {
  method: string;
  path: string;
  protobuf: boolean;
  contentType?: string;
}

/** A client whose writes answer `answer` (decoded with the caller's `decode`) and whose reads answer `read`. */
function fakeClient(answer: Buffer | object, read: object | undefined): { client: KubeClient; calls: Call[] } {
  const calls: Call[] = [];
  const client = {
    request: (method: string, path: string, call: CallOptions = {}): Promise<unknown> => {
      calls.push({ method, path, protobuf: Buffer.isBuffer(call.body), ...(call.contentType === undefined ? {} : { contentType: call.contentType }) });
      if (method === 'GET') return read === undefined ? Promise.reject(Object.assign(new Error('not found'), { code: 404 })) : Promise.resolve(read);
      try {
        return Promise.resolve(Buffer.isBuffer(answer) ? call.decode?.(answer) : answer);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
    },
  } as unknown as KubeClient;
  return { client, calls };
}

const copy: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: 'team-a' }, data: { a: '1' } };
const storedJson = { ...copy, metadata: { ...copy.metadata, uid: 'u1', resourceVersion: '9', managedFields: [{ manager: 'x' }] } };
// An answer in protobuf from a newer API server: its ObjectMeta has a field 40.
const newerAnswer = Buffer.from('6b3873000a0f0a0276311209436f6e6669674d61701208' + '0a06c2020378797a', 'hex');

describe('copy writes', () => {
  it.each<[string, 'createCopy' | 'replaceCopy', string]>([
    ['a create', 'createCopy', 'POST'],
    ['an update', 'replaceCopy', 'PUT'],
  ])('%s whose protobuf answer has a field not known here reads the object again as JSON', async (_case, method, verb) => {
    const { client, calls } = fakeClient(newerAnswer, storedJson);
    const stored = await createClusterApi(client)[method](copy);
    expect(stored).toEqual({ ...copy, metadata: { ...copy.metadata, uid: 'u1', resourceVersion: '9' } });
    expect(calls).toEqual([
      { method: verb, path: `/api/v1/namespaces/team-a/configmaps${verb === 'PUT' ? '/shared' : ''}`, protobuf: true, contentType: PROTOBUF },
      { method: 'GET', path: '/api/v1/namespaces/team-a/configmaps/shared', protobuf: false },
    ]);
  });

  it('an answer that cannot be decoded, of an object gone by the time it is read, fails the write as undecodable', async () => {
    const { client } = fakeClient(newerAnswer, undefined);
    await expect(createClusterApi(client).createCopy(copy)).rejects.toBeInstanceOf(UndecodableAnswer);
  });

  it('a ConfigMap with a field the encoder does not know is written as JSON', async () => {
    const { client, calls } = fakeClient(storedJson, undefined);
    await createClusterApi(client).createCopy({ ...copy, extra: 1 });
    expect(calls).toEqual([{ method: 'POST', path: '/api/v1/namespaces/team-a/configmaps', protobuf: false }]);
  });
});
