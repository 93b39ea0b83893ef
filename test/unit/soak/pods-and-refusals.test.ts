import { describe, expect, it } from 'vitest';
import { checkPods, copiesAtAdmission, POD_FAULT_GRACE_MS, type PodAdmission } from '../../soak/check-pods.js';
import { checkRefusals, type Refusal } from '../../soak/check-refusals.js';
import type { FaultRun } from '../../soak/faults.js';
import type { PodPlan } from '../../soak/pod-plan.js';
import { configMap, copyOf, distribution, foreignObject, listed, namespace, objectSync, OWN, plainObject, syncCopy, world } from './soak-builders.js';

const cm = configMap('settings', { k: 'v' });
const rd = distribution('rd', { resource: cm, targets: listed('a') }, { desired: 1, succeeded: 1 });
const pod = (refs: PodPlan['refs'], ns = 'a'): PodPlan => ({ namespace: ns, name: 'p', refs });
const settings = { kind: 'ConfigMap' as const, name: 'settings', how: 'volume' as const };
const source = plainObject('Secret', 'src', 'pull', { k: 'djE=' });
const sync = objectSync('src', 'sync', { kind: 'Secret', name: 'pull' }, [{ namespace: 'a', name: 'pull-a' }], { desired: 1, succeeded: 1 });
const pullA = { kind: 'Secret' as const, name: 'pull-a', how: 'envFrom' as const };

describe('copiesAtAdmission', () => {
  it.each([
    { name: 'the copy was there', snapshot: world({ namespaces: [namespace('a')], distributions: [rd], objects: [copyOf(rd, 'a')] }), plan: pod([settings]), expected: ['ConfigMap/settings'], missing: [] },
    { name: 'the copy was not there', snapshot: world({ namespaces: [namespace('a')], distributions: [rd] }), plan: pod([settings]), expected: ['ConfigMap/settings'], missing: ['ConfigMap/settings'] },
    { name: 'an object of that name that is not ours will do', snapshot: world({ namespaces: [namespace('a')], distributions: [rd], objects: [foreignObject('ConfigMap', 'a', 'settings', {})] }), plan: pod([settings]), expected: ['ConfigMap/settings'], missing: [] },
    { name: 'a namespace the distribution did not target then', snapshot: world({ namespaces: [namespace('a'), namespace('b')], distributions: [rd] }), plan: pod([settings], 'b'), expected: [], missing: [] },
    { name: 'a name nothing distributes', snapshot: world({ namespaces: [namespace('a')], distributions: [rd] }), plan: pod([{ kind: 'Secret', name: 'nothing', how: 'env' }]), expected: [], missing: [] },
    { name: 'writePolicy strict waits for its status', snapshot: world({ namespaces: [namespace('a')], distributions: [{ ...rd, spec: { ...rd.spec, writePolicy: 'strict' } }] }), plan: pod([settings]), expected: [], missing: [] },
    { name: 'a distribution being deleted', snapshot: world({ namespaces: [namespace('a')], distributions: [{ ...rd, deleting: true }] }), plan: pod([settings]), expected: [], missing: [] },
    { name: "an ObjectSync's renamed copy was not there", snapshot: world({ namespaces: [namespace('a'), namespace('src')], objectSyncs: [sync], objects: [source] }), plan: pod([pullA]), expected: ['Secret/pull-a'], missing: ['Secret/pull-a'] },
    { name: "an ObjectSync's copy was there", snapshot: world({ namespaces: [namespace('a'), namespace('src')], objectSyncs: [sync], objects: [source, syncCopy(sync, source, 'a', 'pull-a')] }), plan: pod([pullA]), expected: ['Secret/pull-a'], missing: [] },
    { name: "an ObjectSync whose source was missing", snapshot: world({ namespaces: [namespace('a'), namespace('src')], objectSyncs: [sync] }), plan: pod([pullA]), expected: [], missing: [] },
  ])('$name', ({ snapshot, plan, expected, missing }) => {
    expect(copiesAtAdmission(snapshot, plan, OWN)).toEqual({ expected, missing });
  });
});

describe('checkPods', () => {
  const missingCopy: PodAdmission = { step: 3, at: 10_000, plan: pod([settings]), resourceVersion: '42', atAdmission: world({ namespaces: [namespace('a')], distributions: [rd] }) };
  const fault = (startedAt: number, recoveredAt: number): FaultRun => ({ kind: 'partition', target: 'x', startedAt, recoveredAt });
  it.each([
    { name: 'no fault: a violation', faults: [], violations: 1, exempt: 0 },
    { name: 'during a fault', faults: [fault(9_000, 11_000)], violations: 0, exempt: 1 },
    { name: 'within the grace after its recovery', faults: [fault(1_000, 10_000 - POD_FAULT_GRACE_MS)], violations: 0, exempt: 1 },
    { name: 'after the grace', faults: [fault(1_000, 10_000 - POD_FAULT_GRACE_MS - 1)], violations: 1, exempt: 0 },
    { name: 'before the fault started', faults: [fault(10_001, 12_000)], violations: 1, exempt: 0 },
  ])('$name', ({ faults, violations, exempt }) => {
    const found = checkPods([missingCopy], faults, OWN);
    expect(found.violations.map((v) => v.rule)).toEqual(Array(violations).fill('pod-before-copies'));
    expect(found.exempt).toBe(exempt);
  });

  it('a revision that could not be read is not held to it', () => {
    const { atAdmission: _, ...unread } = missingCopy;
    expect(checkPods([unread], [], OWN)).toMatchObject({ violations: [], exempt: 1, checked: 0 });
  });
});

describe('checkRefusals', () => {
  const failedCall = 'failed calling webhook "resourcedistributions.resource-distributor.io": failed to call webhook: Post "https://127.0.0.1:1/validate": EOF';
  const denied = 'admission webhook "resourcedistributions.resource-distributor.io" denied the request: spec.targets: not allowed';
  const refusal = (message: string, startedAt: number, endedAt: number, asAuthor = false): Refusal => ({ step: 1, op: 'distribution-targets', asAuthor, message, startedAt, endedAt });
  const kill: FaultRun = { kind: 'kill-leader', target: 'a', startedAt: 1_000, recoveredAt: 5_000 };
  it.each([
    { name: 'a failed call while a replica was down', refusal: refusal(failedCall, 4_000, 4_100), faults: [kill], rules: [], tolerated: 1 },
    { name: 'a failed call sent just before the kill, answered after', refusal: refusal(failedCall, 900, 1_200), faults: [kill], rules: [], tolerated: 1 },
    { name: 'a failed call after the replica was back', refusal: refusal(failedCall, 5_001, 5_100), faults: [kill], rules: ['admission-failed'], tolerated: 0 },
    { name: 'a failed call without a fault', refusal: refusal(failedCall, 4_000, 4_100), faults: [], rules: ['admission-failed'], tolerated: 0 },
    { name: 'a failed call during a partition (the replicas still answer)', refusal: refusal(failedCall, 4_000, 4_100), faults: [{ ...kill, kind: 'partition' as const }], rules: ['admission-failed'], tolerated: 0 },
    { name: "a denial of the admin's change", refusal: refusal(denied, 4_000, 4_100), faults: [kill], rules: ['admission-denied'], tolerated: 0 },
    { name: "a denial of the limited author's change", refusal: refusal(denied, 4_000, 4_100, true), faults: [], rules: [], tolerated: 0 },
    { name: 'not an admission refusal', refusal: refusal('request failed, reason: read ECONNRESET', 4_000, 4_100), faults: [], rules: [], tolerated: 0 },
  ])('$name', ({ refusal: r, faults, rules, tolerated }) => {
    const found = checkRefusals([r], faults);
    expect(found.violations.map((v) => v.rule)).toEqual(rules);
    expect(found.tolerated).toBe(tolerated);
  });
});
