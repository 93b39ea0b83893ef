import { describe, expect, it } from 'vitest';
import type { FaultKind, FaultRun } from '../../soak/faults.js';
import { checkWebhookErrors, growth, webhookErrors } from '../../soak/webhook-metrics.js';

// As kube-apiserver 1.34 prints them (labels sorted by name).
const METRICS = [
  '# HELP apiserver_admission_webhook_rejection_count [ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
  '# TYPE apiserver_admission_webhook_rejection_count counter',
  'apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="resourcedistributions.resource-distributor.io",operation="CREATE",rejection_code="500",type="validating"} 2',
  'apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="resourcedistributions.resource-distributor.io",operation="UPDATE",rejection_code="500",type="validating"} 1',
  'apiserver_admission_webhook_rejection_count{error_type="no_error",name="resourcedistributions.resource-distributor.io",operation="CREATE",rejection_code="403",type="validating"} 7',
  'apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="policy.example.com",operation="CREATE",rejection_code="500",type="validating"} 5',
  '# TYPE apiserver_admission_webhook_fail_open_count counter',
  'apiserver_admission_webhook_fail_open_count{name="pods.resource-distributor.io",type="validating"} 3',
  'apiserver_admission_webhook_fail_open_count{name="injection.pods.resource-distributor.io",type="admit"} 1',
  'apiserver_admission_webhook_request_total{code="200",name="pods.resource-distributor.io",operation="CREATE",rejected="false",type="validating"} 40',
].join('\n');

describe('webhookErrors', () => {
  it('counts our webhooks’ failed calls, closed and open, and nothing else (denials, other webhooks, requests)', () => {
    expect(webhookErrors(METRICS)).toEqual({
      'resourcedistributions.resource-distributor.io fail-closed': 3,
      'pods.resource-distributor.io fail-open': 3,
      'injection.pods.resource-distributor.io fail-open': 1,
    });
  });

  it('is empty when nothing failed yet (the series do not exist)', () => {
    expect(webhookErrors('apiserver_admission_webhook_request_total{code="200",name="pods.resource-distributor.io",operation="CREATE",rejected="false",type="validating"} 4\n')).toEqual({});
  });
});

describe('growth', () => {
  it.each<{ before: Record<string, number>; after: Record<string, number>; grown: Record<string, number> }>([
    { before: { a: 1 }, after: { a: 1 }, grown: {} },
    { before: { a: 1 }, after: { a: 3 }, grown: { a: 2 } },
    { before: {}, after: { a: 2 }, grown: { a: 2 } },
    // The API server restarted: its counts began again from 0.
    { before: { a: 5 }, after: { a: 2 }, grown: { a: 2 } },
    { before: { a: 5 }, after: {}, grown: {} },
  ])('$before -> $after', ({ before, after, grown }) => {
    expect(growth(before, after)).toEqual(grown);
  });
});

const fault = (kind: FaultKind, startedAt: number, recoveredAt: number): FaultRun => ({ kind, target: 'x', startedAt, recoveredAt });
const sample = (at: number, errors: Record<string, number>): { at: number; errors: Record<string, number> } => ({ at, errors });
const KEY = 'resourcedistributions.resource-distributor.io fail-closed';

describe('checkWebhookErrors', () => {
  it.each([
    { name: 'nothing failed', faults: [], before: sample(0, { [KEY]: 1 }), after: sample(10, { [KEY]: 1 }), violations: 0, tolerated: 0 },
    { name: 'failed with no fault', faults: [], before: sample(0, {}), after: sample(10, { [KEY]: 1 }), violations: 1, tolerated: 0 },
    { name: 'failed while the leader was killed', faults: [fault('kill-leader', 2, 8)], before: sample(0, {}), after: sample(10, { [KEY]: 2 }), violations: 0, tolerated: 2 },
    { name: 'failed while a replica was frozen', faults: [fault('stop-leader', 5, 20)], before: sample(0, {}), after: sample(10, { [KEY]: 1 }), violations: 0, tolerated: 1 },
    { name: 'a stretch after the replica was back', faults: [fault('kill-follower', 2, 8)], before: sample(9, {}), after: sample(20, { [KEY]: 1 }), violations: 1, tolerated: 0 },
    { name: 'a stretch before the kill', faults: [fault('kill-follower', 12, 18)], before: sample(0, {}), after: sample(10, { [KEY]: 1 }), violations: 1, tolerated: 0 },
    { name: 'failed while the API server restarted', faults: [fault('restart-apiserver', 2, 8)], before: sample(0, { [KEY]: 4 }), after: sample(10, { [KEY]: 1 }), violations: 1, tolerated: 0 },
    { name: 'failed while the replicas were cut off', faults: [fault('partition', 2, 8)], before: sample(0, {}), after: sample(10, { [KEY]: 1, 'pods.resource-distributor.io fail-open': 1 }), violations: 2, tolerated: 0 },
  ])('$name', ({ faults, before, after, violations, tolerated }) => {
    const found = checkWebhookErrors(before, after, faults);
    expect(found.violations).toHaveLength(violations);
    expect(found.tolerated).toBe(tolerated);
  });
});
