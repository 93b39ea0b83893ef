// The CRD's conversion webhook: the API server sends a ConversionReview whenever it reads or writes
// a ResourceDistribution in a version other than the one it is stored in. The conversion itself is
// pure (domain/conversion.ts); this is the ConversionReview around it.
import type { Context, Handler } from 'hono';
import { convertDistribution } from '../domain/conversion.js';
import { asRecord, type UnknownRecord } from '../domain/field-problem.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { isJson, readBody, TOO_LARGE } from './webhook-route.js';

const REVIEW_API_VERSION = 'apiextensions.k8s.io/v1';
const REVIEW_KIND = 'ConversionReview';

export type ReviewAnswer = { status: 200; body: UnknownRecord } | { status: 400; message: string };

function failure(uid: unknown, message: string): UnknownRecord {
  return { apiVersion: REVIEW_API_VERSION, kind: REVIEW_KIND, response: { uid, result: { status: 'Failure', message } } };
}

/**
 * The answer to a ConversionReview: every object in the desired version, or a Failure naming the
 * first object that could not be converted (the API server then fails the request that needed it).
 */
export function answerConversionReview(review: unknown): ReviewAnswer {
  const body = asRecord(review);
  const request = asRecord(body?.request);
  if (body?.apiVersion !== REVIEW_API_VERSION || body.kind !== REVIEW_KIND || request === undefined) {
    return { status: 400, message: `expected apiVersion ${REVIEW_API_VERSION}, kind ${REVIEW_KIND}, with a request` };
  }
  const { uid, desiredAPIVersion, objects } = request;
  if (typeof uid !== 'string' || typeof desiredAPIVersion !== 'string' || !Array.isArray(objects)) {
    return { status: 400, message: 'request.uid, request.desiredAPIVersion and request.objects are required' };
  }
  return { status: 200, body: convertAll(uid, desiredAPIVersion, objects) };
}

function convertAll(uid: string, desiredAPIVersion: string, objects: unknown[]): UnknownRecord {
  const convertedObjects: UnknownRecord[] = [];
  for (const object of objects) {
    const record = asRecord(object) ?? {};
    const result = convertDistribution(record, desiredAPIVersion);
    if (!result.ok) {
      const name = asRecord(record.metadata)?.name;
      return failure(uid, `resourcedistribution ${typeof name === 'string' ? name : '(no name)'}: ${result.message}`);
    }
    convertedObjects.push(result.object);
  }
  return { apiVersion: REVIEW_API_VERSION, kind: REVIEW_KIND, response: { uid, convertedObjects, result: { status: 'Success' } } };
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

export interface ConversionRouteOptions {
  log: Logger;
  metrics: Metrics;
  bodyLimitBytes: number;
}

/** POST /convert. Failures are logged with the object's name only, never its content. */
export function conversionRoute({ log, metrics, bodyLimitBytes }: ConversionRouteOptions): Handler {
  const count = (version: string, decision: string): void => metrics.admissionRequests.labels({ webhook: 'conversion', operation: version, decision }).inc();
  /** One count per review; a refusal also logged (the object's name and why, never its content). */
  const report = (body: UnknownRecord, desiredAPIVersion: unknown): void => {
    const response = asRecord(body.response);
    const result = asRecord(response?.result);
    const desired = String(desiredAPIVersion);
    if (result?.status === 'Failure') log.warn({ uid: response?.uid, desiredAPIVersion: desired, reason: result.message }, 'conversion refused');
    count(desired, result?.status === 'Success' ? 'converted' : 'failed');
  };
  return async (c: Context) => {
    if (!isJson(c)) return c.json({ message: 'expected content-type application/json' }, 415);
    const text = await readBody(c, bodyLimitBytes);
    if (text === TOO_LARGE) {
      c.header('Connection', 'close');
      return c.json({ message: `request body over ${bodyLimitBytes} bytes` }, 413);
    }
    const parsed = parseJson(text);
    const answer = parsed === NOT_JSON ? ({ status: 400, message: 'request body is not JSON' } as const) : answerConversionReview(parsed);
    if (answer.status === 400) {
      count('UNKNOWN', 'bad-request');
      return c.json({ message: answer.message }, 400);
    }
    report(answer.body, asRecord(asRecord(parsed)?.request)?.desiredAPIVersion);
    return c.json(answer.body, 200);
  };
}
