import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { serviceIdentity, type CertificateBundle, type KeyPair } from '../../../src/tls/certificates.js';
import { createCertificateManager } from '../../../src/tls/manager.js';
import type { TlsPolicy } from '../../../src/tls/rotation.js';
import type { CertificateStore, StoredBundle } from '../../../src/tls/store.js';

const DAY = 86_400_000;
const policy: TlsPolicy = { caValidityMs: 1825 * DAY, caRenewBeforeMs: 600 * DAY, certValidityMs: 90 * DAY, certRenewBeforeMs: 30 * DAY };

/** A Secret in memory: versions and optimistic concurrency like the API server's. */
class MemoryStore implements CertificateStore {
  stored: StoredBundle | undefined;
  saves = 0;
  private version = 0;

  load(): Promise<StoredBundle | undefined> {
    return Promise.resolve(this.stored);
  }

  save(bundle: CertificateBundle, version: string | undefined): Promise<StoredBundle | 'conflict'> {
    if (version !== this.stored?.version) return Promise.resolve('conflict');
    this.saves++;
    this.stored = { bundle, version: String(++this.version) };
    return Promise.resolve(this.stored);
  }
}

function replica(store: CertificateStore, clock: () => Date) {
  const served: KeyPair[] = [];
  const published: string[] = [];
  const steps: string[] = [];
  const api = { down: false };
  const manager = createCertificateManager({
    store,
    identity: serviceIdentity('svc', 'ns', false),
    policy,
    clock,
    log: createLogger({ level: 'silent' }),
    checkIntervalMs: 60_000,
    serve: (certificate) => {
      steps.push('serve');
      served.push(certificate);
    },
    publishTrust: (trust) => {
      if (api.down) return Promise.reject(new Error('API server unavailable'));
      steps.push('publish');
      const changed = trust !== published.at(-1);
      published.push(trust);
      return Promise.resolve(changed);
    },
  });
  return { manager, served, published, steps, api };
}

describe('certificate manager', () => {
  it('creates once, serves only what changed, and publishes the trust on every refresh', async () => {
    let now = new Date('2024-05-01T10:00:00Z');
    const store = new MemoryStore();
    const { manager, served, published } = replica(store, () => now);

    const first = await manager.refresh();
    expect(served).toEqual([first.serving]);
    expect(published).toEqual([first.trust]);

    await manager.refresh();
    expect(store.saves).toBe(1);
    expect(served).toHaveLength(1);
    // A caBundle reset by a re-applied manifest gets repaired by the next refresh.
    expect(published).toEqual([first.trust, first.trust]);

    now = new Date(now.getTime() + 61 * DAY);
    const renewed = await manager.refresh();
    expect(store.saves).toBe(2);
    expect(served).toEqual([first.serving, renewed.serving]);
    expect(new Set(published)).toEqual(new Set([first.trust]));
  });

  it('lets one of two replicas rotate; the other uses its result', async () => {
    const now = new Date('2024-05-01T10:00:00Z');
    const store = new MemoryStore();
    const a = replica(store, () => now);
    const b = replica(store, () => now);
    const [fromA, fromB] = await Promise.all([a.manager.refresh(), b.manager.refresh()]);
    expect(store.saves).toBe(1);
    expect(fromA).toEqual(fromB);
    expect(a.served[0]).toEqual(b.served[0]);
  });

  it('picks up a rotation made by another replica on its next refresh', async () => {
    let now = new Date('2024-05-01T10:00:00Z');
    const store = new MemoryStore();
    const a = replica(store, () => now);
    const b = replica(store, () => now);
    await a.manager.refresh();
    await b.manager.refresh();
    now = new Date(now.getTime() + 61 * DAY);
    const rotated = await a.manager.refresh();
    await b.manager.refresh();
    expect(b.served.at(-1)).toEqual(rotated.serving);
    expect(store.saves).toBe(2);
  });

  it('publishes the trust bundle before it serves a certificate', async () => {
    const { manager, steps } = replica(new MemoryStore(), () => new Date('2024-05-01T10:00:00Z'));
    await manager.refresh();
    expect(steps).toEqual(['publish', 'serve']);
  });

  it('while the trust bundle cannot be published, serves a renewal by the same CA but no certificate of a new CA', async () => {
    let now = new Date('2024-05-01T10:00:00Z');
    const store = new MemoryStore();
    const { manager, served, api } = replica(store, () => now);
    const first = await manager.refresh();
    api.down = true;

    now = new Date(now.getTime() + 61 * DAY);
    await expect(manager.refresh()).rejects.toThrow('API server unavailable');
    expect(served).toHaveLength(2);

    // The CA has expired: a fresh one signs the next certificate, which waits for its CA to be published.
    now = new Date(now.getTime() + 1825 * DAY);
    const fresh = await manager.ensure();
    expect(fresh.ca.cert).not.toBe(first.ca.cert);
    await expect(manager.refresh()).rejects.toThrow('API server unavailable');
    expect(served).toHaveLength(2);

    api.down = false;
    await manager.refresh();
    expect(served.at(-1)).toEqual(fresh.serving);
  });
});
