import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { generate } from 'selfsigned';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DeadlineExceeded } from '../../../src/k8s/deadline.js';
import { describeApiError, TransientError } from '../../../src/k8s/errors.js';
import { ApiError, createKubeClient, lineReader, type CallOptions, type KubeClient, type KubeClientOptions, type WatchStream } from '../../../src/k8s/kube-client.js';
import type { Connection } from '../../../src/k8s/kube-config.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface TestServer {
  port: number;
  server: Server;
  /** TLS handshakes the server completed: the client's count must agree with it. */
  handshakes(): number;
}

let pems: { cert: string; key: string };
const servers: Server[] = [];
const clients: KubeClient[] = [];

beforeAll(async () => {
  const generated = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    algorithm: 'sha256',
    keySize: 2048,
    // Passing extensions drops selfsigned's default SAN: name the loopback IPs the client dials, and
    // a DNS name only reachable through tls-server-name.
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }, { type: 2, value: 'api.internal' }] }],
  });
  pems = { cert: generated.cert, key: generated.private };
}, 30_000);

afterEach(async () => {
  for (const kube of clients.splice(0)) kube.close();
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          // Hanging requests and held watches would otherwise keep close() waiting.
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

async function serve(handler: Handler, options: { requestCert?: boolean; host?: string } = {}): Promise<TestServer> {
  const server = createServer({ key: pems.key, cert: pems.cert, ...(options.requestCert ? { requestCert: true, ca: pems.cert } : {}) }, handler);
  let handshakes = 0;
  server.on('secureConnection', () => handshakes++);
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', resolve);
  });
  return { port: (server.address() as AddressInfo).port, server, handshakes: () => handshakes };
}

function connectionTo(port: number, overrides: Partial<Connection> = {}): Connection {
  return { server: `https://127.0.0.1:${port}`, ca: Buffer.from(pems.cert), insecure: false, authorization: () => Promise.resolve('Bearer t'), ...overrides };
}

function client(port: number, options: Partial<KubeClientOptions> = {}, connection: Partial<Connection> = {}): KubeClient {
  const created = createKubeClient(connectionTo(port, connection), { maxConnections: 4, timeoutMs: 10_000, ...options });
  clients.push(created);
  return created;
}

function readAll(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

interface Echo {
  method: string;
  url: string;
  accept?: string;
  authorization?: string;
  contentType: string | null;
  contentLength: string | null;
  body: string;
}

/** Answers with what it received. */
const echo: Handler = (req, res) => {
  void readAll(req).then((body) => {
    const echoed: Echo = {
      method: req.method ?? '',
      url: req.url ?? '',
      accept: req.headers.accept,
      authorization: req.headers.authorization,
      // null, not undefined: the echo travels as JSON.
      contentType: req.headers['content-type'] ?? null,
      contentLength: req.headers['content-length'] ?? null,
      body,
    };
    json(res, 200, echoed);
  });
};

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function refusedPort(): Promise<number> {
  const probe = createNetServer();
  return new Promise((resolve) => {
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function status(code: number, reason: string, message: string): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

describe('connection reuse', () => {
  it('serves 200 sequential and concurrent requests over at most maxConnections TLS connections', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const server = await serve((req, res) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // Holding each answer briefly lets concurrent requests pile up on the server.
      setTimeout(() => {
        inFlight--;
        json(res, 200, { url: req.url });
      }, 2);
    });
    const onConnection = vi.fn();
    const kube = client(server.port, { maxConnections: 4, onConnection });

    // Without keep-alive each of these would open a connection of its own.
    for (let i = 0; i < 100; i++) expect(await kube.request('GET', `/api/v1/namespaces/seq-${i}`)).toEqual({ url: `/api/v1/namespaces/seq-${i}` });
    expect(kube.connectionsOpened()).toBe(1);

    // Without a bound on the pool a burst would open one connection per request.
    const burst = await Promise.all(Array.from({ length: 100 }, (_, i) => kube.request<{ url: string }>('GET', `/api/v1/namespaces/burst-${i}`)));
    expect(burst.map((answer) => answer.url)).toEqual(Array.from({ length: 100 }, (_, i) => `/api/v1/namespaces/burst-${i}`));

    expect(kube.connectionsOpened()).toBeLessThanOrEqual(4);
    expect(kube.connectionsOpened()).toBeGreaterThan(1);
    expect(server.handshakes()).toBe(kube.connectionsOpened());
    expect(onConnection).toHaveBeenCalledTimes(kube.connectionsOpened());
    expect(maxInFlight).toBeLessThanOrEqual(4);
  });
});

describe('connections kept open', () => {
  /** Polls until `check` holds (a connection's handshake completes on the server a moment after keepOpen). */
  async function until(check: () => boolean): Promise<void> {
    for (let waited = 0; !check(); waited += 10) {
      if (waited > 5_000) throw new Error('not reached within 5 s');
      await sleep(10);
    }
  }

  it("stay open past the server's idle timeout by asking for its version, and a burst then opens none", async () => {
    const asked: { url?: string; authorization?: string; agent?: string }[] = [];
    const server = await serve((req, res) => {
      if (req.url === '/version') asked.push({ url: req.url, authorization: req.headers.authorization, agent: req.headers['user-agent'] });
      // Held a moment: the burst's requests overlap and need every connection.
      setTimeout(() => json(res, 200, { url: req.url }), req.url === '/version' ? 0 : 20);
    });
    // The server closes a connection idle for 600 ms: without the asking, every one would be gone.
    server.server.keepAliveTimeout = 600;
    const kube = client(server.port, { maxConnections: 4, idleMs: 50, keepAliveMs: 150 });

    kube.keepOpen(3);
    await until(() => server.handshakes() === 3 && asked.length >= 3);
    await sleep(1_500);
    expect(server.handshakes()).toBe(3);
    // Asked once when opened, then about every 150 ms each.
    expect(asked.length).toBeGreaterThanOrEqual(3 * 4);
    expect(asked.every((request) => request.authorization === 'Bearer t' && request.agent === 'resource-distributor')).toBe(true);

    const burst = await Promise.all(['a', 'b', 'c'].map((name) => kube.request<{ url: string }>('GET', `/api/v1/namespaces/${name}`)));
    expect(burst.map((answer) => answer.url)).toEqual(['/api/v1/namespaces/a', '/api/v1/namespaces/b', '/api/v1/namespaces/c']);
    expect(server.handshakes()).toBe(3);
    expect(kube.connectionsOpened()).toBe(3);
  });

  it('are no more than maxConnections, and close after the idle time once no longer kept', async () => {
    const server = await serve((req, res) => json(res, 200, { url: req.url }));
    const kube = client(server.port, { maxConnections: 2, idleMs: 50, keepAliveMs: 100 });
    kube.keepOpen(10);
    await until(() => server.handshakes() === 2);
    await sleep(300);
    expect(server.handshakes()).toBe(2);

    kube.keepOpen(0);
    await sleep(300);
    // Both closed: the next request opens a connection of its own.
    expect(await kube.request('GET', '/api/v1/namespaces/a')).toEqual({ url: '/api/v1/namespaces/a' });
    expect(server.handshakes()).toBe(3);
  });

  it('that cannot be opened leave nothing behind, and a request still tries its own', async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const kube = client(port, { maxConnections: 2, idleMs: 50, keepAliveMs: 50 });
    kube.keepOpen(2);
    await sleep(200);
    expect(kube.connectionsOpened()).toBe(0);
    await expect(kube.request('GET', '/api/v1/namespaces/a')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('the connection of a request', () => {
  it.each<[string, Handler]>([
    ['answers with Connection: close', (req, res) => res.writeHead(200, { 'Content-Type': 'application/json', Connection: 'close' }).end(JSON.stringify({ url: req.url }))],
    ['ends its answer by closing the connection (no length, not chunked)', (req, res) => {
      res.useChunkedEncodingByDefault = false;
      res.shouldKeepAlive = false;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(JSON.stringify({ url: req.url }));
      res.end();
    }],
  ])('is not used again once the server %s', async (_, handler) => {
    const server = await serve(handler);
    const kube = client(server.port, { maxConnections: 1 });
    for (const name of ['a', 'b', 'c']) expect(await kube.request('GET', `/api/v1/namespaces/${name}`)).toEqual({ url: `/api/v1/namespaces/${name}` });
    expect(kube.connectionsOpened()).toBe(3);
  });

  it('opens a new connection once the server closed an idle one, without an error', async () => {
    const server = await serve((req, res) => json(res, 200, { url: req.url }));
    const kube = client(server.port, { maxConnections: 1 });
    expect(await kube.request('GET', '/api/v1/namespaces/a')).toEqual({ url: '/api/v1/namespaces/a' });
    server.server.closeIdleConnections();
    await sleep(100);
    expect(await kube.request('GET', '/api/v1/namespaces/b')).toEqual({ url: '/api/v1/namespaces/b' });
    expect(kube.connectionsOpened()).toBe(2);
  });

  it('reads a chunked answer of many MiB', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ metadata: { name: `cm-${i}`, annotations: { note: 'héllo ✓ '.repeat(20) } } }));
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      // Written in pieces: Node sends them as chunks.
      res.write('{"items":[');
      items.forEach((item, i) => res.write(`${i === 0 ? '' : ','}${JSON.stringify(item)}`));
      res.end(']}');
    });
    const answer = await client(server.port).request<{ items: unknown[] }>('GET', '/api/v1/configmaps');
    expect(answer.items).toEqual(items);
  });

  it('refuses a path that would need escaping, before anything is sent', async () => {
    let requests = 0;
    const server = await serve((_req, res) => {
      requests++;
      json(res, 200, {});
    });
    await expect(client(server.port).request('GET', '/api/v1/namespaces/a b')).rejects.toThrow(/characters that must be escaped/);
    expect(requests).toBe(0);
  });

  it('fails the requests in flight and those waiting for a connection when closed, as transient', async () => {
    const server = await serve(() => {});
    const kube = client(server.port, { maxConnections: 1 });
    const calls = ['/hang-1', '/hang-2'].map((path) => kube.request('GET', path).catch((e: unknown) => e));
    await sleep(100);
    kube.close();
    for (const error of await Promise.all(calls)) expect(describeApiError(error)).toMatchObject({ code: 0, reason: 'ECONNRESET', transient: true });
    await expect(kube.request('GET', '/after')).rejects.toMatchObject({ code: 'ECONNRESET' });
  });
});

describe('TLS', () => {
  it.each<[string, Partial<Connection>, string | undefined]>([
    ['the given CA, the server addressed by its IP', {}, undefined],
    ['tls-server-name naming a DNS name of the certificate', { servername: 'api.internal' }, undefined],
    ['tls-server-name the certificate does not name', { servername: 'other.internal' }, 'ERR_TLS_CERT_ALTNAME_INVALID'],
    ['no CA: the self-signed certificate is not trusted', { ca: undefined }, 'DEPTH_ZERO_SELF_SIGNED_CERT'],
    ['no CA but insecure-skip-tls-verify', { ca: undefined, insecure: true }, undefined],
  ])('verifies the server with %s', async (_, connection, failure) => {
    const server = await serve(echo);
    const call = client(server.port, {}, connection).request('GET', '/version');
    if (failure === undefined) await expect(call).resolves.toMatchObject({ url: '/version' });
    else await expect(call).rejects.toMatchObject({ code: failure });
  });

  it('dials an IPv6 server, whose URL host is bracketed', async ({ skip }) => {
    const server = await serve(echo, { host: '::1' }).catch(() => undefined);
    if (!server) return skip('no IPv6 loopback here');
    const call = client(server.port, {}, { server: `https://[::1]:${server.port}` }).request('GET', '/version');
    await expect(call).resolves.toMatchObject({ url: '/version' });
  });

  it.each<[string, boolean]>([
    ['presents its client certificate', true],
    ['is refused without one', false],
  ])('%s to a server that requires one', async (_, withCertificate) => {
    const server = await serve((req, res) => json(res, 200, { authorized: (req.socket as { authorized?: boolean }).authorized }), { requestCert: true });
    // The self-signed pair doubles as the client's: the server trusts it as its CA.
    const connection = withCertificate ? { cert: Buffer.from(pems.cert), key: Buffer.from(pems.key) } : {};
    const call = client(server.port, {}, connection).request('GET', '/version');
    if (withCertificate) await expect(call).resolves.toEqual({ authorized: true });
    else await expect(call).rejects.toThrow();
  });
});

describe('requests', () => {
  it('sends the Authorization header of the moment, and the User-Agent, on every request and watch', async () => {
    const seen: (string | undefined)[] = [];
    const agents = new Set<string | undefined>();
    const server = await serve((req, res) => {
      seen.push(req.headers.authorization);
      agents.add(req.headers['user-agent']);
      if (req.url?.includes('watch=true')) res.writeHead(200).end();
      else json(res, 200, {});
    });
    let token: string | undefined = 'one';
    const kube = client(server.port, {}, { authorization: () => Promise.resolve(token === undefined ? undefined : `Bearer ${token}`) });

    await kube.request('GET', '/a');
    await kube.request('GET', '/b');
    token = 'two';
    await kube.request('GET', '/c');
    await new Promise((resolve) => void kube.watch('/w', {}, () => {}, resolve));
    token = undefined;
    await kube.request('GET', '/d');

    expect(seen).toEqual(['Bearer one', 'Bearer one', 'Bearer two', 'Bearer two', undefined]);
    expect([...agents]).toEqual(['resource-distributor']);
  });

  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'team-a' }, stringData: { note: 'héllo ✓' } };

  it.each<[string, string, string, CallOptions, Partial<Echo> & { json?: unknown }]>([
    [
      'a query: values encoded, undefined ones dropped',
      'GET',
      '/api/v1/secrets',
      { query: { labelSelector: 'app in (a,b)', fieldSelector: 'metadata.name=x&y', limit: 500, allowWatchBookmarks: true, continue: undefined } },
      { url: '/api/v1/secrets?labelSelector=app+in+%28a%2Cb%29&fieldSelector=metadata.name%3Dx%26y&limit=500&allowWatchBookmarks=true', contentType: null, body: '' },
    ],
    ['no "?" when every query value is undefined', 'GET', '/api/v1/namespaces/a', { query: { continue: undefined } }, { url: '/api/v1/namespaces/a' }],
    [
      // Content-Length counts bytes: a character count would cut the multi-byte body short.
      'a JSON body, application/json by default',
      'POST',
      '/api/v1/namespaces/team-a/secrets',
      { body: secret, query: { fieldManager: 'resource-distributor' } },
      {
        url: '/api/v1/namespaces/team-a/secrets?fieldManager=resource-distributor',
        contentType: 'application/json',
        contentLength: String(Buffer.byteLength(JSON.stringify(secret))),
        json: secret,
      },
    ],
    [
      'a patch with its own content type',
      'PATCH',
      '/api/v1/namespaces/team-a/secrets/s',
      { body: { metadata: { labels: { a: null } } }, contentType: 'application/merge-patch+json' },
      { contentType: 'application/merge-patch+json', json: { metadata: { labels: { a: null } } } },
    ],
    ['a PUT', 'PUT', '/api/v1/namespaces/team-a/secrets/s', { body: secret }, { contentType: 'application/json', json: secret }],
    ['a DELETE without a body', 'DELETE', '/api/v1/namespaces/team-a/secrets/s', {}, { contentType: null, body: '' }],
  ])('%s', async (_, method, path, call, expected) => {
    const server = await serve(echo);
    const { json: expectedJson, ...fields } = expected;
    const answer = await client(server.port).request<Echo>(method, path, call);
    expect(answer).toMatchObject({ method, url: path, accept: 'application/json', authorization: 'Bearer t', ...fields });
    if (expectedJson !== undefined) expect(JSON.parse(answer.body)).toEqual(expectedJson);
  });

  it.each<[string, number]>([
    ['an answer', 201],
    ['an error', 409],
  ])('sends bytes as they are, and reads %s in the format it came in through `decode`', async (_, code) => {
    const bytes = Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0xff, 0x00, 0x80]);
    const received: { contentType?: string; accept?: string; body?: Buffer } = {};
    const server = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        Object.assign(received, { contentType: req.headers['content-type'], accept: req.headers.accept, body: Buffer.concat(chunks) });
        res.writeHead(code, { 'Content-Type': 'application/x-test' }).end(Buffer.from([1, 2, 3]));
      });
    });
    const call: CallOptions = {
      body: bytes,
      contentType: 'application/vnd.kubernetes.protobuf',
      accept: 'application/vnd.kubernetes.protobuf, application/json',
      decode: (body) => ({ code, reason: 'Decoded', message: 'read', bytes: [...body] }),
    };
    const outcome: unknown = await client(server.port)
      .request('POST', '/api/v1/namespaces/team-a/configmaps', call)
      .catch((e: unknown) => e);
    expect(received).toEqual({ contentType: 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf, application/json', body: bytes });
    const decoded = { code, reason: 'Decoded', message: 'read', bytes: [1, 2, 3] };
    if (code === 201) expect(outcome).toEqual(decoded);
    else expect(outcome).toMatchObject({ name: 'ApiError', code, body: decoded });
  });

  it('reads JSON when `decode` finds the answer is JSON after all', async () => {
    const server = await serve((_req, res) => json(res, 200, { kind: 'ConfigMap' }));
    const answer = await client(server.port).request('POST', '/x', { body: Buffer.from('k8s'), contentType: 'application/vnd.kubernetes.protobuf', decode: () => undefined });
    expect(answer).toEqual({ kind: 'ConfigMap' });
  });

  it("keeps the server URL's path as a prefix", async () => {
    const server = await serve(echo);
    const kube = client(server.port, {}, { server: `https://127.0.0.1:${server.port}/k8s/clusters/c-1` });
    expect(await kube.request('GET', '/api/v1/namespaces', { query: { limit: 1 } })).toMatchObject({ url: '/k8s/clusters/c-1/api/v1/namespaces?limit=1' });
  });

  it.each<[string, number, string, unknown, { reason: string; message: string; transient: boolean }]>([
    ['404 NotFound', 404, 'json', status(404, 'NotFound', 'secrets "s" not found'), { reason: 'NotFound', message: 'secrets "s" not found', transient: false }],
    ['409 AlreadyExists', 409, 'json', status(409, 'AlreadyExists', 'secrets "s" already exists'), { reason: 'AlreadyExists', message: 'secrets "s" already exists', transient: true }],
    ['409 Conflict', 409, 'json', status(409, 'Conflict', 'the object has been modified'), { reason: 'Conflict', message: 'the object has been modified', transient: true }],
    ['403 Forbidden', 403, 'json', status(403, 'Forbidden', 'secrets is forbidden'), { reason: 'Forbidden', message: 'secrets is forbidden', transient: false }],
    ['422 Invalid', 422, 'json', status(422, 'Invalid', 'Secret "s" is invalid'), { reason: 'Invalid', message: 'Secret "s" is invalid', transient: false }],
    ['500 InternalError', 500, 'json', status(500, 'InternalError', 'etcdserver: leader changed'), { reason: 'InternalError', message: 'etcdserver: leader changed', transient: true }],
    // A proxy in front of the API server answers in its own words.
    ['503 with a text body', 503, 'text', 'upstream connect error', { reason: 'HTTP503', message: 'HTTP 503', transient: true }],
  ])('rejects %s with an ApiError describeApiError understands', async (_, code, kind, body, described) => {
    const server = await serve((_req, res) => {
      if (kind === 'json') json(res, code, body);
      else res.writeHead(code, { 'Content-Type': 'text/plain' }).end(body as string);
    });
    const error: unknown = await client(server.port)
      .request('DELETE', '/api/v1/namespaces/team-a/secrets/s')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code, body, message: described.message });
    expect(describeApiError(error)).toEqual({ code, ...described });
  });

  const silent: Handler = () => {};
  const stalling: Handler = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"items":[');
  };

  it.each<[string, Handler, Partial<KubeClientOptions>, CallOptions]>([
    ["never answers, after the client's timeoutMs", silent, { timeoutMs: 150 }, {}],
    ["never answers, after the call's own timeoutMs", silent, { timeoutMs: 60_000 }, { timeoutMs: 150 }],
    // The deadline covers the whole answer, not only its headers.
    ['stops in the middle of the body', stalling, { timeoutMs: 150 }, {}],
  ])('gives up on a server that %s', async (_, handler, options, call) => {
    const server = await serve(handler);
    const started = performance.now();
    const error: unknown = await client(server.port, options)
      .request('GET', '/api/v1/namespaces', call)
      .catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect(error).toBeInstanceOf(TransientError);
    expect(describeApiError(error).transient).toBe(true);
    // Generous: only "it waited for the deadline, and not for the 60 s one".
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(5_000);
  });

  it('frees the connection of a timed-out request for the next one', async () => {
    const server = await serve((req, res) => {
      if (req.url !== '/hang') json(res, 200, { ok: true });
    });
    // One connection: if a timed-out request kept it, the last request would queue forever (and time out).
    const kube = client(server.port, { maxConnections: 1, timeoutMs: 150 });
    await expect(kube.request('GET', '/hang')).rejects.toBeInstanceOf(DeadlineExceeded);
    await expect(kube.request('GET', '/hang')).rejects.toBeInstanceOf(DeadlineExceeded);
    expect(await kube.request('GET', '/ok')).toEqual({ ok: true });
  });

  it.each<[string, (kube: KubeClient) => Promise<unknown>]>([
    ['a request', (kube) => kube.request('GET', '/api').then(() => undefined, (e: unknown) => e)],
    ['a watch', (kube) => new Promise((resolve) => void kube.watch('/api/v1/namespaces', {}, () => {}, resolve))],
  ])('reports a refused connection for %s as transient ECONNREFUSED', async (_, attempt) => {
    const error = await attempt(client(await refusedPort()));
    expect(describeApiError(error)).toMatchObject({ code: 0, reason: 'ECONNREFUSED', transient: true });
  });
});

describe('watch', () => {
  const events = [
    { type: 'ADDED', object: { kind: 'Secret', metadata: { name: 'a', resourceVersion: '11' } } },
    { type: 'MODIFIED', object: { kind: 'Secret', metadata: { name: 'a', resourceVersion: '12', annotations: { note: 'héllo ✓' } } } },
    { type: 'BOOKMARK', object: { kind: 'Secret', metadata: { resourceVersion: '13' } } },
    { type: 'DELETED', object: { kind: 'Secret', metadata: { name: 'a', resourceVersion: '14' } } },
  ];
  const lines = events.map((event) => JSON.stringify(event));
  const stream = Buffer.from(lines.map((line) => `${line}\n`).join(''));

  /** Cuts `bytes` at the given offsets. */
  function cut(bytes: Buffer, offsets: number[]): Buffer[] {
    const bounds = [0, ...offsets, bytes.length];
    return bounds.slice(1).map((end, i) => bytes.subarray(bounds[i], end));
  }
  const lineStarts = lines.map((_, i) => lines.slice(0, i).reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0));
  const checkmark = stream.indexOf('✓');

  interface Watching {
    objects: unknown[];
    onDone: ReturnType<typeof vi.fn<(error?: unknown) => void>>;
    done: Promise<unknown>;
    stream: WatchStream;
  }

  async function watching(kube: KubeClient, path = '/api/v1/secrets', onObject?: (object: unknown) => void): Promise<Watching> {
    const objects: unknown[] = [];
    let settle: (error: unknown) => void = () => {};
    const done = new Promise<unknown>((resolve) => (settle = resolve));
    const onDone = vi.fn<(error?: unknown) => void>((error) => settle(error));
    const started = await kube.watch(
      path,
      { resourceVersion: '10', allowWatchBookmarks: true },
      (object) => {
        objects.push(object);
        onObject?.(object);
      },
      onDone,
    );
    return { objects, onDone, done, stream: started };
  }

  it.each<[string, Buffer[]]>([
    ['in one chunk', [stream]],
    ['each line cut in the middle of its object', cut(stream, lineStarts.map((start, i) => start + Math.floor(Buffer.byteLength(lines[i]!) / 2)))],
    ['with a newline arriving alone', cut(stream, [lineStarts[1]! - 1, lineStarts[1]!])],
    ['two and a half lines in one chunk', cut(stream, [lineStarts[2]! + 10])],
    ['a multi-byte character cut between chunks', cut(stream, [checkmark + 1, checkmark + 2])],
    ['byte by byte', cut(stream, Array.from({ length: stream.length - 1 }, (_, i) => i + 1))],
    // Empty lines carry nothing; they must not end the watch as unparseable.
    ['between blank lines', [Buffer.from(`\n${lines.join('\n\n')}\n\n`)]],
  ])('decodes JSON lines arriving %s, in order, then reports the end once', async (_, chunks) => {
    let url: string | undefined;
    const server = await serve((req, res) => {
      url = req.url;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      void (async () => {
        for (const chunk of chunks) {
          res.write(chunk);
          // Lets the client read each chunk before the next is written, so the cuts survive.
          await tick();
        }
        res.end();
      })();
    });
    const watch = await watching(client(server.port));

    expect(await watch.done).toBeUndefined();
    expect(watch.objects).toEqual(events);
    expect(url).toBe('/api/v1/secrets?resourceVersion=10&allowWatchBookmarks=true&watch=true');
    await sleep(20);
    expect(watch.onDone).toHaveBeenCalledTimes(1);
  });

  it.each<[string, number, unknown]>([
    ['410 Expired', 410, status(410, 'Expired', 'too old resource version: 10 (20)')],
    ['403 Forbidden', 403, status(403, 'Forbidden', 'secrets is forbidden')],
    ['502 with a text body', 502, 'Bad Gateway'],
  ])('reports a %s answer through onDone as an ApiError, without objects', async (_, code, body) => {
    const server = await serve((_req, res) => {
      if (typeof body === 'string') res.writeHead(code).end(body);
      else json(res, code, body);
    });
    const watch = await watching(client(server.port));

    const error = await watch.done;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code, body });
    expect(watch.objects).toEqual([]);
    await sleep(20);
    expect(watch.onDone).toHaveBeenCalledTimes(1);
  });

  it.each<[string, string]>([
    ['a connection lost mid-stream', `${lines[0]}\n${lines[1]!.slice(0, 20)}`],
    ['a line that is not JSON', `${lines[0]}\nnot json\n${lines[1]}\n`],
  ])('stops at %s and reports it once through onDone', async (_, written) => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.write(written);
      setTimeout(() => res.destroy(), 20);
    });
    const watch = await watching(client(server.port));

    expect(await watch.done).toBeInstanceOf(Error);
    // Nothing after the failure: not the partial line, not a line after the bad one.
    expect(watch.objects).toEqual([events[0]]);
    await sleep(50);
    expect(watch.onDone).toHaveBeenCalledTimes(1);
  });

  it.each<[string, boolean]>([
    ['before the server answered', false],
    ['after the first event', true],
  ])('stop() %s closes the connection and never calls onDone', async (_, afterFirstEvent) => {
    let received!: () => void;
    const requestReceived = new Promise<void>((resolve) => (received = resolve));
    let answered!: () => void;
    const firstEvent = new Promise<void>((resolve) => (answered = resolve));
    let serverSawClose!: () => void;
    const closed = new Promise<void>((resolve) => (serverSawClose = resolve));
    const server = await serve((_req, res) => {
      res.on('close', serverSawClose);
      received();
      if (!afterFirstEvent) return;
      res.writeHead(200);
      res.write(`${lines[0]}\n`);
    });
    const watch = await watching(client(server.port), '/api/v1/secrets', () => answered());
    // Waiting for the server to hold the request makes "the server saw the close" observable.
    await requestReceived;
    if (afterFirstEvent) await firstEvent;
    watch.stream.stop();

    await closed;
    await sleep(50);
    expect(watch.onDone).not.toHaveBeenCalled();
    expect(watch.objects).toEqual(afterFirstEvent ? [events[0]] : []);
  });

  it('delivers nothing more once onObject has called stop(), even lines already received', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      // One write: the lines after the first arrive in the chunk being decoded when stop() is called.
      res.write(stream);
    });
    // onObject only runs once the answer arrives, after watch() has handed out the stream.
    const running: { stream?: WatchStream } = {};
    const watch = await watching(client(server.port), '/api/v1/secrets', () => running.stream?.stop());
    running.stream = watch.stream;

    await vi.waitFor(() => expect(watch.objects).toHaveLength(1));
    await sleep(50);
    expect(watch.objects).toEqual([events[0]]);
    expect(watch.onDone).not.toHaveBeenCalled();
  });

  it('hands the connection of a finished watch to the next one', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200);
      res.end(`${lines[0]}\n`);
    });
    const kube = client(server.port);

    for (let i = 0; i < 3; i++) {
      const watch = await watching(kube);
      expect(await watch.done).toBeUndefined();
      expect(watch.objects).toEqual([events[0]]);
    }
    expect(kube.connectionsOpened()).toBe(1);
    expect(server.handshakes()).toBe(1);
  });

  it('gives each running watch its own connection, outside the request pool', async () => {
    const server = await serve((req, res) => {
      if (!req.url?.includes('watch=true')) return json(res, 200, { ok: true });
      res.writeHead(200);
      res.write(`${lines[0]}\n`);
    });
    const kube = client(server.port, { maxConnections: 1, timeoutMs: 2_000 });
    const first = new Promise<void>((resolve) => void watching(kube, '/api/v1/secrets', () => resolve()));
    const second = new Promise<void>((resolve) => void watching(kube, '/api/v1/configmaps', () => resolve()));
    await Promise.all([first, second]);

    // Both watches still hold their connections; the request pool is untouched by them.
    expect(await kube.request('GET', '/api/v1/namespaces')).toEqual({ ok: true });
    expect(kube.connectionsOpened()).toBe(3);
    expect(server.handshakes()).toBe(3);
  });
});

describe('lineReader', () => {
  const split = (chunks: string[]): string[] => {
    const lines: string[] = [];
    const feed = lineReader((line) => lines.push(line));
    for (const chunk of chunks) feed(chunk);
    return lines;
  };

  it.each([
    ['one line in one chunk', ['{"a":1}\n'], ['{"a":1}']],
    ['two lines in one chunk', ['{"a":1}\n{"b":2}\n'], ['{"a":1}', '{"b":2}']],
    ['a line cut in three', ['{"a"', ':', '1}\n'], ['{"a":1}']],
    ['the newline alone', ['{"a":1}', '\n'], ['{"a":1}']],
    ['a line ending where the next begins', ['{"a":1}\n{"b"', ':2}\n'], ['{"a":1}', '{"b":2}']],
    ['blank lines and carriage returns', ['\n\r\n{"a":1}\r\n', '\n'], ['{"a":1}']],
    ['an unfinished line is held', ['{"a":1}\n{"b":'], ['{"a":1}']],
  ])('%s', (_name, chunks, lines) => {
    expect(split(chunks)).toEqual(lines);
  });

  it('reassembles a 3 MiB event arriving in 16 KiB chunks', () => {
    const event = JSON.stringify({ type: 'MODIFIED', object: { data: { k: 'x'.repeat(3 * 1024 * 1024) } } });
    const stream = `${event}\n{"type":"BOOKMARK"}\n`;
    const chunks = Array.from({ length: Math.ceil(stream.length / 16_384) }, (_, i) => stream.slice(i * 16_384, (i + 1) * 16_384));
    expect(split(chunks)).toEqual([event, '{"type":"BOOKMARK"}']);
  });
});
