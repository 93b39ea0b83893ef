/**
 * Errors the rest of the code can act on: transient ones are retried with backoff, terminal ones
 * are reported (status, Events) and wait for a change of the inputs.
 */
export class TransientError extends Error {
  override readonly name = 'TransientError';
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

export interface ApiErrorInfo {
  /** HTTP status, or 0 when the request never got an answer. */
  code: number;
  /** The Status `reason` (NotFound, AlreadyExists, Conflict, Forbidden, Invalid, ...) or a network code. */
  reason: string;
  /** The API server's message; it names objects, never their data. */
  message: string;
  transient: boolean;
}

function parseStatusBody(body: unknown): { reason?: string; message?: string } {
  if (typeof body === 'string') {
    try {
      return parseStatusBody(JSON.parse(body) as unknown);
    } catch {
      return {};
    }
  }
  if (body !== null && typeof body === 'object') {
    const status = body as { reason?: unknown; message?: unknown };
    return {
      reason: typeof status.reason === 'string' ? status.reason : undefined,
      message: typeof status.message === 'string' ? status.message : undefined,
    };
  }
  return {};
}

/** client-node's ApiException has a numeric `code`; its Watch rejects non-200 answers with `statusCode`. */
type ThrownShape = { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown; cause?: { code?: unknown } };

function describeHttpError(code: number, body: unknown): ApiErrorInfo {
  const status = parseStatusBody(body);
  return {
    code,
    reason: status.reason ?? `HTTP${code}`,
    message: status.message ?? `HTTP ${code}`,
    transient: code === 409 || code === 429 || code >= 500,
  };
}

/** A request that got no answer (connection refused, reset, timed out): always worth a retry. */
function describeNetworkError(err: ThrownShape | undefined, error: unknown): ApiErrorInfo {
  const netCode = [err?.code, err?.cause?.code].find((c): c is string => typeof c === 'string');
  const message = typeof err?.message === 'string' ? err.message : String(error);
  return { code: 0, reason: netCode ?? 'Unknown', message, transient: true };
}

/** Maps anything a Kubernetes client call can throw to one shape. */
export function describeApiError(error: unknown): ApiErrorInfo {
  const err = error as ThrownShape | undefined;
  if (typeof err?.code === 'number') return describeHttpError(err.code, err.body);
  if (typeof err?.statusCode === 'number') return describeHttpError(err.statusCode, err.body);
  return describeNetworkError(err, error);
}

export function isNotFound(error: unknown): boolean {
  return describeApiError(error).code === 404;
}

export function isAlreadyExists(error: unknown): boolean {
  const info = describeApiError(error);
  return info.code === 409 && info.reason === 'AlreadyExists';
}

export function isConflict(error: unknown): boolean {
  const info = describeApiError(error);
  return info.code === 409 && info.reason === 'Conflict';
}

/**
 * A write refused by an admission policy: a webhook that denied it, a ValidatingAdmissionPolicy, a
 * ResourceQuota. Final for that request, yet lifted by a change the controller does not watch (the
 * policy removed or changed): worth a few retries with backoff rather than a wait for the sweep.
 */
export function isPolicyDenial(info: ApiErrorInfo): boolean {
  if (info.transient || info.code < 400 || info.code >= 500) return false;
  return /admission webhook ".*" denied the request|ValidatingAdmissionPolicy .* denied request|exceeded quota/.test(info.message);
}
