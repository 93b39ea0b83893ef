// Connections that never send a request, against the whole product in local mode: raw TCP
// connections to the webhook port (loopback only, a bounded number) that never start TLS are
// closed after RD_TLS_HANDSHAKE_TIMEOUT, those beyond RD_MAX_CONNECTIONS at once, and the API
// server's admission calls are answered all the while they are not crowded out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { idleConnections } from '../idle-connections.js';
import { connectionOf } from '../kube-client.js';
import { configMapOf, distributionOf, Kube } from './fixtures/kube.js';
import { rejection } from './support/admission.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const kc = loadKubeConfig();
const kube = new Kube(kc);
const metrics = createMetrics();
const MAX_CONNECTIONS = 40;
const HANDSHAKE_MS = 1000;
let server: RunningServer;
let target: string;

/** The API server's call reached our webhook: our own denial comes back. */
async function deniedByUs(): Promise<string | undefined> {
  const invalid = distributionOf(uniqueName('invalid'), { ...configMapOf('c', {}), kind: 'Pod' }, { includedNamespaces: { list: [{ name: target }] } });
  const answer = await rejection(kube.createDistribution(invalid)).catch(() => undefined);
  return answer?.message.includes('spec.resource.kind') ? answer.message : undefined;
}

async function dropped(): Promise<number> {
  return (await metrics.connectionsDropped.get()).values[0]?.value ?? 0;
}

beforeAll(async () => {
  target = (await kube.createNamespace('connections')).metadata!.name!;
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics,
    env: { RD_MAX_CONNECTIONS: String(MAX_CONNECTIONS), RD_TLS_HANDSHAKE_TIMEOUT: `${HANDSHAKE_MS}ms`, RD_HEADERS_TIMEOUT: '2s' },
    overrides: { webhookNames: { distributions: uniqueName('e2e-conn-distributions'), namespaces: uniqueName('e2e-conn-namespaces') }, shutdownDelayMs: 0 },
  });
  await waitFor(deniedByUs, { what: 'the distribution webhook of this server to be called', timeoutMs: 60_000 });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

describe('connections that send no request', () => {
  it('are refused beyond the cap at once and closed after the handshake timeout; the API server is answered again', async () => {
    const idle = idleConnections(server.port, 200);
    await Promise.all(idle.sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve).once('error', resolve))));
    const closedAfter = (await idle.closed).sort((a, b) => a - b);

    // Beyond the cap (the API server's own connections count too): closed as soon as accepted.
    const refused = closedAfter.filter((ms) => ms < HANDSHAKE_MS / 2);
    expect(refused.length).toBeGreaterThanOrEqual(200 - MAX_CONNECTIONS);
    expect(await dropped()).toBeGreaterThanOrEqual(200 - MAX_CONNECTIONS);
    // The others: held only until the handshake timeout, not two minutes.
    const held = closedAfter.filter((ms) => ms >= HANDSHAKE_MS / 2);
    expect(held.length).toBeGreaterThan(0);
    expect(Math.min(...held)).toBeGreaterThanOrEqual(HANDSHAKE_MS - 100);
    expect(Math.max(...held)).toBeLessThan(HANDSHAKE_MS + 3000);

    // A real admission call goes through.
    expect(await waitFor(deniedByUs, { what: 'our denial after the idle connections', timeoutMs: 20_000 })).toContain('denied the request');
  });
});
