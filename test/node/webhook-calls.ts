// The API server's own count of its calls to the product's webhooks and to the CRD's conversion
// webhook (its /metrics), for the tests that disturb the product while requests keep arriving.
import { GROUP, PLURAL } from '../../src/domain/types.js';
import { run } from '../e2e/support/tools.js';

const CRD = `${PLURAL}.${GROUP}`;

/**
 * The API server's counts of its calls to our webhooks: all (apiserver_admission_webhook_request_total),
 * those that failed (not answered 200: a refused connection counts as 503), and the failures it let
 * pass under failurePolicy Ignore (apiserver_admission_webhook_fail_open_count).
 */
export interface WebhookCalls {
  calls: number;
  failed: number;
  failedOpen: number;
}

export async function webhookCalls(): Promise<WebhookCalls> {
  const { stdout } = await run('kubectl', ['get', '--raw', '/metrics']);
  const ours = stdout.split('\n').filter((line) => line.includes('.resource-distributor.io"'));
  const count = (lines: string[]): number => lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  const requests = ours.filter((line) => line.startsWith('apiserver_admission_webhook_request_total{'));
  const failedOpen = count(ours.filter((line) => line.startsWith('apiserver_admission_webhook_fail_open_count{')));
  return { calls: count(requests), failed: count(requests.filter((line) => !line.includes('code="200"'))), failedOpen };
}

export const callsBetween = (before: WebhookCalls, after: WebhookCalls): WebhookCalls => ({
  calls: after.calls - before.calls,
  failed: after.failed - before.failed,
  failedOpen: after.failedOpen - before.failedOpen,
});

export interface ConversionCalls {
  calls: number;
  failed: number;
  /** Failed calls by `from->to` version. */
  failedBy: Record<string, number>;
}

/** The API server's calls to the CRD's conversion webhook, all and failed. */
export async function conversionCalls(): Promise<ConversionCalls> {
  const { stdout } = await run('kubectl', ['get', '--raw', '/metrics']);
  const lines = stdout.split('\n').filter((line) => line.startsWith('apiserver_crd_conversion_webhook_duration_seconds_count{') && line.includes(`crd_name="${CRD}"`));
  const count = (found: string[]): number => found.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  const failed = lines.filter((line) => !line.includes('succeeded="true"'));
  const failedBy: Record<string, number> = {};
  for (const line of failed) {
    const [from = '', to = ''] = ['from_version', 'to_version'].map((label) => line.split(`${label}="`)[1]?.split('"')[0]);
    failedBy[`${from}->${to}`] = (failedBy[`${from}->${to}`] ?? 0) + Number(line.split(' ').at(-1));
  }
  return { calls: count(lines), failed: count(failed), failedBy };
}

/** The failed conversions between two counts, by way. */
export const failedBetween = (before: ConversionCalls, after: ConversionCalls | undefined): string =>
  Object.entries(after?.failedBy ?? {})
    .map(([way, count]) => `${way} ${String(count - (before.failedBy[way] ?? 0))}`)
    .join(', ');
