// The admission baseline: the same server stack as the product (Hono over node:https, the same
// certificate) with trivial routes answering a fixed small JSON. What the product adds on top
// of it is the cost of admission itself.
import type { IncomingMessage } from 'node:http';
import { Hono, type Context } from 'hono';
import { startHttpsServer, type HttpsServer } from '../src/admission/https-server.js';
import { createLogger } from '../src/log.js';
import type { KeyPair } from '../src/tls/certificates.js';

export const BASELINE_PATH = '/baseline';
/**
 * Reads the whole body first, from the socket's stream as the product's webhook route does, and
 * answers how many bytes arrived: for large bodies, the baseline must move the bytes too (the
 * plain route may answer before the client has finished sending).
 */
export const BASELINE_DRAIN_PATH = '/baseline/drain';
/**
 * The least an admission webhook can do: read the AdmissionReview, parse it and allow it, echoing
 * its uid (which the API server checks). The baseline of the pod webhooks, sent the same review.
 */
export const BASELINE_ADMISSION_PATH = '/baseline/admission';

async function bodyText(c: Context): Promise<string> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming === undefined) return c.req.text();
  const chunks: Buffer[] = [];
  for await (const chunk of incoming as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The trivial routes, also served in-process (`app.request`) where no socket is the point. */
export function baselineApp(): Hono {
  const app = new Hono();
  app.post(BASELINE_PATH, (c) => c.json({ ok: true }));
  app.post(BASELINE_DRAIN_PATH, async (c) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    let bytes = 0;
    if (incoming === undefined) bytes = (await c.req.arrayBuffer()).byteLength;
    else for await (const chunk of incoming as AsyncIterable<Buffer>) bytes += chunk.length;
    return c.json({ ok: true, bytes });
  });
  app.post(BASELINE_ADMISSION_PATH, async (c) => {
    const review = JSON.parse(await bodyText(c)) as { request?: { uid?: string } };
    return c.json({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request?.uid ?? '', allowed: true } });
  });
  return app;
}

export async function startBaselineServer(certificate: KeyPair): Promise<HttpsServer> {
  return startHttpsServer({
    fetch: baselineApp().fetch,
    port: 0,
    host: '127.0.0.1',
    certificate,
    log: createLogger({ level: 'warn', destination: process.stderr }),
  });
}
