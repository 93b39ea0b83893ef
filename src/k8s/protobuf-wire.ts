// Protocol Buffers' wire format, as much of it as Kubernetes' built-in objects use: varints,
// length-delimited fields (strings, bytes, nested messages, map entries) and nothing else.
// Numbers stay below 2^53 (generations, grace periods, timestamps in seconds).

export const VARINT = 0;
export const FIXED64 = 1;
export const LENGTH_DELIMITED = 2;
export const FIXED32 = 5;

/** The bytes do not follow the wire format (truncated, a wire type of no use here). */
export class MalformedProtobuf extends Error {
  override readonly name = 'MalformedProtobuf';
}

function varintSize(value: number): number {
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 0x80);
    size++;
  }
  return size;
}

/** Appends fields to one growing buffer; a nested message is written in place and its length put before it afterwards. */
export class ProtoWriter {
  private buffer = Buffer.allocUnsafe(512);
  private length = 0;

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }

  private varintAt(at: number, value: number): number {
    while (value >= 0x80) {
      this.buffer[at++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.buffer[at++] = value;
    return at;
  }

  private varint(value: number): void {
    this.reserve(10);
    this.length = this.varintAt(this.length, value);
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  uint(field: number, value: number): this {
    this.tag(field, VARINT);
    this.varint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.uint(field, value ? 1 : 0);
  }

  string(field: number, value: string): this {
    const size = Buffer.byteLength(value);
    this.tag(field, LENGTH_DELIMITED);
    this.varint(size);
    this.reserve(size);
    this.length += this.buffer.write(value, this.length, 'utf8');
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(value.length);
    this.reserve(value.length);
    this.buffer.set(value, this.length);
    this.length += value.length;
    return this;
  }

  message(field: number, write: (writer: this) => void): this {
    this.tag(field, LENGTH_DELIMITED);
    // One byte is kept for the length, as most messages here are shorter than 128 bytes; a longer
    // one moves along by the bytes its length needs beyond that.
    this.reserve(1);
    const start = this.length + 1;
    this.length = start;
    write(this);
    const size = this.length - start;
    const extra = varintSize(size) - 1;
    if (extra > 0) {
      this.reserve(extra);
      this.buffer.copyWithin(start + extra, start, this.length);
      this.length += extra;
    }
    this.varintAt(start - 1, size);
    return this;
  }

  /** A map<string, string> field: one entry message (key 1, value 2) per key. */
  stringMap(field: number, map: Readonly<Record<string, string>>): this {
    for (const [key, value] of Object.entries(map)) this.message(field, (entry) => entry.string(1, key).string(2, value));
    return this;
  }

  /** A map<string, bytes> field. */
  bytesMap(field: number, map: ReadonlyMap<string, Uint8Array>): this {
    for (const [key, value] of map) this.message(field, (entry) => entry.string(1, key).bytes(2, value));
    return this;
  }

  /** The bytes written so far, behind `prefix`. */
  finish(prefix: Uint8Array = new Uint8Array()): Buffer {
    const out = Buffer.allocUnsafe(prefix.length + this.length);
    out.set(prefix, 0);
    this.buffer.copy(out, prefix.length, 0, this.length);
    return out;
  }
}

/** Reads one message's fields in order: `next()` names a field, then one of the readers takes its value. */
export class ProtoReader {
  private at: number;

  constructor(
    private readonly buffer: Buffer,
    start = 0,
    private readonly end = buffer.length,
  ) {
    this.at = start;
  }

  /** The next field's number and wire type; undefined at the end of the message. */
  next(): { field: number; wire: number } | undefined {
    if (this.at >= this.end) return undefined;
    const tag = this.varint();
    const field = Math.floor(tag / 8);
    if (field === 0) throw new MalformedProtobuf('field number 0');
    return { field, wire: tag % 8 };
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.at >= this.end) throw new MalformedProtobuf('truncated varint');
      const byte = this.buffer[this.at++] ?? 0;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
    throw new MalformedProtobuf('varint longer than 10 bytes');
  }

  bool(): boolean {
    return this.varint() !== 0;
  }

  /** Where a length-delimited value lies in the buffer; the reader moves past it. */
  private delimited(): [start: number, end: number] {
    const size = this.varint();
    const start = this.at;
    if (start + size > this.end) throw new MalformedProtobuf('length past the end of the message');
    this.at = start + size;
    return [start, this.at];
  }

  /** A length-delimited value's bytes (shared with the buffer read). */
  bytes(): Buffer {
    return this.buffer.subarray(...this.delimited());
  }

  string(): string {
    return this.buffer.toString('utf8', ...this.delimited());
  }

  /** A nested message, read by its own reader. */
  message(): ProtoReader {
    return new ProtoReader(this.buffer, ...this.delimited());
  }

  /** Passes over a value of a field not read. */
  skip(wire: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === LENGTH_DELIMITED) this.bytes();
    else if (wire === FIXED64 || wire === FIXED32) {
      this.at += wire === FIXED64 ? 8 : 4;
      if (this.at > this.end) throw new MalformedProtobuf('fixed-size value past the end of the message');
    } else throw new MalformedProtobuf(`wire type ${wire}`);
  }
}
