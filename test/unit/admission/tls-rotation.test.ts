import { describe, expect, it } from 'vitest';
import { certificateInfo, generateCa, isIssuedBy, serviceIdentity, splitPem, type CertificateBundle } from '../../../src/tls/certificates.js';
import { planRotation, rotate, trustBundle, type TlsPolicy } from '../../../src/tls/rotation.js';

const DAY = 86_400_000;
const T0 = new Date('2024-05-01T10:00:00Z');
const at = (days: number): Date => new Date(T0.getTime() + days * DAY);
const policy: TlsPolicy = { caValidityMs: 1825 * DAY, caRenewBeforeMs: 600 * DAY, certValidityMs: 90 * DAY, certRenewBeforeMs: 30 * DAY };
const identity = serviceIdentity('resource-distributor', 'resource-distributor', true);

async function step(bundle: CertificateBundle | undefined, now: Date): Promise<CertificateBundle> {
  return rotate(bundle, planRotation(bundle, identity, now, policy), identity, now, policy);
}

describe('planRotation', () => {
  it('starts fresh when nothing is stored', () => {
    expect(planRotation(undefined, identity, T0, policy)).toEqual({ ca: 'fresh', serving: true, trust: true, reasons: ['no certificates yet'] });
  });

  it('walks a CA and serving certificate through their lives', async () => {
    const first = await step(undefined, T0);
    expect(certificateInfo(first.serving.cert).dnsNames).toEqual([
      'resource-distributor.resource-distributor.svc',
      'resource-distributor',
      'resource-distributor.resource-distributor',
      'resource-distributor.resource-distributor.svc.cluster.local',
      'resource-distributor-conversion.resource-distributor.svc',
      'localhost',
    ]);
    expect(certificateInfo(first.serving.cert).ips).toEqual(['127.0.0.1']);
    expect(isIssuedBy(first.serving.cert, first.ca.cert)).toBe(true);

    expect(planRotation(first, identity, at(59), policy)).toEqual({ ca: 'keep', serving: false, trust: false, reasons: [] });
    expect(planRotation(first, identity, at(61), policy)).toEqual({ ca: 'keep', serving: true, trust: false, reasons: ['serving certificate near expiry'] });

    const renewed = await step(first, at(61));
    expect(renewed.ca).toEqual(first.ca);
    expect(renewed.trust).toBe(first.trust);
    expect(renewed.serving.cert).not.toBe(first.serving.cert);
    expect(certificateInfo(renewed.serving.cert).notAfter).toEqual(at(151));
  });

  it('asks for a new serving certificate when the names it must cover change', async () => {
    const bundle = await step(undefined, T0);
    const other = serviceIdentity('renamed', 'resource-distributor', false);
    expect(planRotation(bundle, other, at(1), policy).reasons).toEqual(['serving certificate names changed']);
  });

  it('starts fresh when the CA has expired', async () => {
    const bundle = await step(undefined, T0);
    expect(planRotation(bundle, identity, at(1826), policy)).toMatchObject({ ca: 'fresh', serving: true });
  });

  it('replaces a serving certificate no trusted CA signed, and puts the CA back into the trust bundle', async () => {
    const bundle = await step(undefined, T0);
    const stranger = await generateCa(T0, policy.caValidityMs);
    const tampered = { ...bundle, trust: stranger.cert };
    expect(planRotation(tampered, identity, at(1), policy).reasons).toEqual(['serving certificate not signed by a trusted CA', 'trust bundle out of date']);
    const repaired = await step(tampered, at(1));
    expect(new Set(splitPem(repaired.trust))).toEqual(new Set([bundle.ca.cert, stranger.cert]));
    expect(isIssuedBy(repaired.serving.cert, bundle.ca.cert)).toBe(true);
    expect(planRotation(repaired, identity, at(2), policy)).toEqual({ ca: 'keep', serving: false, trust: false, reasons: [] });
  });

  it('replaces a serving certificate whose key was swapped', async () => {
    const bundle = await step(undefined, T0);
    const other = await step(undefined, T0);
    const tampered = { ...bundle, serving: { ...bundle.serving, key: other.serving.key } };
    expect(planRotation(tampered, identity, at(1), policy)).toMatchObject({ ca: 'keep', serving: true, reasons: ['serving key does not match the serving certificate'] });
  });

  it('starts a fresh CA when the CA key is lost, still trusting the old CA until it expires', async () => {
    const bundle = await step(undefined, T0);
    const other = await generateCa(T0, policy.caValidityMs);
    const tampered = { ...bundle, ca: { ...bundle.ca, key: other.key } };
    expect(planRotation(tampered, identity, at(1), policy)).toMatchObject({ ca: 'fresh', reasons: ['stored CA key does not match the CA'] });
    const fresh = await step(tampered, at(1));
    expect(splitPem(fresh.trust)).toEqual([bundle.ca.cert, fresh.ca.cert]);
    expect(isIssuedBy(fresh.serving.cert, fresh.ca.cert)).toBe(true);
  });

  it('rewrites a trust bundle holding something unreadable, instead of failing', async () => {
    const bundle = await step(undefined, T0);
    const garbage = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n';
    const tampered = { ...bundle, trust: bundle.trust + garbage };
    expect(planRotation(tampered, identity, at(1), policy)).toEqual({ ca: 'keep', serving: false, trust: true, reasons: ['trust bundle out of date'] });
    expect((await step(tampered, at(1))).trust).toBe(bundle.trust);
  });
});

describe('CA rollover', () => {
  it('trusts old and new CA, keeps signing with the old one for one step, then moves on', async () => {
    const start = await step(undefined, T0);
    const oldCa = start.ca.cert;

    // The CA has less than 600 days left, and the serving certificate has long expired.
    const rolled = await step(start, at(1300));
    expect(planRotation(start, identity, at(1300), policy)).toMatchObject({ ca: 'rollover', serving: true });
    const newCa = rolled.ca.cert;
    expect(newCa).not.toBe(oldCa);
    expect(splitPem(rolled.trust)).toEqual([oldCa, newCa]);
    expect(isIssuedBy(rolled.serving.cert, oldCa)).toBe(true);

    // Next serving renewal: signed by the new CA, which the API server trusts by now.
    const later = await step(rolled, at(1361));
    expect(isIssuedBy(later.serving.cert, newCa)).toBe(true);
    expect(splitPem(later.trust)).toEqual([oldCa, newCa]);

    // Once the old CA has expired (day 1825), the next check takes it out of the trust bundle.
    const current = await step(later, at(1800));
    expect(splitPem(current.trust)).toEqual([oldCa, newCa]);
    expect(planRotation(current, identity, at(1826), policy)).toEqual({ ca: 'keep', serving: false, trust: true, reasons: ['trust bundle out of date'] });
    const cleaned = await step(current, at(1826));
    expect(splitPem(cleaned.trust)).toEqual([newCa]);
    expect(cleaned.serving).toEqual(current.serving);
  });

  it('never issues a serving certificate that outlives the CA signing it', async () => {
    const start = await step(undefined, T0);
    const rolled = await step(start, at(1820));
    expect(certificateInfo(rolled.serving.cert).notAfter).toEqual(certificateInfo(start.ca.cert).notAfter);
    // Five days left: the next check renews it with the new CA.
    expect(planRotation(rolled, identity, at(1820), policy).serving).toBe(true);
  });
});

describe('trustBundle', () => {
  it('drops duplicates and expired CAs and orders by age', async () => {
    const a = await generateCa(T0, 10 * DAY);
    const b = await generateCa(at(1), 100 * DAY);
    expect(splitPem(trustBundle([b.cert + a.cert, a.cert], at(2)))).toEqual([a.cert, b.cert]);
    expect(splitPem(trustBundle([b.cert + a.cert], at(11)))).toEqual([b.cert]);
  });
});
