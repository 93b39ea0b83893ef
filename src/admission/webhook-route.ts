import { performance } from 'node:perf_hooks';
import type { Context, Handler, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { decodeReview, encodeReview, errored, type AdmissionRequest, type Verdict } from './review.js';

/**
 * The HTTP side of every webhook, in one place: content type, body limit, JSON and AdmissionReview
 * decoding, a deadline, exception recovery that still echoes the uid, one log line and the
 * metrics. A webhook itself is a function from request to verdict and knows nothing of HTTP.
 */
export type Webhook = (request: AdmissionRequest) => Verdict | Promise<Verdict>;

export interface WebhookRouteOptions {
  /** Name used in logs and metrics. */
  name: string;
  webhook: Webhook;
  log: Logger;
  metrics: Metrics;
  bodyLimitBytes: number;
  /** Answer `errored` rather than let the API server time out (keep below the webhook's timeoutSeconds). */
  deadlineMs: number;
}

function problem(c: Context, status: 400 | 413 | 415, message: string): Response {
  return c.json({ message }, status);
}

function requireJson(): MiddlewareHandler {
  return async (c, next) => {
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') return problem(c, 415, 'content type must be application/json');
    await next();
    return undefined;
  };
}

class DeadlineExceeded extends Error {
  override readonly name = 'DeadlineExceeded';
}

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(`no decision within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function objectName(request: AdmissionRequest): string | undefined {
  if (request.name) return request.name;
  const metadata = (request.object as { metadata?: { name?: unknown } } | null | undefined)?.metadata;
  return typeof metadata?.name === 'string' ? metadata.name : undefined;
}

export function webhookRoute(options: WebhookRouteOptions): [MiddlewareHandler, MiddlewareHandler, Handler] {
  const { name, webhook, log, metrics } = options;

  const rejectMalformed = (c: Context, status: 400 | 413, message: string): Response => {
    metrics.admissionRequests.inc({ webhook: name, operation: 'UNKNOWN', decision: 'bad-request' });
    log.warn({ webhook: name, status, reason: message }, 'admission request rejected');
    return problem(c, status, message);
  };

  const decide = async (request: AdmissionRequest): Promise<Verdict> => {
    try {
      return await withDeadline(Promise.resolve().then(() => webhook(request)), options.deadlineMs);
    } catch (error) {
      const timedOut = error instanceof DeadlineExceeded;
      log.error({ webhook: name, uid: request.uid, err: error }, timedOut ? 'admission deadline exceeded' : 'admission webhook failed');
      return timedOut ? errored('the webhook could not decide in time', 504) : errored('internal error while reviewing the request');
    }
  };

  const handle: Handler = async (c) => {
    const started = performance.now();
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text()) as unknown;
    } catch {
      return rejectMalformed(c, 400, 'body is not valid JSON');
    }
    const decoded = decodeReview(body);
    if ('error' in decoded) return rejectMalformed(c, 400, `not an AdmissionReview v1: ${decoded.error}`);
    const { request } = decoded;

    const verdict = await decide(request);
    const latencyMs = performance.now() - started;
    metrics.admissionRequests.inc({ webhook: name, operation: request.operation, decision: verdict.decision });
    metrics.admissionDuration.observe({ webhook: name }, latencyMs / 1000);
    log.info(
      {
        uid: request.uid,
        kind: request.kind.kind,
        objectName: objectName(request),
        operation: request.operation,
        dryRun: request.dryRun,
        webhook: name,
        decision: verdict.decision,
        code: verdict.decision === 'allowed' ? undefined : verdict.status.code,
        latencyMs: Math.round(latencyMs * 100) / 100,
      },
      'admission review',
    );
    return c.json(encodeReview(request.uid, verdict));
  };

  const limit = bodyLimit({
    maxSize: options.bodyLimitBytes,
    onError: (c) => rejectMalformed(c, 413, `body larger than ${options.bodyLimitBytes} bytes`),
  });
  return [requireJson(), limit, handle];
}
