import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { KeptAliveConnection } from '../../bench/kept-alive.js';
import { isConflict } from '../../src/k8s/errors.js';
import { createCertificateAuthority, issueServingCert, type KeyAndCert } from '../control-plane/pki.js';

let ca: KeyAndCert;
let serving: KeyAndCert;
const servers: Server[] = [];
const connections: KeptAliveConnection[] = [];

beforeAll(async () => {
  ca = await createCertificateAuthority('bench-test-ca');
  serving = await issueServingCert(ca, '127.0.0.1');
}, 30_000);

afterEach(async () => {
  for (const connection of connections.splice(0)) connection.close();
  await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())))));
});

interface Seen {
  method: string;
  path: string;
  authorization: string;
  body: string;
  /** Which TLS connection (1, 2, ...) carried it. */
  connection: number;
}

/** A TLS server answering `answer(request)`, recording every request and the connection it came on. */
async function serve(answer: (seen: Seen) => { status: number; body: unknown; delayMs?: number }): Promise<{ seen: Seen[]; port: number }> {
  const seen: Seen[] = [];
  let handshakes = 0;
  const server = createServer({ key: serving.key, cert: serving.cert }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Seen = {
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
        connection: (req.socket as { connectionNumber?: number }).connectionNumber ?? 0,
      };
      seen.push(request);
      const { status, body, delayMs = 0 } = answer(request);
      setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)), delayMs);
    });
  });
  server.on('secureConnection', (socket) => Object.assign(socket, { connectionNumber: ++handshakes }));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { seen, port: (server.address() as AddressInfo).port };
}

async function open(port: number): Promise<KeptAliveConnection> {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca.cert).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'admin', token: 'secret-token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'admin' }],
    currentContext: 'test',
  });
  const connection = await KeptAliveConnection.open(kc);
  connections.push(connection);
  return connection;
}

describe('KeptAliveConnection: the timed request goes over the connection the read before it opened', () => {
  it('a read, then a replace: one TLS connection, authenticated as the kubeconfig says; the send is told before the answer', async () => {
    const { seen, port } = await serve((request) => ({ status: 200, body: { method: request.method, rv: String(seen.length) } }));
    const connection = await open(port);
    const read = await connection.get<{ rv: string }>('/apis/apps.kruise.io/v1alpha1/resourcedistributions/shared');
    let sent = false;
    const replaced = connection.put<{ method: string }>('/apis/apps.kruise.io/v1alpha1/resourcedistributions/shared', { spec: { a: 1 } }, () => (sent = true));
    const sentBeforeAnswer = sent;
    expect(read.rv).toBe('1');
    expect((await replaced).method).toBe('PUT');
    expect(sentBeforeAnswer).toBe(true);
    expect(seen.map(({ method, connection: on, authorization }) => [method, on, authorization])).toEqual([
      ['GET', 1, 'Bearer secret-token'],
      ['PUT', 1, 'Bearer secret-token'],
    ]);
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ spec: { a: 1 } });
  });

  it('requests sent at once each get a connection of their own (an update storm is not sent one at a time)', async () => {
    const { seen, port } = await serve(() => ({ status: 200, body: {}, delayMs: 100 }));
    const connection = await open(port);
    await Promise.all(['a', 'b', 'c'].map((name) => connection.put(`/api/v1/namespaces/x/configmaps/${name}`, {})));
    expect(new Set(seen.map((request) => request.connection)).size).toBe(3);
  });

  it.each([
    [409, { kind: 'Status', reason: 'Conflict', message: 'the object has been modified' }, true],
    [409, { kind: 'Status', reason: 'AlreadyExists', message: 'exists' }, false],
    [500, { kind: 'Status', reason: 'InternalError', message: 'failed calling webhook' }, false],
  ])('an answer %i (%o) fails the request; a conflict is told as one (the update retries): %s', async (status, body, conflict) => {
    const { port } = await serve(() => ({ status, body }));
    const connection = await open(port);
    const failure = await connection.put('/api/v1/namespaces/x/configmaps/a', {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(isConflict(failure)).toBe(conflict);
    expect(String((failure as { body?: unknown }).body)).toContain(body.message);
  });
});
