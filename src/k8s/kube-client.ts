// The one HTTP client of the process: requests (JSON, or the bytes a caller encoded) and watch streams to the API server over
// kept-alive TLS connections. Requests share a bounded pool of our own (a burst of writes queues
// for a free connection instead of opening one per request); each watch holds a node:https
// connection for as long as it runs, and a finished watch hands it to the next one.
import type { ClientRequest, IncomingMessage } from 'node:http';
import { Agent, request, type RequestOptions } from 'node:https';
import type { Socket } from 'node:net';
import { createConnectionPool } from './connection-pool.js';
import type { Connection } from './kube-config.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface CallOptions {
  query?: Query;
  /** Sent as JSON; a Buffer is sent as it is (name its `contentType`). */
  body?: unknown;
  /** Default application/json; patches name their type. */
  contentType?: string;
  /** Overrides the client's request timeout. */
  timeoutMs?: number;
  /** Default application/json; a metadata-only read asks for PartialObjectMetadata. */
  accept?: string;
  /** Reads an answer the `accept` allows other than JSON; undefined when the body is JSON after all. */
  decode?: (body: Buffer) => unknown;
}

/** An answer other than 2xx; `body` is the API server's Status (parsed), or its raw text. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly body: unknown,
  ) {
    const message = (body as { message?: unknown } | null)?.message;
    super(typeof message === 'string' ? message : `HTTP ${code}`);
  }
}

export interface WatchStream {
  stop(): void;
}

export interface KubeClient {
  request<T>(method: string, path: string, options?: CallOptions): Promise<T>;
  /** GET with `watch=true`: one call per decoded line (JSON.parse unless `decode` is given); `onDone` once, with the error if it failed. */
  watch(
    path: string,
    query: Query,
    onObject: (object: unknown) => void,
    onDone: (error?: unknown) => void,
    decode?: (line: string) => unknown,
    accept?: string,
  ): Promise<WatchStream>;
  /** TLS connections opened so far (requests and watches). */
  connectionsOpened(): number;
  /**
   * Keeps `count` request connections open while idle, opening the missing ones now (a leader's
   * writers: a rare template change then finds them ready); 0 lets idle ones close again.
   */
  keepOpen(count: number): void;
  close(): void;
}

export interface KubeClientOptions {
  /** Connections requests may hold at once; more requests wait for a free one. */
  maxConnections: number;
  /** A request that has not answered by then is aborted (transient). */
  timeoutMs: number;
  /** Called when a TLS connection is opened (metrics). */
  onConnection?: () => void;
  /** How long an idle request connection stays open (default 30 s). */
  idleMs?: number;
  /** How often a connection kept open asks for the server's version while idle (default 60 s). */
  keepAliveMs?: number;
}

/**
 * Names the product to the API server: its audit log and a written object's managedFields say
 * "resource-distributor" (the field manager is the User-Agent up to its first "/"), not "unknown".
 */
const USER_AGENT = 'resource-distributor';

// Idle kept-alive connections are closed before the API server's own idle timeout (90 s) could
// close one under a request that is just being sent; those kept open send a request well before it.
const IDLE_SOCKET_MS = 30_000;
const KEEP_ALIVE_MS = 60_000;

function encodeQuery(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', reject);
  });
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Splits a stream into lines. Only the newest chunk is searched for a newline: an event of
 * megabytes arrives in hundreds of chunks, and searching the text gathered so far each time
 * would cost time quadratic in its size.
 */
export function lineReader(onLine: (line: string) => void): (chunk: string) => void {
  let pieces: string[] = [];
  return (chunk) => {
    let start = 0;
    let end = chunk.indexOf('\n');
    while (end >= 0) {
      pieces.push(chunk.slice(start, end));
      const line = pieces.join('').trim();
      pieces = [];
      if (line !== '') onLine(line);
      start = end + 1;
      end = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) pieces.push(chunk.slice(start));
  };
}

/** Feeds a sent watch request's events to `onObject` as they arrive; `onDone` once, however it ends. */
function followWatch(req: ClientRequest, onObject: (object: unknown) => void, onDone: (error?: unknown) => void, decode: (line: string) => unknown): WatchStream {
  let done = false;
  const finish = (error?: unknown): void => {
    if (done) return;
    done = true;
    onDone(error);
  };
  req.on('error', (error) => finish(error));
  req.on('response', (response) => {
    const status = response.statusCode ?? 0;
    if (status !== 200) {
      readBody(response).then((text) => finish(new ApiError(status, parseOrText(text))), finish);
      return;
    }
    response.setEncoding('utf8');
    const feed = lineReader((line) => {
      if (!done) onObject(decode(line));
    });
    response.on('data', (chunk: string) => {
      try {
        feed(chunk);
      } catch (error) {
        req.destroy();
        finish(error);
      }
    });
    response.on('end', () => finish());
    response.on('error', (error) => finish(error));
    response.on('aborted', () => finish(new Error('watch connection aborted')));
  });
  return {
    stop: () => {
      done = true;
      req.destroy();
    },
  };
}

export function createKubeClient(connection: Connection, options: KubeClientOptions): KubeClient {
  const tls = {
    ca: connection.ca,
    cert: connection.cert,
    key: connection.key,
    rejectUnauthorized: !connection.insecure,
    ...(connection.servername ? { servername: connection.servername } : {}),
  };
  const base = new URL(connection.server);
  const hostname = base.hostname.replace(/^\[|\]$/g, '');
  const port = Number(base.port || 443);
  const prefix = base.pathname.replace(/\/$/, '');
  const requests = createConnectionPool({
    host: base.host,
    hostname,
    port,
    tls,
    maxConnections: options.maxConnections,
    idleMs: options.idleMs ?? IDLE_SOCKET_MS,
    // The cheapest authenticated answer the API server has, and one audit policies commonly leave out.
    keepAlive: { everyMs: options.keepAliveMs ?? KEEP_ALIVE_MS, request: async () => ({ method: 'GET', path: `${prefix}/version`, headers: await headersFor({}), timeoutMs: options.timeoutMs }) },
    onConnection: options.onConnection,
  });
  const watches = new Agent({ ...tls, keepAlive: true, scheduling: 'lifo' });
  let watchConnections = 0;
  const known = new WeakSet<Socket>();
  const countConnection = (socket: Socket): void => {
    if (known.has(socket)) return;
    known.add(socket);
    socket.once('secureConnect', () => {
      watchConnections++;
      options.onConnection?.();
    });
  };

  async function headersFor(call: CallOptions): Promise<Record<string, string>> {
    const headers: Record<string, string> = { Accept: call.accept ?? 'application/json', 'User-Agent': USER_AGENT };
    const authorization = await connection.authorization();
    if (authorization !== undefined) headers.Authorization = authorization;
    if (call.body !== undefined) headers['Content-Type'] = call.contentType ?? 'application/json';
    return headers;
  }

  return {
    async request<T>(method: string, path: string, call: CallOptions = {}): Promise<T> {
      const headers = await headersFor(call);
      const body = call.body === undefined || Buffer.isBuffer(call.body) ? call.body : JSON.stringify(call.body);
      const timeoutMs = call.timeoutMs ?? options.timeoutMs;
      const response = await requests.send({ method, path: `${prefix}${path}${encodeQuery(call.query)}`, headers, body, timeoutMs });
      const bytes = Buffer.concat(response.body);
      const parsed = call.decode?.(bytes) ?? parseOrText(bytes.toString('utf8'));
      if (response.status >= 200 && response.status < 300) return parsed as T;
      throw new ApiError(response.status, parsed);
    },

    async watch(path, query, onObject, onDone, decode = (line: string): unknown => JSON.parse(line), accept) {
      const requestOptions: RequestOptions = {
        agent: watches,
        method: 'GET',
        hostname,
        port,
        path: `${prefix}${path}${encodeQuery({ ...query, watch: true })}`,
        headers: await headersFor(accept === undefined ? {} : { accept }),
      };
      const req = request(requestOptions);
      req.on('socket', countConnection);
      req.end();
      return followWatch(req, onObject, onDone, decode);
    },

    connectionsOpened: () => requests.opened() + watchConnections,
    keepOpen: (count) => requests.keepOpen(count),
    close: () => {
      requests.close();
      watches.destroy();
    },
  };
}
