import type { Clock } from '../domain/clock.js';
import { TransientError } from '../k8s/errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { certificateInfo, splitPem, type CertificateBundle, type Identity, type KeyPair } from './certificates.js';
import { needsRotation, planRotation, rotate, type TlsPolicy } from './rotation.js';
import type { CertificateStore } from './store.js';

export interface CertificateManagerDeps {
  store: CertificateStore;
  identity: Identity;
  policy: TlsPolicy;
  clock: Clock;
  log: Logger;
  metrics?: Metrics;
  checkIntervalMs: number;
  /** Swaps the certificate the server presents (setSecureContext); called when it changed. */
  serve: (serving: KeyPair) => void;
  /**
   * Makes the API server trust these CAs (caBundle of our webhooks). Called on every refresh, so
   * that a caBundle reset by a re-applied manifest is repaired; must be cheap when nothing changed
   * and answer whether it changed anything.
   */
  publishTrust: (trustPem: string) => Promise<boolean>;
}

export interface CertificateManager {
  /** Loads the stored certificates, creating or rotating them when due. No other side effect. */
  ensure(): Promise<CertificateBundle>;
  /** `ensure`, then publish the trust bundle and serve the certificate if it changed. */
  refresh(): Promise<CertificateBundle>;
  /** Refreshes periodically: rotation by whichever replica sees it due first, reload by the others. */
  start(): void;
  stop(): void;
  current(): CertificateBundle | undefined;
}

const SAVE_ATTEMPTS = 3;

/**
 * Certificate lifecycle without leadership: every replica may rotate, the store's optimistic
 * concurrency picks one winner and the others load its result on their next refresh.
 */
export function createCertificateManager(deps: CertificateManagerDeps): CertificateManager {
  const { store, log } = deps;
  let current: CertificateBundle | undefined;
  let servedCert: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function ensure(): Promise<CertificateBundle> {
    for (let attempt = 1; attempt <= SAVE_ATTEMPTS; attempt++) {
      const stored = await store.load();
      const now = deps.clock();
      const plan = planRotation(stored?.bundle, deps.identity, now, deps.policy);
      if (stored && !needsRotation(plan)) {
        current = stored.bundle;
        return current;
      }
      const next = await rotate(stored?.bundle, plan, deps.identity, now, deps.policy);
      const saved = await store.save(next, stored?.version);
      if (saved !== 'conflict') {
        log.info({ ca: plan.ca, serving: plan.serving, reasons: plan.reasons }, 'certificates rotated');
        current = saved.bundle;
        return current;
      }
      log.info({ attempt }, 'certificates changed by another replica, reloading');
    }
    throw new TransientError(`certificate store changed during ${SAVE_ATTEMPTS} attempts in a row`);
  }

  function serve(serving: KeyPair): void {
    if (serving.cert === servedCert) return;
    deps.serve(serving);
    servedCert = serving.cert;
    const info = certificateInfo(serving.cert);
    deps.metrics?.certificateExpiry.set(info.notAfter.getTime() / 1000);
    log.info({ fingerprint: info.fingerprint, notAfter: info.notAfter.toISOString() }, 'serving certificate loaded');
  }

  /** Without a published trust bundle, only a renewal by the CA of what is served now is safe to serve. */
  function sameIssuerAsServed(cert: string): boolean {
    return servedCert === undefined || certificateInfo(servedCert).issuer === certificateInfo(cert).issuer;
  }

  async function refresh(): Promise<CertificateBundle> {
    const bundle = await ensure();
    let published = false;
    try {
      // Trust first: the API server must know a CA before any certificate it signed is served.
      if (await deps.publishTrust(bundle.trust)) log.info({ cas: splitPem(bundle.trust).length }, 'CA bundle published');
      published = true;
    } finally {
      if (published || sameIssuerAsServed(bundle.serving.cert)) serve(bundle.serving);
    }
    return bundle;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      refresh()
        .catch((error: unknown) => log.error({ err: error }, 'certificate refresh failed'))
        .finally(schedule);
    }, deps.checkIntervalMs);
    timer.unref();
  }

  return {
    ensure,
    refresh,
    start() {
      stopped = false;
      if (!timer) schedule();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
    current: () => current,
  };
}
