// ConfigMaps and Secrets in Kubernetes' protobuf encoding (the "k8s\0" envelope around
// runtime.Unknown), as client-go writes built-in kinds: the API server decodes and encodes it at a
// fraction of JSON's cost, and copies are most of what this process writes. Only what can be said
// exactly goes this way: an object with any field the encoder does not know is sent as JSON, and an
// answer with a field the decoder does not know is refused (the caller reads the object as JSON),
// so no field is ever lost on the way.
import type { ObjectMeta, OwnerReference, Resource } from '../domain/types.js';
import { LENGTH_DELIMITED, MalformedProtobuf, ProtoReader, ProtoWriter } from './protobuf-wire.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** What a protobuf write asks for: protobuf, or JSON from a server that has none for the kind. */
export const PROTOBUF_OR_JSON = `${PROTOBUF}, application/json`;

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** An answer in protobuf with a kind or field this decoder does not know: read the object as JSON instead. */
export class UndecodableAnswer extends Error {
  override readonly name = 'UndecodableAnswer';
}

type Fields = Record<string, unknown>;
type Check = (value: unknown) => boolean;

// Go's encoding/json reads []byte as standard base64 with padding.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const RFC3339_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

const isString: Check = (value) => typeof value === 'string';
const isBoolean: Check = (value) => typeof value === 'boolean';

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every field set is one the checks know, and its value passes its check. */
function conforms(value: unknown, checks: Readonly<Record<string, Check>>): value is Fields {
  if (!isRecord(value)) return false;
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    const check = checks[key];
    if (check === undefined || !check(item)) return false;
  }
  return true;
}

function mapOf(check: Check): Check {
  return (value) => isRecord(value) && Object.values(value).every(check);
}

const arrayOf =
  (check: Check): Check =>
  (value) =>
    Array.isArray(value) && value.every(check);

const isStringMap = mapOf(isString);
/** Values Go's JSON decoder would read as the bytes Buffer.from(value, 'base64') gives. */
const isBase64Map = mapOf((value) => typeof value === 'string' && BASE64.test(value));

const OWNER_CHECKS: Readonly<Record<string, Check>> = { apiVersion: isString, kind: isString, name: isString, uid: isString, controller: isBoolean, blockOwnerDeletion: isBoolean };
const isOwnerReference: Check = (value) => conforms(value, OWNER_CHECKS) && ['apiVersion', 'kind', 'name', 'uid'].every((key) => typeof value[key] === 'string');

const META_CHECKS: Readonly<Record<string, Check>> = {
  name: isString,
  generateName: isString,
  namespace: isString,
  uid: isString,
  resourceVersion: isString,
  generation: (value) => Number.isSafeInteger(value) && (value as number) >= 0,
  // As the API server writes it (whole seconds, UTC); an object read back carries it into a PUT.
  creationTimestamp: (value) => typeof value === 'string' && RFC3339_SECONDS.test(value) && Date.parse(value) > 0,
  labels: isStringMap,
  annotations: isStringMap,
  ownerReferences: arrayOf(isOwnerReference),
  finalizers: arrayOf(isString),
};
const isEncodableMeta: Check = (value) => conforms(value, META_CHECKS);

const CONFIGMAP_CHECKS: Readonly<Record<string, Check>> = { apiVersion: isString, kind: isString, metadata: isEncodableMeta, data: isStringMap, binaryData: isBase64Map, immutable: isBoolean };
const SECRET_CHECKS: Readonly<Record<string, Check>> = {
  apiVersion: isString,
  kind: isString,
  metadata: isEncodableMeta,
  data: isBase64Map,
  stringData: isStringMap,
  type: isString,
  immutable: isBoolean,
};

/** ObjectMeta's string fields a request may carry, by field number (selfLink, 4, is never sent). */
const META_STRINGS = [
  ['name', 1],
  ['generateName', 2],
  ['namespace', 3],
  ['uid', 5],
  ['resourceVersion', 6],
] as const;

function decoded(map: Readonly<Record<string, string>>): Map<string, Buffer> {
  return new Map(Object.entries(map).map(([key, value]) => [key, Buffer.from(value, 'base64')]));
}

function writeMeta(writer: ProtoWriter, meta: ObjectMeta): void {
  for (const [key, field] of META_STRINGS) {
    const value = meta[key];
    if (value !== undefined) writer.string(field, value);
  }
  if (meta.generation !== undefined) writer.uint(7, meta.generation);
  const created = meta.creationTimestamp;
  if (created !== undefined) writer.message(8, (time) => time.uint(1, Date.parse(created) / 1000));
  if (meta.labels) writer.stringMap(11, meta.labels);
  if (meta.annotations) writer.stringMap(12, meta.annotations);
  for (const ref of meta.ownerReferences ?? []) {
    writer.message(13, (owner) => {
      owner.string(1, ref.kind).string(3, ref.name).string(4, ref.uid).string(5, ref.apiVersion);
      if (ref.controller !== undefined) owner.bool(6, ref.controller);
      if (ref.blockOwnerDeletion !== undefined) owner.bool(7, ref.blockOwnerDeletion);
    });
  }
  for (const finalizer of meta.finalizers ?? []) writer.string(14, finalizer);
}

function envelope(kind: string, write: (object: ProtoWriter) => void): Buffer {
  return new ProtoWriter()
    .message(1, (typeMeta) => typeMeta.string(1, 'v1').string(2, kind))
    .message(2, write)
    .finish(MAGIC);
}

function encodeConfigMap(object: Resource): Buffer | undefined {
  if (!conforms(object, CONFIGMAP_CHECKS)) return undefined;
  const { metadata, data, binaryData, immutable } = object;
  return envelope('ConfigMap', (writer) => {
    writer.message(1, (meta) => writeMeta(meta, metadata));
    if (data) writer.stringMap(2, data);
    if (binaryData) writer.bytesMap(3, decoded(binaryData));
    if (immutable !== undefined) writer.bool(4, immutable);
  });
}

function encodeSecret(object: Resource): Buffer | undefined {
  if (!conforms(object, SECRET_CHECKS)) return undefined;
  const { metadata, data, stringData, type, immutable } = object;
  return envelope('Secret', (writer) => {
    writer.message(1, (meta) => writeMeta(meta, metadata));
    if (data) writer.bytesMap(2, decoded(data));
    if (type !== undefined) writer.string(3, type);
    if (stringData) writer.stringMap(4, stringData);
    if (immutable !== undefined) writer.bool(5, immutable);
  });
}

/**
 * A core/v1 ConfigMap or Secret as the API server's protobuf request body; undefined for any other
 * object, and for one with a field or value this encoder cannot say exactly (it goes as JSON).
 */
export function encodeCoreObject(object: Resource): Buffer | undefined {
  if (object.apiVersion !== 'v1') return undefined;
  if (object.kind === 'ConfigMap') return encodeConfigMap(object);
  if (object.kind === 'Secret') return encodeSecret(object);
  return undefined;
}

// ---- answers ----

function unknownField(where: string, field: number): UndecodableAnswer {
  return new UndecodableAnswer(`${where} field ${field} is not known`);
}

/** One map entry (key 1, value 2). */
function readEntry(reader: ProtoReader, bytes: boolean): [string, string] {
  const entry = reader.message();
  let key = '';
  let value = '';
  for (let field = entry.next(); field !== undefined; field = entry.next()) {
    if (field.field === 1) key = entry.string();
    else if (field.field === 2) value = bytes ? entry.bytes().toString('base64') : entry.string();
    else entry.skip(field.wire);
  }
  return [key, value];
}

function readMapEntry(target: Fields, name: string, reader: ProtoReader, bytes = false): void {
  const [key, value] = readEntry(reader, bytes);
  const map = (target[name] ??= {}) as Record<string, string>;
  map[key] = value;
}

/** metav1.Time as its JSON says it: RFC 3339 in whole seconds. */
function readTime(reader: ProtoReader): string | undefined {
  const time = reader.message();
  let seconds = 0;
  for (let field = time.next(); field !== undefined; field = time.next()) {
    if (field.field === 1) seconds = time.varint();
    else time.skip(field.wire);
  }
  return seconds === 0 ? undefined : `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

function readOwner(reader: ProtoReader): OwnerReference {
  const owner = reader.message();
  const fields: Fields = { apiVersion: '', kind: '', name: '', uid: '' };
  for (let field = owner.next(); field !== undefined; field = owner.next()) {
    const { field: number } = field;
    if (number === 1) fields.kind = owner.string();
    else if (number === 3) fields.name = owner.string();
    else if (number === 4) fields.uid = owner.string();
    else if (number === 5) fields.apiVersion = owner.string();
    else if (number === 6) fields.controller = owner.bool();
    else if (number === 7) fields.blockOwnerDeletion = owner.bool();
    else throw unknownField('ownerReference', number);
  }
  return fields as unknown as OwnerReference;
}

type FieldReader = (reader: ProtoReader, fields: Fields) => void;

function stringField(name: string): FieldReader {
  return (reader, fields) => {
    const value = reader.string();
    if (value !== '') fields[name] = value;
  };
}

function listField<T>(name: string, read: (reader: ProtoReader) => T): FieldReader {
  return (reader, fields) => {
    ((fields[name] ??= []) as T[]).push(read(reader));
  };
}

const META_READERS: Readonly<Record<number, FieldReader>> = {
  1: stringField('name'),
  2: stringField('generateName'),
  3: stringField('namespace'),
  4: stringField('selfLink'),
  5: stringField('uid'),
  6: stringField('resourceVersion'),
  7: (reader, fields) => {
    const generation = reader.varint();
    if (generation !== 0) fields.generation = generation;
  },
  8: (reader, fields) => {
    const created = readTime(reader);
    if (created !== undefined) fields.creationTimestamp = created;
  },
  9: (reader, fields) => {
    fields.deletionTimestamp = readTime(reader);
  },
  10: (reader, fields) => {
    fields.deletionGracePeriodSeconds = reader.varint();
  },
  11: (reader, fields) => readMapEntry(fields, 'labels', reader),
  12: (reader, fields) => readMapEntry(fields, 'annotations', reader),
  13: listField('ownerReferences', readOwner),
  14: listField('finalizers', (reader) => reader.string()),
  // Removed from Kubernetes 1.25; older API servers still send it, empty.
  15: stringField('clusterName'),
  // managedFields: never read here.
  17: (reader) => reader.skip(LENGTH_DELIMITED),
};

/** ObjectMeta without managedFields; empty values left out, as its JSON does. */
function readMeta(reader: ProtoReader): ObjectMeta {
  const meta = reader.message();
  const fields: Fields = {};
  for (let field = meta.next(); field !== undefined; field = meta.next()) {
    const read = META_READERS[field.field];
    if (read === undefined) throw unknownField('metadata', field.field);
    read(meta, fields);
  }
  return fields;
}

function readConfigMap(reader: ProtoReader): Resource {
  const fields: Fields = { kind: 'ConfigMap', apiVersion: 'v1', metadata: {} };
  for (let field = reader.next(); field !== undefined; field = reader.next()) {
    const { field: number } = field;
    if (number === 1) fields.metadata = readMeta(reader);
    else if (number === 2) readMapEntry(fields, 'data', reader);
    else if (number === 3) readMapEntry(fields, 'binaryData', reader, true);
    else if (number === 4) fields.immutable = reader.bool();
    else throw unknownField('ConfigMap', number);
  }
  return fields as Resource;
}

function readSecret(reader: ProtoReader): Resource {
  const fields: Fields = { kind: 'Secret', apiVersion: 'v1', metadata: {} };
  for (let field = reader.next(); field !== undefined; field = reader.next()) {
    const { field: number } = field;
    if (number === 1) fields.metadata = readMeta(reader);
    else if (number === 2) readMapEntry(fields, 'data', reader, true);
    else if (number === 3) {
      const type = reader.string();
      if (type !== '') fields.type = type;
    } else if (number === 4) readMapEntry(fields, 'stringData', reader);
    else if (number === 5) fields.immutable = reader.bool();
    else throw unknownField('Secret', number);
  }
  return fields as Resource;
}

function readCause(reader: ProtoReader): Fields {
  const cause = reader.message();
  const fields: Fields = {};
  const names: Readonly<Record<number, string>> = { 1: 'reason', 2: 'message', 3: 'field' };
  for (let field = cause.next(); field !== undefined; field = cause.next()) {
    const name = names[field.field];
    if (name === undefined) cause.skip(field.wire);
    else fields[name] = cause.string();
  }
  return fields;
}

function readDetails(reader: ProtoReader): Fields {
  const details = reader.message();
  const fields: Fields = {};
  const names: Readonly<Record<number, string>> = { 1: 'name', 2: 'group', 3: 'kind', 6: 'uid' };
  for (let field = details.next(); field !== undefined; field = details.next()) {
    const name = names[field.field];
    if (name !== undefined) {
      const value = details.string();
      if (value !== '') fields[name] = value;
    } else if (field.field === 4) ((fields.causes ??= []) as Fields[]).push(readCause(details));
    else if (field.field === 5) fields.retryAfterSeconds = details.varint();
    else details.skip(field.wire);
  }
  return fields;
}

/** A Status (an error's answer): read leniently, as it is only ever reported. */
function readStatus(reader: ProtoReader): Fields {
  const fields: Fields = { kind: 'Status', apiVersion: 'v1', metadata: {} };
  const names: Readonly<Record<number, string>> = { 2: 'status', 3: 'message', 4: 'reason' };
  for (let field = reader.next(); field !== undefined; field = reader.next()) {
    const name = names[field.field];
    if (name !== undefined) {
      const value = reader.string();
      if (value !== '') fields[name] = value;
    } else if (field.field === 5) fields.details = readDetails(reader);
    else if (field.field === 6) fields.code = reader.varint();
    else reader.skip(field.wire);
  }
  return fields;
}

const READERS: Readonly<Record<string, (reader: ProtoReader) => unknown>> = {
  'v1/ConfigMap': readConfigMap,
  'v1/Secret': readSecret,
  'v1/Status': readStatus,
};

/**
 * An answer in the API server's protobuf envelope, as the object its JSON would give; undefined
 * when `body` is not in that envelope (JSON). Throws UndecodableAnswer for a kind or field not known here.
 */
export function decodeCoreAnswer(body: Buffer): unknown {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  try {
    return readEnvelope(body);
  } catch (error) {
    if (error instanceof MalformedProtobuf) throw new UndecodableAnswer(`malformed protobuf answer: ${error.message}`);
    throw error;
  }
}

/** TypeMeta: apiVersion 1, kind 2. */
function readTypeMeta(reader: ProtoReader): string {
  const typeMeta = reader.message();
  let apiVersion = '';
  let kind = '';
  for (let field = typeMeta.next(); field !== undefined; field = typeMeta.next()) {
    if (field.field === 1) apiVersion = typeMeta.string();
    else if (field.field === 2) kind = typeMeta.string();
    else typeMeta.skip(field.wire);
  }
  return `${apiVersion}/${kind}`;
}

/** runtime.Unknown: typeMeta 1, raw 2, contentEncoding 3, contentType 4. */
function readEnvelope(body: Buffer): unknown {
  const unknown = new ProtoReader(body, MAGIC.length);
  let type = '/';
  let raw: ProtoReader | undefined;
  for (let field = unknown.next(); field !== undefined; field = unknown.next()) {
    if (field.field === 1) type = readTypeMeta(unknown);
    else if (field.field === 2) raw = unknown.message();
    else if (field.field === 3) {
      const encoding = unknown.string();
      if (encoding !== '') throw new UndecodableAnswer(`an answer in content encoding ${encoding} is not known`);
    } else unknown.skip(field.wire);
  }
  const read = READERS[type];
  if (read === undefined) throw new UndecodableAnswer(`an answer of kind ${type} is not known`);
  return read(raw ?? new ProtoReader(Buffer.alloc(0)));
}
