import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { SecureContextOptions } from 'node:tls';
import { serve } from '@hono/node-server';
import type { Logger } from '../log.js';
import type { KeyPair } from '../tls/certificates.js';

export interface HttpsServerOptions {
  fetch: (request: Request) => Response | Promise<Response>;
  port: number;
  host: string;
  certificate: KeyPair;
  /**
   * PEM CA bundle: clients are asked for a certificate and those it signed are marked authorized
   * on their socket (see webhook-caller.ts). A client without one is still served.
   */
  clientCa?: string;
  /** What a connection may take before it sends a request; defaults: DEFAULT_CONNECTION_LIMITS. */
  limits?: Partial<ConnectionLimits>;
  /** A connection refused because `maxConnections` are open. */
  onDropped?: () => void;
  log: Logger;
}

/**
 * Bounds on connections that have not (yet) sent a request: without them, thousands of idle TCP
 * connections that never start TLS are each held open for two minutes (Node.js's default
 * handshake timeout), and their number is bounded only by file descriptors.
 */
export interface ConnectionLimits {
  /** Open connections at most; one more is closed as soon as it is accepted. */
  maxConnections: number;
  /** The TLS handshake must be complete within this time after the connection is accepted. */
  handshakeTimeoutMs: number;
  /** A request's headers must have arrived within this time (also the first, after the handshake). */
  headersTimeoutMs: number;
}

/**
 * The API server opens a connection per concurrent call (HTTP/1.1) and completes its handshake in
 * milliseconds; several API server replicas under heavy pod churn stay far below 1,000.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { maxConnections: 1000, handshakeTimeoutMs: 10_000, headersTimeoutMs: 15_000 };

export interface HttpsServer {
  /** The bound port (useful when 0 asked for a free one). */
  port: number;
  /** Presents another certificate to new connections, without a restart. */
  setCertificate(certificate: KeyPair): void;
  /**
   * From now on every answer closes its connection, so that clients open their next request
   * elsewhere instead of sending it on a connection that `close` may shut under it.
   */
  drain(): void;
  /** Stops accepting, lets in-flight requests finish, then forces the rest closed after `timeoutMs`. */
  close(timeoutMs: number): Promise<void>;
}

function secureContext(certificate: KeyPair, clientCa: string | undefined): SecureContextOptions {
  return { key: certificate.key, cert: certificate.cert, ...(clientCa === undefined ? {} : { ca: clientCa }) };
}

export async function startHttpsServer(options: HttpsServerOptions): Promise<HttpsServer> {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  const server = serve({
    fetch: options.fetch,
    port: options.port,
    hostname: options.host,
    createServer,
    serverOptions: {
      ...secureContext(options.certificate, options.clientCa),
      ...(options.clientCa === undefined ? {} : { requestCert: true, rejectUnauthorized: false }),
      handshakeTimeout: limits.handshakeTimeoutMs,
      // How often the headers timeout is checked (Node.js's default, 30 s, would let a connection
      // that never sends a request stay twice as long as its timeout).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
    },
  }) as Server;
  server.maxConnections = limits.maxConnections;
  // Said by a metric, not a log line each: a flood would flood the log too.
  server.on('drop', () => options.onDropped?.());

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      resolve();
    });
  });
  // The API server reuses connections for up to 90 s; closing them sooner races with a request
  // sent on a connection we are closing. Slow or stalled clients are still cut off.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = Math.max(30_000, limits.headersTimeoutMs);
  let draining = false;
  // Before the application's handler, so that the header is in place whatever it answers.
  server.prependListener('request', (_request, response) => {
    if (draining) response.setHeader('Connection', 'close');
  });
  server.on('tlsClientError', (error) => options.log.debug({ err: error }, 'TLS handshake failed'));
  // After listening, an error (such as running out of file descriptors on accept) must not crash the process.
  server.on('error', (error) => options.log.error({ err: error }, 'admission server error'));
  const port = (server.address() as AddressInfo).port;
  options.log.info({ host: options.host, port, ...limits }, 'admission server listening');

  return {
    port,
    setCertificate(certificate) {
      server.setSecureContext(secureContext(certificate, options.clientCa));
    },
    drain() {
      draining = true;
    },
    close(timeoutMs) {
      return new Promise<void>((resolve) => {
        // Keep-alive connections become idle once their request is answered: close them as they do.
        const idle = setInterval(() => server.closeIdleConnections(), 100);
        const force = setTimeout(() => server.closeAllConnections(), timeoutMs);
        server.close(() => {
          clearInterval(idle);
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
