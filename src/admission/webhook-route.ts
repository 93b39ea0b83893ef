import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Context, Handler } from 'hono';
import { DeadlineExceeded, withDeadline } from '../k8s/deadline.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { allowed, decodeReview, encodeReview, errored, type AdmissionRequest, type Verdict } from './review.js';

/**
 * The HTTP side of every webhook, in one place: content type, body limit, JSON and AdmissionReview
 * decoding, a deadline, exception recovery that still echoes the uid, one log line and the
 * metrics. A webhook itself is a function from request to verdict and knows nothing of HTTP.
 */
/**
 * `abandoned.signal` is aborted once the answer has gone out without the webhook (the deadline
 * passed): start nothing more. Read it only when starting asynchronous work: it is created on first
 * use, so that a webhook answering at once (every pod, nearly always) costs no AbortController.
 */
export type Webhook = (request: AdmissionRequest, abandoned: Abandonment) => Verdict | Promise<Verdict>;

export interface Abandonment {
  readonly signal: AbortSignal;
  /** What the webhook is waiting for, said in the answer should the deadline pass first. */
  waitingFor?: string;
}

/** An Abandonment whose AbortController exists only once its signal has been asked for. */
function lazyAbandonment(): Abandonment & { abort(): void } {
  let controller: AbortController | undefined;
  return {
    get signal() {
      return (controller ??= new AbortController()).signal;
    },
    abort: () => controller?.abort(),
  };
}

const GO_UNITS_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, 'µs': 0.001, ns: 0.000_001 };

/** A Go duration as time.Duration.String() writes it (`5s`, `2.5s`, `1m0s`, `800ms`) in milliseconds. */
export function parseGoDuration(text: string | undefined): number | undefined {
  if (text === undefined || !/^((\d+(\.\d+)?)(h|ms|m|s|us|µs|ns))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, value, unit] of text.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(value) * (GO_UNITS_MS[unit ?? ''] ?? NaN);
  return Number.isFinite(total) && total > 0 ? total : undefined;
}

/**
 * The time to decide in: the API server says how long it waits (the `timeout` query parameter,
 * the webhook configuration's timeoutSeconds or what is left of the request); the answer must be
 * on its way a little before that. Without it, the configured deadline.
 */
export function deadlineFor(timeoutParameter: string | undefined, fallbackMs: number): number {
  const givenMs = parseGoDuration(timeoutParameter);
  if (givenMs === undefined) return fallbackMs;
  return Math.max(100, Math.floor(givenMs - Math.min(1000, givenMs / 5)));
}

export interface WebhookRouteOptions {
  /** Name used in logs and metrics. */
  name: string;
  webhook: Webhook;
  log: Logger;
  metrics: Metrics;
  bodyLimitBytes: number;
  /**
   * Answer `errored` rather than let the API server time out, when its request does not say how
   * long it waits (keep below the webhook's timeoutSeconds).
   */
  deadlineMs: number;
  /**
   * When the webhook fails or runs out of time: allow (the namespace webhook, which must never
   * block) rather than answer `errored`, which the API server treats as a denial.
   */
  failOpen?: boolean;
  /**
   * Log each review at debug instead of info: for a webhook every pod of the cluster goes through,
   * where a line per review would be noise (what it does of note is logged on its own).
   */
  quiet?: boolean;
}

function problem(c: Context, status: 400 | 413 | 415, message: string): Response {
  return c.json({ message }, status);
}

export function isJson(c: Context): boolean {
  return c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

export const TOO_LARGE = Symbol('too large');

/** Reads the Node.js request stream itself, stopping as soon as it passes the limit. */
async function readIncoming(incoming: IncomingMessage, limit: number): Promise<string | typeof TOO_LARGE> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) return TOO_LARGE;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * The body as text, or TOO_LARGE. A declared Content-Length over the limit is refused before
 * reading. Under @hono/node-server the socket's stream is read directly: going through the web
 * Request body (as hono's bodyLimit does) converts every request into web streams, which cost
 * several milliseconds per admission review.
 */
export async function readBody(c: Context, limit: number): Promise<string | typeof TOO_LARGE> {
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > limit) return TOO_LARGE;
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming !== undefined) return readIncoming(incoming, limit);
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  return bytes.byteLength > limit ? TOO_LARGE : new TextDecoder().decode(bytes);
}

/** The verdict to send, and the decision to count. */
interface Decided {
  verdict: Verdict;
  decision: Verdict['decision'];
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

function objectName(request: AdmissionRequest): string | undefined {
  if (request.name) return request.name;
  const metadata = (request.object as { metadata?: { name?: unknown } } | null | undefined)?.metadata;
  return typeof metadata?.name === 'string' ? metadata.name : undefined;
}

/** The answer when the webhook threw or ran out of time: `errored` (a 504 when out of time), or allowed when failing open. */
function failed(options: WebhookRouteOptions, request: AdmissionRequest, error: unknown, deadlineMs: number, waitingFor?: string): Decided {
  const { name, log } = options;
  // Its own deadline, or that of a call it waited for (an access review).
  const timedOut = error instanceof DeadlineExceeded;
  log.error({ webhook: name, uid: request.uid, err: error, waitingFor }, timedOut ? 'admission deadline exceeded' : 'admission webhook failed');
  if (options.failOpen === true) return { verdict: allowed(), decision: 'errored' };
  if (!timedOut) return { verdict: errored('internal error while reviewing the request'), decision: 'errored' };
  const what = waitingFor === undefined ? '' : ` while ${waitingFor}`;
  return {
    verdict: errored(`the webhook could not decide within ${deadlineMs} ms${what} (the time the API server gives it: the webhook configuration's timeoutSeconds)`, 504),
    decision: 'errored',
  };
}

function reviewLogFields(name: string, request: AdmissionRequest, { verdict, decision }: Decided, latencyMs: number): Record<string, unknown> {
  return {
    uid: request.uid,
    kind: request.kind.kind,
    objectName: objectName(request),
    operation: request.operation,
    dryRun: request.dryRun,
    webhook: name,
    decision,
    code: verdict.decision === 'allowed' ? undefined : verdict.status.code,
    latencyMs: Math.round(latencyMs * 100) / 100,
  };
}

export function webhookRoute(options: WebhookRouteOptions): [Handler] {
  const { name, webhook, log, metrics } = options;
  // Every pod of the cluster passes through some of these routes: the metric children are looked
  // up once per label set, not hashed anew for every review.
  const duration = metrics.admissionDuration.labels({ webhook: name });
  const counted = new Map<string, { inc(): void }>();
  const count = (operation: string, decision: string): void => {
    const key = `${operation}/${decision}`;
    let counter = counted.get(key);
    if (counter === undefined) counted.set(key, (counter = metrics.admissionRequests.labels({ webhook: name, operation, decision })));
    counter.inc();
  };

  const rejectMalformed = (c: Context, status: 400 | 413, message: string): Response => {
    count('UNKNOWN', 'bad-request');
    log.warn({ webhook: name, status, reason: message }, 'admission request rejected');
    // The rest of an oversize body was never read: the connection cannot carry another request.
    if (status === 413) c.header('Connection', 'close');
    return problem(c, status, message);
  };

  const what = `${name} webhook`;

  /**
   * The verdict to send, and the decision to count (`errored` even when failing open). A webhook
   * that decides synchronously needs no deadline: no timer could fire before it returns.
   */
  const decide = (request: AdmissionRequest, deadlineMs: number): Decided | Promise<Decided> => {
    let verdict: Verdict | Promise<Verdict>;
    const abandoned = lazyAbandonment();
    try {
      verdict = webhook(request, abandoned);
    } catch (error) {
      return failed(options, request, error, deadlineMs);
    }
    if (!isPromiseLike(verdict)) return { verdict, decision: verdict.decision };
    return withDeadline(Promise.resolve(verdict), deadlineMs, what).then(
      (decided) => ({ verdict: decided, decision: decided.decision }),
      (error: unknown) => {
        // Answered without it: queued work (access reviews) must not go on being sent.
        abandoned.abort();
        return failed(options, request, error, deadlineMs, abandoned.waitingFor);
      },
    );
  };

  const handle: Handler = async (c) => {
    const started = performance.now();
    if (!isJson(c)) return problem(c, 415, 'content type must be application/json');
    const text = await readBody(c, options.bodyLimitBytes);
    if (text === TOO_LARGE) return rejectMalformed(c, 413, `body larger than ${options.bodyLimitBytes} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      return rejectMalformed(c, 400, 'body is not valid JSON');
    }
    const decoded = decodeReview(body);
    if ('error' in decoded) return rejectMalformed(c, 400, `not an AdmissionReview v1: ${decoded.error}`);
    const { request } = decoded;

    const { verdict, decision } = await decide(request, deadlineFor(c.req.query('timeout'), options.deadlineMs));
    const latencyMs = performance.now() - started;
    count(request.operation, decision);
    duration.observe(latencyMs / 1000);
    const level = options.quiet === true ? 'debug' : 'info';
    if (log.isLevelEnabled(level)) {
      log[level](reviewLogFields(name, request, { verdict, decision }, latencyMs), 'admission review');
    }
    return c.json(encodeReview(request.uid, verdict));
  };

  return [handle];
}
