// The admission bench's load generator must send at the rate it is given (evenly, not in bursts)
// and charge a slow server for every request it holds up: otherwise a webhook's latency "at 500
// req/s" would be measured at some other load.
import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureLoadGenerator, runLoad } from '../../bench/admission-load.js';
import { createCertificateAuthority, issueServingCert, type KeyAndCert } from '../control-plane/pki.js';

let ca: KeyAndCert;
let serving: KeyAndCert;
let generator: string;
let server: Server | undefined;

beforeAll(async () => {
  ca = await createCertificateAuthority('bench-load-ca');
  serving = await issueServingCert(ca, 'bench-load');
  generator = await ensureLoadGenerator();
}, 300_000);

afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** An HTTPS server that answers every POST after `holdMs`, and notes when each arrived. */
async function startServer(holdMs: number): Promise<{ url: string; arrivals: number[] }> {
  const arrivals: number[] = [];
  server = createServer({ key: serving.key, cert: serving.cert }, (request, response) => {
    arrivals.push(performance.now());
    request.resume();
    request.on('end', () => setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'), holdMs));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, arrivals };
}

describe('admission load generator', () => {
  it('spreads the requests of a second over that second', async () => {
    const { url, arrivals } = await startServer(0);
    const result = await runLoad(generator, { url, body: '{}', ca: ca.cert, connections: 8, rate: 100, durationSeconds: 1, warmupSeconds: 0 });

    expect(result).toMatchObject({ requests: 100, errors: 0, timeouts: 0, non2xx: 0 });
    expect(result.samplesMs).toHaveLength(100);
    // Evenly spaced: 10 ms apart, so the first and the last are ~990 ms apart; a burst would be
    // over within a few milliseconds.
    expect((arrivals.at(-1) ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThan(800);
    const firstHalf = arrivals.filter((at) => at - (arrivals[0] ?? 0) < 500).length;
    expect(firstHalf).toBeGreaterThan(35);
    expect(firstHalf).toBeLessThan(65);
  }, 60_000);

  it('keeps sending when the server is slow, and counts the wait for a free connection', async () => {
    // 2 connections held 100 ms each take 20 requests/s: a generator that waits for answers before
    // sending (closed loop) would send about 20 and report ~100 ms for each.
    const { url } = await startServer(100);
    const result = await runLoad(generator, { url, body: '{}', ca: ca.cert, connections: 2, rate: 50, durationSeconds: 1, warmupSeconds: 0 });

    expect(result).toMatchObject({ requests: 50, errors: 0, non2xx: 0 });
    expect(result.latencyMs.min).toBeGreaterThanOrEqual(100);
    // The last of 50 waits for the 48 before it: about 25 rounds of 100 ms after it was handed over at ~1 s.
    expect(result.latencyMs.max).toBeGreaterThan(1000);
  }, 60_000);
});
