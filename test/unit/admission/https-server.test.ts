import { request as httpsRequest } from 'node:https';
import { connect } from 'node:tls';
import { Hono } from 'hono';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTION_LIMITS, startHttpsServer, type HttpsServer } from '../../../src/admission/https-server.js';
import { createLogger } from '../../../src/log.js';
import { certificateInfo, generateCa, generateServing, serviceIdentity, type KeyPair } from '../../../src/tls/certificates.js';
import { idleConnections } from '../../idle-connections.js';
import { base64, distribution } from '../builders.js';
import { review, testApp } from './review-builder.js';

const DAY = 86_400_000;
const log = createLogger({ level: 'silent' });
const identity = serviceIdentity('resource-distributor', 'resource-distributor', true);

async function issue(): Promise<{ ca: KeyPair; serving: KeyPair }> {
  const now = new Date();
  const ca = await generateCa(now, 10 * DAY);
  return { ca, serving: await generateServing(ca, identity, now, DAY) };
}

function presentedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

/** POSTs over the real socket in chunks, without a Content-Length: the body limit must be enforced while reading. */
function postChunked(port: number, ca: string, path: string, body: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, ca, servername: 'localhost', path, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    for (let i = 0; i < body.length; i += 512) req.write(body.slice(i, i + 512));
    req.end();
  });
}

let server: HttpsServer | undefined;
afterEach(async () => {
  await server?.close(1000);
  server = undefined;
});

describe('HTTPS listener', () => {
  it('serves the app over TLS and swaps certificates without a restart', async () => {
    const first = await issue();
    const { app } = testApp();
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: first.serving, log });
    const url = `https://127.0.0.1:${server.port}`;

    await request(url).get('/healthz').ca(first.ca.cert).expect(200, 'ok');
    expect(await presentedFingerprint(server.port, first.ca.cert)).toBe(certificateInfo(first.serving.cert).fingerprint);

    const second = await issue();
    server.setCertificate(second.serving);
    await request(url).get('/healthz').ca(second.ca.cert).expect(200, 'ok');
    expect(await presentedFingerprint(server.port, second.ca.cert)).toBe(certificateInfo(second.serving.cert).fingerprint);
    await expect(request(url).get('/healthz').ca(first.ca.cert)).rejects.toThrow();
  });

  it('lets an in-flight request finish when closing', async () => {
    const { ca, serving } = await issue();
    const app = new Hono();
    app.get('/slow', async (c) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return c.text('done');
    });
    const started = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log });
    const inFlight = request(`https://127.0.0.1:${started.port}`).get('/slow').ca(ca.cert);
    const response = inFlight.then((res) => res.text);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = started.close(5000);
    expect(await response).toBe('done');
    await closed;
    await expect(request(`https://127.0.0.1:${started.port}`).get('/slow').ca(ca.cert)).rejects.toThrow();
  });

  it('reads admission bodies from the socket, answering small ones and refusing streamed oversize ones with 413', async () => {
    const { ca, serving } = await issue();
    const { app } = testApp({ bodyLimitBytes: 2048 });
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log });

    const small = review().namespace('team-a').body() as { request: { uid: string } };
    const ok = await postChunked(server.port, ca.cert, '/generate/namespaces', JSON.stringify(small));
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ response: { uid: small.request.uid, allowed: true } });

    const big = review().distribution(distribution('big').secret('s').data({ k: base64('x'.repeat(8192)) }).build()).body();
    const refused = await postChunked(server.port, ca.cert, '/validate/resourcedistributions', JSON.stringify(big));
    expect(refused).toEqual({ status: 413, json: { message: 'body larger than 2048 bytes' } });
  });

  it('closes the connection after refusing a chunked oversize body, instead of leaving it hanging', async () => {
    const { ca, serving } = await issue();
    const { app } = testApp({ bodyLimitBytes: 2048 });
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log });
    const body = JSON.stringify(review().distribution(distribution('big').secret('s').data({ k: base64('x'.repeat(8192)) }).build()).body());
    const socket = connect({ host: '127.0.0.1', port: server.port, ca: ca.cert, servername: 'localhost' });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    const closed = new Promise<string>((resolve) => socket.on('close', () => resolve('closed')));
    await new Promise((resolve) => socket.once('secureConnect', resolve));
    socket.write('POST /validate/resourcedistributions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n');
    for (let i = 0; i < body.length; i += 512) {
      const part = body.slice(i, i + 512);
      socket.write(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
    }
    socket.write('0\r\n\r\n');
    const outcome = await Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 5000))]);
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(outcome).toBe('closed');
  });

  it('answers with Connection: close once draining, so that no kept-alive connection is reused', async () => {
    const { ca, serving } = await issue();
    const { app } = testApp();
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log });
    const get = (): Promise<string | undefined> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port: server!.port, ca: ca.cert, servername: 'localhost', path: '/healthz' }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers.connection));
        });
        req.on('error', reject);
        req.end();
      });
    expect(await get()).toBe('keep-alive');
    server.drain();
    expect(await get()).toBe('close');
  });
});

/** A TLS connection that completes its handshake and then sends nothing; resolves when the server closes it. */
function silentAfterHandshake(port: number, ca: string): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
    socket.on('error', reject);
    socket.resume();
    socket.on('close', () => resolve(Date.now() - started));
  });
}

describe('HTTPS listener: connections that send no request', () => {
  const limits = { maxConnections: 20, handshakeTimeoutMs: 400, headersTimeoutMs: 600 };

  it('closes connections that never start TLS after the handshake timeout, while requests are served', async () => {
    const { ca, serving } = await issue();
    const { app } = testApp();
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log, limits });
    const idle = idleConnections(server.port, 10);
    await request(`https://127.0.0.1:${server.port}`).get('/healthz').ca(ca.cert).expect(200, 'ok');
    const closedAfter = await idle.closed;
    for (const ms of closedAfter) expect(ms).toBeGreaterThanOrEqual(limits.handshakeTimeoutMs - 50);
    expect(Math.max(...closedAfter)).toBeLessThan(limits.handshakeTimeoutMs + 1500);
  });

  it('closes a connection that completes TLS and then sends no request after the headers timeout', async () => {
    const { ca, serving } = await issue();
    const { app } = testApp();
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log, limits });
    const closedAfter = await silentAfterHandshake(server.port, ca.cert);
    expect(closedAfter).toBeGreaterThanOrEqual(limits.headersTimeoutMs - 50);
    expect(closedAfter).toBeLessThan(limits.headersTimeoutMs + 1500);
  });

  it('refuses connections beyond the cap at once and counts them; once the idle ones are closed, requests are served again', async () => {
    const { ca, serving } = await issue();
    const { app } = testApp();
    let dropped = 0;
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log, limits, onDropped: () => dropped++ });
    const held = idleConnections(server.port, limits.maxConnections);
    await Promise.all(held.sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const beyond = idleConnections(server.port, 30);
    const refusedAfter = await beyond.closed;
    expect(Math.max(...refusedAfter)).toBeLessThan(limits.handshakeTimeoutMs);
    expect(dropped).toBe(30);

    await held.closed;
    await request(`https://127.0.0.1:${server.port}`).get('/healthz').ca(ca.cert).expect(200, 'ok');
  });

  it('by default, holds 1,000 connections at most (each for the 10 s handshake timeout, not two minutes)', async () => {
    const { serving } = await issue();
    const { app } = testApp();
    let dropped = 0;
    server = await startHttpsServer({ fetch: app.fetch, port: 0, host: '127.0.0.1', certificate: serving, log, onDropped: () => dropped++ });
    const idle = idleConnections(server.port, 1010);
    await Promise.all(idle.sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
    for (let i = 0; i < 100 && dropped < 10; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(dropped).toBe(10);
    expect(DEFAULT_CONNECTION_LIMITS).toEqual({ maxConnections: 1000, handshakeTimeoutMs: 10_000, headersTimeoutMs: 15_000 });
    for (const socket of idle.sockets) socket.destroy();
    await idle.closed;
  });
});
