// AdmissionReview v1: decoding a request and the small vocabulary of answers (allowed, denied,
// errored) every webhook speaks. Nothing here knows about HTTP.

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';
export const ADMISSION_KIND = 'AdmissionReview';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionStatus {
  code: number;
  message: string;
  reason?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  patchType?: 'JSONPatch';
  /** base64 of the JSONPatch. */
  patch?: string;
  status?: AdmissionStatus;
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: typeof ADMISSION_KIND;
  response: AdmissionResponse;
}

/** What a webhook decided; `encodeReview` turns it into the wire format. */
export type Verdict =
  /** `patch`: a JSONPatch that mutates the object (mutating webhooks only). */
  | { decision: 'allowed'; warnings?: string[]; patch?: readonly unknown[] }
  | { decision: 'denied' | 'errored'; status: AdmissionStatus; warnings?: string[] };

export function allowed(warnings: readonly string[] = []): Verdict {
  return warnings.length > 0 ? { decision: 'allowed', warnings: [...warnings] } : { decision: 'allowed' };
}

/** Denied because the object is invalid: one line per problem. */
export function denied(lines: readonly string[], code = 422, reason = 'Invalid'): Verdict {
  return { decision: 'denied', status: { code, reason, message: lines.join('\n') } };
}

export function forbidden(lines: readonly string[]): Verdict {
  return denied(lines, 403, 'Forbidden');
}

/**
 * The webhook could not decide (a bug, or a dependency failed). The API server reads this as a
 * denial: its failurePolicy applies only when no answer comes at all, so a webhook that must fail
 * open answers `allowed` instead (see webhookRoute's `failOpen`).
 */
export function errored(message: string, code = 500): Verdict {
  return { decision: 'errored', status: { code, reason: 'InternalError', message } };
}

export function encodeReview(uid: string, verdict: Verdict): AdmissionReview {
  const response: AdmissionResponse = { uid, allowed: verdict.decision === 'allowed' };
  if (verdict.decision !== 'allowed') response.status = verdict.status;
  if (verdict.warnings && verdict.warnings.length > 0) response.warnings = verdict.warnings;
  if (verdict.decision === 'allowed' && verdict.patch !== undefined && verdict.patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(verdict.patch)).toString('base64');
  }
  return { apiVersion: ADMISSION_API_VERSION, kind: ADMISSION_KIND, response };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isGroupVersionKind(value: unknown): value is GroupVersionKind {
  return isRecord(value) && typeof value.group === 'string' && typeof value.version === 'string' && typeof value.kind === 'string';
}

const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';
const isStringList = (value: unknown): boolean => Array.isArray(value) && value.every((item) => typeof item === 'string');

/** Checked because it is sent on as the subject of SubjectAccessReviews. */
function isUserInfo(value: unknown): value is UserInfo | undefined {
  if (value === undefined) return true;
  if (!isRecord(value) || !isOptionalString(value.username) || !isOptionalString(value.uid)) return false;
  if (value.groups !== undefined && !isStringList(value.groups)) return false;
  return value.extra === undefined || (isRecord(value.extra) && Object.values(value.extra).every(isStringList));
}

/** What is wrong with `request`, if anything. */
function requestProblem(request: Record<string, unknown>): string | undefined {
  if (typeof request.uid !== 'string' || request.uid === '') return 'request.uid is missing';
  if (typeof request.operation !== 'string' || !OPERATIONS.includes(request.operation)) {
    return 'request.operation must be CREATE, UPDATE, DELETE or CONNECT';
  }
  if (!isGroupVersionKind(request.kind)) return 'request.kind must be a group/version/kind';
  if (!isOptionalString(request.name) || !isOptionalString(request.namespace)) return 'request.name and request.namespace must be strings';
  if (!isUserInfo(request.userInfo)) return 'request.userInfo is malformed';
  return undefined;
}

/**
 * The request of an AdmissionReview v1, or a reason why the body is not one. Only the fields the
 * webhooks rely on are checked; `object` and `oldObject` are left to the validators.
 */
export function decodeReview(body: unknown): { request: AdmissionRequest } | { error: string } {
  if (!isRecord(body)) return { error: 'body is not a JSON object' };
  if (body.apiVersion !== ADMISSION_API_VERSION || body.kind !== ADMISSION_KIND) {
    return { error: `expected apiVersion ${ADMISSION_API_VERSION}, kind ${ADMISSION_KIND}` };
  }
  const request = body.request;
  if (!isRecord(request)) return { error: 'request is missing' };
  const problem = requestProblem(request);
  if (problem !== undefined) return { error: problem };
  return {
    request: {
      ...(request as unknown as AdmissionRequest),
      userInfo: (request.userInfo as UserInfo | undefined) ?? {},
      dryRun: request.dryRun === true,
    },
  };
}
