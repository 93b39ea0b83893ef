// The admission baseline: the same server stack as the product (Hono over node:https, the same
// certificate) with one trivial route answering a fixed small JSON. What the product adds on top
// of it is the cost of admission itself.
import { Hono } from 'hono';
import { startHttpsServer, type HttpsServer } from '../src/admission/https-server.js';
import { createLogger } from '../src/log.js';
import type { KeyPair } from '../src/tls/certificates.js';

export const BASELINE_PATH = '/baseline';

export async function startBaselineServer(certificate: KeyPair): Promise<HttpsServer> {
  const app = new Hono();
  app.post(BASELINE_PATH, (c) => c.json({ ok: true }));
  return startHttpsServer({
    fetch: app.fetch,
    port: 0,
    host: '127.0.0.1',
    certificate,
    log: createLogger({ level: 'warn', destination: process.stderr }),
  });
}
