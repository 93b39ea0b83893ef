import {
  certificateInfo,
  generateCa,
  generateServing,
  isIssuedBy,
  keyMatches,
  splitPem,
  type CertificateBundle,
  type Identity,
  type KeyPair,
} from './certificates.js';

export interface TlsPolicy {
  caValidityMs: number;
  /** Start a CA rollover when the CA has less than this left. */
  caRenewBeforeMs: number;
  certValidityMs: number;
  /** Issue a new serving certificate when the current one has less than this left. */
  certRenewBeforeMs: number;
}

/**
 * What to do with the stored certificates now:
 * - `fresh`: no usable CA (none yet, expired, unreadable, key lost): a new CA; CAs still valid in
 *   the old trust bundle stay trusted until they expire, so nothing served now stops working.
 * - `rollover`: the CA nears expiry: a new CA joins the trust bundle and signs the *next* serving
 *   certificates; a serving certificate issued in the same step is still signed by the old CA,
 *   which the API server already trusts. The old CA's key is dropped at once; its certificate
 *   leaves the trust bundle when it expires.
 * - `trust`: the trust bundle differs from what it should be (an expired or unreadable CA in it,
 *   the current CA missing from it): it is rewritten.
 */
export interface RotationPlan {
  ca: 'keep' | 'fresh' | 'rollover';
  serving: boolean;
  trust: boolean;
  reasons: string[];
}

function caPlan(bundle: CertificateBundle | undefined, now: Date, policy: TlsPolicy): { ca: RotationPlan['ca']; reason?: string } {
  if (!bundle) return { ca: 'fresh', reason: 'no certificates yet' };
  let left: number;
  try {
    left = certificateInfo(bundle.ca.cert).notAfter.getTime() - now.getTime();
  } catch {
    return { ca: 'fresh', reason: 'stored CA unreadable' };
  }
  if (!keyMatches(bundle.ca)) return { ca: 'fresh', reason: 'stored CA key does not match the CA' };
  if (left <= 0) return { ca: 'fresh', reason: 'CA expired' };
  if (left <= policy.caRenewBeforeMs) return { ca: 'rollover', reason: 'CA near expiry' };
  return { ca: 'keep' };
}

function servingProblem(bundle: CertificateBundle, identity: Identity, now: Date, policy: TlsPolicy): string | undefined {
  let info: ReturnType<typeof certificateInfo>;
  try {
    info = certificateInfo(bundle.serving.cert);
  } catch {
    return 'serving certificate unreadable';
  }
  if (!keyMatches(bundle.serving)) return 'serving key does not match the serving certificate';
  if (info.notAfter.getTime() - now.getTime() <= policy.certRenewBeforeMs) return 'serving certificate near expiry';
  if (info.notBefore.getTime() > now.getTime()) return 'serving certificate not yet valid';
  const covered = identity.dnsNames.every((n) => info.dnsNames.includes(n)) && identity.ips.every((ip) => info.ips.includes(ip));
  if (!covered) return 'serving certificate names changed';
  if (!trustedCas(bundle.trust).some((ca) => isIssuedBy(bundle.serving.cert, ca))) return 'serving certificate not signed by a trusted CA';
  return undefined;
}

/** Pure (given the clock's `now`): what must be renewed. */
export function planRotation(bundle: CertificateBundle | undefined, identity: Identity, now: Date, policy: TlsPolicy): RotationPlan {
  const { ca, reason } = caPlan(bundle, now, policy);
  const reasons = reason ? [reason] : [];
  if (ca === 'fresh' || !bundle) return { ca, serving: true, trust: true, reasons };
  const problem = servingProblem(bundle, identity, now, policy);
  if (problem) reasons.push(problem);
  const trust = trustBundle([bundle.trust, bundle.ca.cert], now) !== bundle.trust;
  if (trust) reasons.push('trust bundle out of date');
  return { ca, serving: problem !== undefined, trust: trust || ca === 'rollover', reasons };
}

export function needsRotation(plan: RotationPlan): boolean {
  return plan.ca !== 'keep' || plan.serving || plan.trust;
}

/** The readable certificates of a PEM bundle. */
function trustedCas(bundle: string): string[] {
  return splitPem(bundle).filter((pem) => {
    try {
      certificateInfo(pem);
      return true;
    } catch {
      return false;
    }
  });
}

/** The trust bundle: the given CAs, without unreadable or expired ones or duplicates, oldest first. */
export function trustBundle(cas: readonly string[], now: Date): string {
  const seen = new Set<string>();
  const kept = cas.flatMap(trustedCas).filter((pem) => {
    const info = certificateInfo(pem);
    if (info.notAfter.getTime() <= now.getTime() || seen.has(info.fingerprint)) return false;
    seen.add(info.fingerprint);
    return true;
  });
  return kept.sort((a, b) => certificateInfo(a).notBefore.getTime() - certificateInfo(b).notBefore.getTime()).join('');
}

/** Carries out a plan: returns the bundle to store and serve. */
export async function rotate(
  bundle: CertificateBundle | undefined,
  plan: RotationPlan,
  identity: Identity,
  now: Date,
  policy: TlsPolicy,
): Promise<CertificateBundle> {
  const previousTrust = bundle?.trust ?? '';
  if (plan.ca === 'fresh' || !bundle) {
    const ca = await generateCa(now, policy.caValidityMs);
    return { ca, serving: await generateServing(ca, identity, now, policy.certValidityMs), trust: trustBundle([previousTrust, ca.cert], now) };
  }
  const ca: KeyPair = plan.ca === 'rollover' ? await generateCa(now, policy.caValidityMs) : bundle.ca;
  // Signed by the CA that was trusted before this step, so that no replica serves a certificate
  // the API server cannot verify yet.
  const serving = plan.serving ? await generateServing(bundle.ca, identity, now, policy.certValidityMs) : bundle.serving;
  return { ca, serving, trust: trustBundle([previousTrust, bundle.ca.cert, ca.cert], now) };
}
