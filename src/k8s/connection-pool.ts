// Kept-alive TLS connections to the API server, each carrying one HTTP/1.1 request at a time.
// Requests queue for a free connection once `maxConnections` are open. A request costs one
// write of its bytes and the reading of its answer: about half the CPU of node:https, whose
// per-request objects and events were most of what a pass spent writing copies.
import { isIP } from 'node:net';
import { connect, createSecureContext, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { DeadlineExceeded } from './deadline.js';
import { ResponseReader, type Response } from './response-reader.js';

export interface PoolOptions {
  /** Host and port as in the server URL (the Host header). */
  host: string;
  hostname: string;
  port: number;
  tls: Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;
  maxConnections: number;
  /** An idle connection is closed after this long, unless it is one of those kept open. */
  idleMs: number;
  /**
   * How a kept connection stays open: every `everyMs` of idleness it sends `request()` (answered
   * by anything: the answer only shows the connection alive), before the server's idle timeout.
   */
  keepAlive: { everyMs: number; request: () => Promise<PoolRequest> };
  /** Called when a TLS connection is established (metrics). */
  onConnection?: () => void;
}

export interface PoolRequest {
  method: string;
  /** Path and query, already encoded. */
  path: string;
  headers: Readonly<Record<string, string>>;
  /** JSON as text, or bytes (protobuf). */
  body?: string | Buffer;
  /** The deadline covers the wait for a connection and the whole answer. */
  timeoutMs: number;
}

export interface ConnectionPool {
  send(request: PoolRequest): Promise<Response>;
  /**
   * Keeps `count` connections open while idle (at most `maxConnections`), opening the missing
   * ones now; 0 lets every connection close after `idleMs` again.
   */
  keepOpen(count: number): void;
  /** TLS connections established so far. */
  opened(): number;
  close(): void;
}

type Outcome = { response: Response } | { error: Error };

function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

interface Exchange {
  reader: ResponseReader;
  settle(outcome: Outcome): void;
}

class PooledConnection {
  exchange: Exchange | undefined;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly socket: TLSSocket,
    onClose: (connection: PooledConnection) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('end', () => this.ended());
    socket.on('error', (error: Error) => this.fail(error));
    socket.on('close', () => {
      this.stopIdle();
      // A close with an exchange still open and no error before it: the server hung up.
      if (this.exchange !== undefined) this.ended();
      onClose(this);
    });
  }

  idle(ms: number, expired: () => void): void {
    this.idleTimer = setTimeout(expired, ms);
    this.idleTimer.unref();
  }

  stopIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private read(chunk: Buffer): void {
    const exchange = this.exchange;
    if (exchange === undefined) {
      // Nothing was asked: a server talking out of turn cannot be trusted with the next request.
      this.socket.destroy();
      return;
    }
    try {
      const response = exchange.reader.push(chunk);
      if (response === undefined) return;
      this.exchange = undefined;
      if (response.close) this.socket.destroy();
      exchange.settle({ response });
    } catch (error) {
      this.fail(asError(error));
    }
  }

  private ended(): void {
    const exchange = this.exchange;
    this.exchange = undefined;
    // Destroyed first: settling hands the connection back, and a half-closed one must not be
    // reused; an idle one the server closed is not taken again before its 'close' event.
    this.socket.destroy();
    if (exchange === undefined) return;
    try {
      exchange.settle({ response: exchange.reader.end() });
    } catch (error) {
      exchange.settle({ error: asError(error) });
    }
  }

  fail(error: Error): void {
    const exchange = this.exchange;
    this.exchange = undefined;
    this.socket.destroy();
    exchange?.settle({ error });
  }
}

/** Header values and paths go into the request as they are: a line break in one would forge another header. */
function requestHead(request: PoolRequest, host: string): string {
  if (/[^\x21-\x7e]/.test(request.path)) throw new TypeError(`request path has characters that must be escaped: ${JSON.stringify(request.path)}`);
  let head = `${request.method} ${request.path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [name, value] of Object.entries(request.headers)) {
    if (/[\r\n]/.test(value)) throw new TypeError(`header ${name} has a line break`);
    head += `${name}: ${value}\r\n`;
  }
  if (request.body !== undefined) head += `Content-Length: ${Buffer.byteLength(request.body)}\r\n`;
  return `${head}\r\n`;
}

/** What a request meets once the client is closed: like any lost connection, transient. */
function closedError(): Error {
  return Object.assign(new Error('the client is closed'), { code: 'ECONNRESET' });
}

/** The pool's connections: at most `maxConnections` open, idle ones kept for `idleMs`, waiting requests served in order. */
interface Slots {
  acquire(): Promise<PooledConnection>;
  release(connection: PooledConnection): void;
  opened(): number;
  keepOpen(count: number): void;
  /** Refuses the waiting requests and closes every connection. */
  close(): void;
}

function createSlots(options: PoolOptions): Slots {
  const idle: PooledConnection[] = [];
  const all = new Set<PooledConnection>();
  const waiting: { give: (connection: PooledConnection) => void; refuse: (error: Error) => void }[] = [];
  let open = 0;
  let opened = 0;
  let keep = 0;
  // A new connection resumes the last TLS session instead of a full handshake.
  let session: Buffer | undefined;
  // An IP address is no server name (RFC 6066): the certificate is then checked against the IP.
  const servername = options.tls.servername ?? (isIP(options.hostname) === 0 ? options.hostname : undefined);
  // Made once: from `ca`, `cert` and `key`, connect() would parse them again for every connection
  // (about 0.25 ms each, on the path of the first writes after the pool has gone idle).
  const { ca, cert, key, rejectUnauthorized } = options.tls;
  const secureContext = createSecureContext({ ca, cert, key });

  function onClose(connection: PooledConnection): void {
    open--;
    all.delete(connection);
    const at = idle.indexOf(connection);
    if (at >= 0) idle.splice(at, 1);
    // Its slot is free: the next waiting request gets a new connection.
    const next = waiting.shift();
    if (next !== undefined) next.give(dial());
  }

  function dial(): PooledConnection {
    open++;
    const socket = connect({ secureContext, rejectUnauthorized, host: options.hostname, port: options.port, ...(servername ? { servername } : {}), ...(session ? { session } : {}) });
    socket.once('secureConnect', () => {
      opened++;
      options.onConnection?.();
    });
    socket.on('session', (ticket: Buffer) => (session = ticket));
    const connection = new PooledConnection(socket, onClose);
    all.add(connection);
    return connection;
  }

  function release(connection: PooledConnection): void {
    if (connection.socket.destroyed) return;
    const next = waiting.shift();
    if (next !== undefined) return next.give(connection);
    const kept = open <= keep;
    connection.idle(kept ? options.keepAlive.everyMs : options.idleMs, () => expired(connection));
    idle.push(connection);
  }

  /** Its idle time is over: a kept connection tells the server it is in use, any other closes. */
  function expired(connection: PooledConnection): void {
    const at = idle.indexOf(connection);
    if (open > keep || at < 0) {
      connection.socket.destroy();
      return;
    }
    // Out of the idle list: no request takes it while it is asked.
    idle.splice(at, 1);
    ask(connection);
  }

  /** Sends the keep-alive request over `connection`, which goes back to the idle ones once answered. */
  function ask(connection: PooledConnection): void {
    options.keepAlive
      .request()
      .then((request) => exchange(() => Promise.resolve(connection), release, request, requestHead(request, options.host)))
      // Failed, the connection is closed (by the exchange, or here when nothing could be asked): a
      // request opens another when it needs one.
      .catch(() => connection.socket.destroy());
  }

  return {
    acquire: () => {
      for (let reused = idle.pop(); reused !== undefined; reused = idle.pop()) {
        if (reused.socket.destroyed) continue;
        reused.stopIdle();
        return Promise.resolve(reused);
      }
      if (open < options.maxConnections) return Promise.resolve(dial());
      return new Promise((give, refuse) => waiting.push({ give, refuse }));
    },
    release,
    opened: () => opened,
    keepOpen: (count) => {
      keep = Math.min(count, options.maxConnections);
      // Opened now and asked once, so that the first writes of a burst find them ready on both
      // ends; one that fails to connect just closes.
      while (open < keep) ask(dial());
    },
    close: () => {
      for (const waiter of waiting.splice(0)) waiter.refuse(closedError());
      for (const connection of all) connection.socket.destroy();
    },
  };
}

/** One request over the connection `acquire` gives: settled by its answer, the connection's failure or the deadline. */
function exchange(acquire: () => Promise<PooledConnection>, release: (connection: PooledConnection) => void, request: PoolRequest, bytes: string | Buffer): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let connection: PooledConnection | undefined;
    let done = false;
    const finish = (outcome: Outcome): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if ('response' in outcome) resolve(outcome.response);
      else reject(outcome.error);
    };
    const timer = setTimeout(() => {
      finish({ error: new DeadlineExceeded(`${request.method} ${request.path}: no answer within ${request.timeoutMs} ms`) });
      // The connection is in an unknown state mid-answer: it goes, and its slot with it.
      connection?.socket.destroy();
    }, request.timeoutMs);
    acquire().then((given) => {
      connection = given;
      if (done) return release(given);
      given.exchange = {
        reader: new ResponseReader(request.method === 'HEAD'),
        settle: (outcome) => {
          finish(outcome);
          release(given);
        },
      };
      given.socket.write(bytes);
    }, (error: unknown) => finish({ error: asError(error) }));
  });
}

export function createConnectionPool(options: PoolOptions): ConnectionPool {
  const slots = createSlots(options);
  let closed = false;
  return {
    send: (request) => {
      if (closed) return Promise.reject(closedError());
      const head = requestHead(request, options.host);
      const { body } = request;
      const bytes = body === undefined ? head : typeof body === 'string' ? head + body : Buffer.concat([Buffer.from(head), body]);
      return exchange(() => slots.acquire(), (connection) => slots.release(connection), request, bytes);
    },
    opened: () => slots.opened(),
    keepOpen: (count) => {
      if (!closed) slots.keepOpen(count);
    },
    close: () => {
      closed = true;
      slots.close();
    },
  };
}
