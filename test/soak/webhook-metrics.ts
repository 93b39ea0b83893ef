// Admission failures as the API server's own metrics report them (README: "Guarantees under
// random faults"). Every call to one of our webhooks that the API server could not complete is
// counted there: under failurePolicy Fail in
// `apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error"}` (the change
// is refused), under Ignore in `apiserver_admission_webhook_fail_open_count` (it is let through
// unchecked: a namespace or pod that our webhooks did not see). Either may grow only while a
// replica is killed or frozen and not back yet; any growth over a stretch with no such fault is a
// violation. Pure.
import { REPLICA_FAULTS } from './check-refusals.js';
import type { FaultRun } from './faults.js';
import { violation, type Violation } from './violation.js';

/** Our webhooks' names end with this (resourcedistributions., objectsyncs., namespaces., pods., ...). */
export const OUR_WEBHOOKS = '.resource-distributor.io';

/** Failed calls by `<webhook name> <fail-closed|fail-open>`. */
export type WebhookErrors = Record<string, number>;

export interface WebhookSample {
  /** When the counts were read (the response's arrival). */
  at: number;
  errors: WebhookErrors;
}

function labelsOf(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
}

/** Our webhooks' failed calls in the text of the API server's /metrics. */
export function webhookErrors(metrics: string): WebhookErrors {
  const errors: WebhookErrors = {};
  for (const [, series = '', labelText = '', value = '0'] of metrics.matchAll(/^(apiserver_admission_webhook_(?:rejection|fail_open)_count)\{([^}]*)\} (\S+)$/gm)) {
    const labels = labelsOf(labelText);
    const name = labels.name ?? '';
    if (!name.endsWith(OUR_WEBHOOKS)) continue;
    const closed = series === 'apiserver_admission_webhook_rejection_count';
    if (closed && labels.error_type !== 'calling_webhook_error') continue;
    const key = `${name} ${closed ? 'fail-closed' : 'fail-open'}`;
    errors[key] = (errors[key] ?? 0) + Number(value);
  }
  return errors;
}

/**
 * How much each count grew from `before` to `after`. A count lower than before was reset (the
 * API server restarted): its growth is its new value, as Prometheus' increase() takes it; what
 * failed between the last read and the restart is lost with the old process.
 */
export function growth(before: WebhookErrors, after: WebhookErrors): WebhookErrors {
  const grown: WebhookErrors = {};
  for (const [key, now] of Object.entries(after)) {
    const was = before[key] ?? 0;
    const delta = now >= was ? now - was : now;
    if (delta > 0) grown[key] = delta;
  }
  return grown;
}

export interface WebhookErrorCheck {
  violations: Violation[];
  /** Failed calls while a replica was killed or frozen and not back yet. */
  tolerated: number;
}

/** A fault that takes a replica away, under way at some moment of [from, to]. */
function replicaFaultDuring(from: number, to: number, faults: readonly FaultRun[]): FaultRun | undefined {
  return faults.find((f) => REPLICA_FAULTS.includes(f.kind) && f.startedAt <= to && f.recoveredAt >= from);
}

/** The failed calls counted between two reads of the API server's metrics, against the faults of that stretch. */
export function checkWebhookErrors(before: WebhookSample, after: WebhookSample, faults: readonly FaultRun[]): WebhookErrorCheck {
  const grown = Object.entries(growth(before.errors, after.errors));
  const total = grown.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return { violations: [], tolerated: 0 };
  if (replicaFaultDuring(before.at, after.at, faults)) return { violations: [], tolerated: total };
  const stretch = `${new Date(before.at).toISOString().slice(11, 23)}-${new Date(after.at).toISOString().slice(11, 23)}`;
  const violations = grown.map(([key, n]) => {
    const [name = '', how = ''] = key.split(' ');
    return violation('webhook-call-failed', `${name} (${how})`, `the API server counted ${n} failed call${n === 1 ? '' : 's'} between ${stretch} UTC, while no replica was killed or frozen`);
  });
  return { violations, tolerated: 0 };
}
