// An HTTP/1.1 response read from the bytes of a connection as they arrive: the status, whether
// the connection stays open, and the body, whether sized by Content-Length, chunked, or running
// until the server closes. Pure: the connection pool feeds it and acts on what it returns.

/** The most a response's head may take; a server sending more is not an API server. */
const MAX_HEAD_BYTES = 64 * 1024;

export interface Response {
  status: number;
  /** The body's bytes, in the order they came (not joined: a list may be hundreds of MiB). */
  body: Buffer[];
  /** The server closes the connection after this response (or the body ran until it did). */
  close: boolean;
}

export class MalformedResponse extends Error {
  override readonly name = 'MalformedResponse';
  /** A network-level failure to callers: worth a retry over a new connection. */
  readonly code = 'EPROTO';
}

interface Head {
  status: number;
  length: number | undefined;
  chunked: boolean;
  close: boolean;
}

/** Only three headers matter here; the API server sends half a dozen more (Audit-Id, Date, ...). */
function applyHeader(head: Head, name: string, rawValue: string): void {
  if (name !== 'content-length' && name !== 'transfer-encoding' && name !== 'connection') return;
  const value = rawValue.trim().toLowerCase();
  if (name === 'content-length') {
    if (!/^\d+$/.test(value) || (head.length !== undefined && head.length !== Number(value))) throw new MalformedResponse(`bad Content-Length: ${value}`);
    head.length = Number(value);
  } else if (name === 'transfer-encoding') head.chunked = value.split(',').some((coding) => coding.trim() === 'chunked');
  else if (name === 'connection') head.close = value.split(',').some((option) => option.trim() === 'close');
}

function parseHead(text: string, bodiless: boolean): Head {
  const lines = text.split('\r\n');
  const statusLine = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
  if (statusLine === null) throw new MalformedResponse(`not an HTTP/1.1 status line: ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  const head: Head = { status: Number(statusLine[1]), length: undefined, chunked: false, close: lines[0]?.startsWith('HTTP/1.0') ?? false };
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MalformedResponse(`malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
    applyHeader(head, line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1));
  }
  if (bodiless) head.length = 0;
  return head;
}

type State =
  | { at: 'head'; pending: Buffer }
  | { at: 'sized'; left: number }
  | { at: 'chunk-size'; line: string }
  | { at: 'chunk-data'; left: number }
  | { at: 'chunk-end'; seen: number }
  | { at: 'trailer'; line: string }
  | { at: 'until-close' }
  | { at: 'done' };

/** Reads one response; `push` returns it once complete, `end` when the server closes first. */
export class ResponseReader {
  private state: State = { at: 'head', pending: Buffer.alloc(0) };
  private head: Head | undefined;
  private readonly body: Buffer[] = [];

  /** `bodiless`: the answer to a HEAD request carries no body whatever its headers say. */
  constructor(private readonly bodiless = false) {}

  /** Feeds the next bytes; returns the response once it is complete. Bytes past its end are an error (nothing is pipelined). */
  push(chunk: Buffer): Response | undefined {
    let rest = chunk;
    while (rest.length > 0) {
      if (this.state.at === 'done') throw new MalformedResponse(`${rest.length} bytes after the end of the response`);
      rest = this.step(rest);
    }
    return this.state.at === 'done' ? this.response() : undefined;
  }

  /** The server closed the connection: the response, if its body was to run until then; otherwise an error. */
  end(): Response {
    if (this.state.at === 'until-close' || this.state.at === 'done') {
      this.state = { at: 'done' };
      return { ...this.response(), close: true };
    }
    const what = this.state.at === 'head' && this.state.pending.length === 0 ? 'before answering' : 'in the middle of its answer';
    throw Object.assign(new Error(`the API server closed the connection ${what}`), { code: 'ECONNRESET' });
  }

  private response(): Response {
    const head = this.head as Head;
    return { status: head.status, body: this.body, close: head.close };
  }

  /** Consumes what the current state can of `bytes`; returns the rest. */
  private step(bytes: Buffer): Buffer {
    const state = this.state;
    switch (state.at) {
      case 'head':
        return this.readHead(state.pending.length === 0 ? bytes : Buffer.concat([state.pending, bytes]));
      case 'sized':
      case 'chunk-data':
        return this.readData(state, bytes);
      case 'chunk-end':
        return this.readChunkEnd(state, bytes);
      case 'chunk-size':
      case 'trailer':
        return this.readLine(state, bytes);
      case 'until-close':
        this.body.push(bytes);
        return bytes.subarray(bytes.length);
      case 'done':
        return bytes;
    }
  }

  private readData(state: { at: 'sized' | 'chunk-data'; left: number }, bytes: Buffer): Buffer {
    const taken = bytes.subarray(0, state.left);
    this.body.push(taken);
    state.left -= taken.length;
    if (state.left === 0) this.state = state.at === 'sized' ? { at: 'done' } : { at: 'chunk-end', seen: 0 };
    return bytes.subarray(taken.length);
  }

  /** The CRLF closing a chunk's data, possibly split across reads. */
  private readChunkEnd(state: { at: 'chunk-end'; seen: number }, bytes: Buffer): Buffer {
    let i = 0;
    while (i < bytes.length && state.seen < 2) {
      if (bytes[i] !== (state.seen === 0 ? 0x0d : 0x0a)) throw new MalformedResponse('chunk data not followed by CRLF');
      state.seen++;
      i++;
    }
    if (state.seen === 2) this.state = { at: 'chunk-size', line: '' };
    return bytes.subarray(i);
  }

  private readHead(bytes: Buffer): Buffer {
    const end = bytes.indexOf('\r\n\r\n');
    if (end < 0) {
      if (bytes.length > MAX_HEAD_BYTES) throw new MalformedResponse(`response head over ${MAX_HEAD_BYTES} bytes`);
      this.state = { at: 'head', pending: bytes };
      return bytes.subarray(bytes.length);
    }
    const head = parseHead(bytes.toString('latin1', 0, end), this.bodiless);
    const rest = bytes.subarray(end + 4);
    // An interim answer (100 Continue, 103 Early Hints): the real one follows.
    if (head.status >= 100 && head.status < 200) {
      this.state = { at: 'head', pending: Buffer.alloc(0) };
      return rest;
    }
    this.head = head;
    const noBody = head.status === 204 || head.status === 304;
    if (noBody) this.state = { at: 'done' };
    else if (head.chunked && !this.bodiless) this.state = { at: 'chunk-size', line: '' };
    else if (head.length !== undefined) this.state = head.length === 0 ? { at: 'done' } : { at: 'sized', left: head.length };
    else this.state = { at: 'until-close' };
    return rest;
  }

  /** A chunk-size line, or a trailer line (the empty one ends the response). */
  private readLine(state: { at: 'chunk-size' | 'trailer'; line: string }, bytes: Buffer): Buffer {
    const newline = bytes.indexOf(0x0a);
    const piece = bytes.toString('latin1', 0, newline < 0 ? bytes.length : newline);
    state.line += piece;
    if (state.line.length > MAX_HEAD_BYTES) throw new MalformedResponse('chunk-size or trailer line too long');
    if (newline < 0) return bytes.subarray(bytes.length);
    const line = state.line.replace(/\r$/, '');
    if (state.at === 'trailer') {
      this.state = line === '' ? { at: 'done' } : { at: 'trailer', line: '' };
      return bytes.subarray(newline + 1);
    }
    // Chunk extensions (";name=value") are allowed and ignored.
    const size = /^([0-9a-fA-F]{1,8})[ \t]*(?:;.*)?$/.exec(line);
    if (size === null) throw new MalformedResponse(`bad chunk size: ${JSON.stringify(line.slice(0, 40))}`);
    const left = parseInt(size[1] as string, 16);
    this.state = left === 0 ? { at: 'trailer', line: '' } : { at: 'chunk-data', left };
    return bytes.subarray(newline + 1);
  }
}
