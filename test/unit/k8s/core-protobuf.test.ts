import { describe, expect, it } from 'vitest';
import { decodeCoreAnswer, encodeCoreObject, UndecodableAnswer } from '../../../src/k8s/core-protobuf.js';
import { ProtoReader, ProtoWriter } from '../../../src/k8s/protobuf-wire.js';
import type { Resource } from '../../../src/domain/types.js';

const owner = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'ResourceDistribution', name: 'shared', uid: 'a1b2', controller: true, blockOwnerDeletion: true };

/** What the API server answers for a stored object: its request, with what the server sets. */
function stored(sent: Resource): Resource {
  return { ...sent, metadata: { ...sent.metadata, uid: 'c3d4', resourceVersion: '812', creationTimestamp: '2026-11-28T20:15:03Z' } };
}

/**
 * The API server's answer in protobuf, written field by field as Go's generated code writes it:
 * empty strings and false booleans included, the creation time and managedFields (17) added.
 */
function answer(object: Resource, extra: (meta: ProtoWriter) => void = () => {}): Buffer {
  const { creationTimestamp, ...metadata } = object.metadata;
  const writer = new ProtoWriter()
    .message(1, (typeMeta) => typeMeta.string(1, 'v1').string(2, object.kind))
    .message(2, (o) => {
      o.message(1, (meta) => {
        meta.string(1, metadata.name ?? '').string(2, '').string(3, metadata.namespace ?? '').string(4, '').string(5, metadata.uid ?? '').string(6, metadata.resourceVersion ?? '').uint(7, metadata.generation ?? 0);
        if (creationTimestamp !== undefined) meta.message(8, (time) => time.uint(1, Date.parse(creationTimestamp) / 1000).uint(2, 0));
        if (metadata.labels) meta.stringMap(11, metadata.labels);
        if (metadata.annotations) meta.stringMap(12, metadata.annotations);
        for (const ref of metadata.ownerReferences ?? [])
          meta.message(13, (r) => r.string(1, ref.kind).string(3, ref.name).string(4, ref.uid).string(5, ref.apiVersion).bool(6, ref.controller ?? false).bool(7, ref.blockOwnerDeletion ?? false));
        meta.message(17, (entry) => entry.string(1, 'resource-distributor').string(2, 'Update'));
        extra(meta);
      });
      writeContent(o, object);
    });
  return writer.finish(Buffer.from([0x6b, 0x38, 0x73, 0x00]));
}

function writeContent(o: ProtoWriter, object: Resource): void {
  const bytes = (map: Record<string, string>): Map<string, Buffer> => new Map(Object.entries(map).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
  if (object.kind === 'ConfigMap') {
    if (object.data) o.stringMap(2, object.data);
    if (object.binaryData) o.bytesMap(3, bytes(object.binaryData));
    if (object.immutable !== undefined) o.bool(4, object.immutable);
  } else {
    if (object.data) o.bytesMap(2, bytes(object.data));
    o.string(3, object.type ?? '');
    if (object.immutable !== undefined) o.bool(5, object.immutable);
  }
}

const configMap: Resource = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'shared', namespace: 'team-a', labels: { 'apps.kruise.io/resource-distribution': 'shared' }, annotations: { note: 'ünïcode ✓', empty: '' }, ownerReferences: [owner] },
  data: { 'settings.properties': 'feature.a=on\n', 'long': 'x'.repeat(300) },
};
const secret: Resource = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'pull', namespace: 'team-b', resourceVersion: '811', ownerReferences: [owner] },
  type: 'kubernetes.io/dockerconfigjson',
  data: { '.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64'), 'raw': Buffer.from([0, 255, 128, 7]).toString('base64') },
};

describe('ConfigMaps and Secrets in protobuf', () => {
  it.each([
    ['a ConfigMap with data, unicode and a value longer than 127 bytes', configMap],
    ['a ConfigMap with binaryData, immutable', { ...configMap, data: undefined, binaryData: { blob: Buffer.from([1, 2, 3, 250]).toString('base64') }, immutable: true }],
    ['a Secret with its type and bytes that are not UTF-8', secret],
    ['a Secret with no data and no type', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'empty', namespace: 'team-c' } }],
    ['an object read back (its creation time, a generation) written again', { ...configMap, metadata: { ...configMap.metadata, creationTimestamp: '2026-11-28T20:15:03Z', generation: 4 } }],
  ] as [string, Resource][])('%s: the answer decodes to the object the JSON answer would give', (_case, object) => {
    const sent = { ...object, metadata: { ...object.metadata } };
    expect(encodeCoreObject(sent)).toBeInstanceOf(Buffer);
    const expected = JSON.parse(JSON.stringify(stored(sent))) as Resource;
    expect(decodeCoreAnswer(answer(stored(sent)))).toEqual(expected);
  });

  it.each([
    ['another kind', { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'n' } }],
    ['another version', { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 's', namespace: 'n' } }],
    ['a field the encoder does not know', { ...configMap, spec: {} }],
    ['a metadata field the encoder does not know', { ...configMap, metadata: { ...configMap.metadata, deletionTimestamp: '2026-11-28T20:15:03Z' } }],
    ['a creation time in fractions of a second', { ...configMap, metadata: { ...configMap.metadata, creationTimestamp: '2026-11-28T20:15:03.5Z' } }],
    ['a creation time that is no date', { ...configMap, metadata: { ...configMap.metadata, creationTimestamp: '2026-13-45T20:15:03Z' } }],
    ['a negative generation', { ...configMap, metadata: { ...configMap.metadata, generation: -1 } }],
    ['a label value that is not a string', { ...configMap, metadata: { ...configMap.metadata, labels: { a: 1 } } }],
    ['a null annotations map', { ...configMap, metadata: { ...configMap.metadata, annotations: null } }],
    ['an owner reference with an unknown field', { ...configMap, metadata: { ...configMap.metadata, ownerReferences: [{ ...owner, extra: 'x' }] } }],
    ['Secret data that is not base64', { ...secret, data: { a: 'not base64!' } }],
    ['Secret data in base64 without its padding', { ...secret, data: { a: 'YQ' } }],
    ['binaryData that is not base64', { ...configMap, binaryData: { a: '%%%%' } }],
    ['immutable as a string', { ...configMap, immutable: 'true' }],
  ] as [string, Resource][])('%s: not encoded (sent as JSON instead)', (_case, object) => {
    expect(encodeCoreObject(object)).toBeUndefined();
  });

  it('writes the envelope, the type and the fields client-go writes, in its field numbers', () => {
    const body = encodeCoreObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'b' }, data: { k: 'v' } });
    // "k8s\0", Unknown{typeMeta{"v1","ConfigMap"}, raw{metadata{name "a", namespace "b"}, data{"k": "v"}}}
    expect(body?.toString('hex')).toBe(
      Buffer.concat([
        Buffer.from('6b387300', 'hex'),
        Buffer.from('0a0f0a0276311209436f6e6669674d6170', 'hex'),
        Buffer.from('1210', 'hex'),
        Buffer.from('0a060a01611a0162', 'hex'),
        Buffer.from('12060a016b120176', 'hex'),
      ]).toString('hex'),
    );
  });

  it('reads an error as the Status its JSON would give', () => {
    const status = new ProtoWriter()
      .message(1, (typeMeta) => typeMeta.string(1, 'v1').string(2, 'Status'))
      .message(2, (o) =>
        o
          .message(1, () => {})
          .string(2, 'Failure')
          .string(3, 'configmaps "shared" is forbidden')
          .string(4, 'Forbidden')
          .message(5, (d) => d.string(1, 'shared').string(2, '').string(3, 'configmaps').message(4, (c) => c.string(1, 'FieldValueInvalid').string(2, 'bad').string(3, 'data')).uint(5, 0))
          .uint(6, 403),
      )
      .finish(Buffer.from([0x6b, 0x38, 0x73, 0x00]));
    expect(decodeCoreAnswer(status)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "shared" is forbidden',
      reason: 'Forbidden',
      details: { name: 'shared', kind: 'configmaps', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'data' }], retryAfterSeconds: 0 },
      code: 403,
    });
  });

  it.each([
    ['a metadata field this decoder does not know', answer(stored(configMap), (meta) => meta.string(30, 'new'))],
    ['an answer of a kind it does not know', new ProtoWriter().message(1, (t) => t.string(1, 'v1').string(2, 'Pod')).message(2, () => {}).finish(Buffer.from([0x6b, 0x38, 0x73, 0x00]))],
    ['a truncated answer', answer(stored(configMap)).subarray(0, 40)],
  ])('%s: refused, so that the caller reads the object as JSON', (_case, body) => {
    expect(() => decodeCoreAnswer(body)).toThrow(UndecodableAnswer);
  });

  it.each([['{"kind":"ConfigMap"}'], [''], ['k8s']])('a body that is not in the protobuf envelope (%j) is left to JSON', (text) => {
    expect(decodeCoreAnswer(Buffer.from(text))).toBeUndefined();
  });
});

describe('the wire format', () => {
  it.each([0, 1, 127, 128, 300, 16_383, 16_384, 2 ** 31, 2 ** 53 - 1])('a varint of %d reads back as written', (value) => {
    const bytes = new ProtoWriter().uint(1, value).finish();
    const reader = new ProtoReader(bytes);
    expect(reader.next()).toEqual({ field: 1, wire: 0 });
    expect(reader.varint()).toBe(value);
    expect(reader.next()).toBeUndefined();
  });

  it.each([0, 127, 128, 20_000])('a nested message of %d bytes keeps its length right', (size) => {
    const bytes = new ProtoWriter()
      .message(3, (m) => m.string(1, 'y'.repeat(size)))
      .string(4, 'after')
      .finish();
    const reader = new ProtoReader(bytes);
    expect(reader.next()?.field).toBe(3);
    const nested = reader.message();
    expect(nested.next()?.field).toBe(1);
    expect(nested.string()).toBe('y'.repeat(size));
    expect(reader.next()?.field).toBe(4);
    expect(reader.string()).toBe('after');
  });
});
