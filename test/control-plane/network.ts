import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ManagedProcess } from './processes.js';

/**
 * `count` distinct free loopback ports, found by binding :0. All listeners are held open until
 * every port is known so that the ports differ from each other.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => {
            const address = server.address();
            if (address && typeof address === 'object') resolve(address.port);
            else reject(new Error('no port assigned'));
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}

export interface TlsClient {
  ca: string;
  /** A client certificate and its key, when the server asks for one. */
  cert?: string;
  key?: string;
}

/** GET `url`; resolves to the status and body, or undefined when nothing answered. */
export function httpGet(url: string, tls?: TlsClient, headers: Record<string, string> = {}): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const request = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = request(url, { method: 'GET', timeout: 5_000, headers, ...tls }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/**
 * Polls `check` until it returns true. Fails at once, with the tail of the process log, when the
 * process exits, and after `timeoutMs` otherwise.
 */
export async function waitUntilReady(
  child: ManagedProcess,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.hasExited()) {
      const { code, signal } = await child.exited;
      throw new Error(`${child.name} exited (${signal ?? `code ${String(code)}`}) before ${what}; last lines of its log:\n${await child.tail()}`);
    }
    if (await check()) return;
    if (Date.now() > deadline) {
      throw new Error(`${child.name}: ${what} not reached within ${timeoutMs / 1000} s; last lines of its log:\n${await child.tail()}`);
    }
    await sleep(200);
  }
}
