// The API server's own count of its calls to the product's webhooks (its /metrics), for the tests
// that disturb the product while requests keep arriving.
import { run } from '../e2e/support/tools.js';

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
