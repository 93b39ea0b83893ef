import { describe, expect, it } from 'vitest';
import { describeApiError, isAlreadyExists, isConflict, isNotFound, isPolicyDenial } from '../../../src/k8s/errors.js';
import { FakeApiError } from './fake-cluster.js';

/** What client-node's Watch throws for a non-200 answer to the watch request. */
function watchRejection(status: number): Error {
  return Object.assign(new Error('Gone'), { statusCode: status });
}

describe('describeApiError', () => {
  it.each<[string, unknown, { code: number; reason: string; transient: boolean }]>([
    ['an ApiException (Status body as a JSON string)', new FakeApiError(404, 'NotFound'), { code: 404, reason: 'NotFound', transient: false }],
    ['a conflict: retried', new FakeApiError(409, 'Conflict'), { code: 409, reason: 'Conflict', transient: true }],
    ['throttling: retried', new FakeApiError(429, 'TooManyRequests'), { code: 429, reason: 'TooManyRequests', transient: true }],
    ['a server error: retried', new FakeApiError(503, 'ServiceUnavailable'), { code: 503, reason: 'ServiceUnavailable', transient: true }],
    ['a refusal: final', new FakeApiError(403, 'Forbidden'), { code: 403, reason: 'Forbidden', transient: false }],
    ['a watch request answered 410', watchRejection(410), { code: 410, reason: 'HTTP410', transient: false }],
    ['a watch request answered 403', watchRejection(403), { code: 403, reason: 'HTTP403', transient: false }],
    ['no answer at all', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), { code: 0, reason: 'ECONNREFUSED', transient: true }],
    ['something else thrown', 'boom', { code: 0, reason: 'Unknown', transient: true }],
  ])('%s', (_, error, expected) => {
    expect(describeApiError(error)).toMatchObject(expected);
  });

  it.each<[string, unknown, [boolean, boolean, boolean]]>([
    ['NotFound', new FakeApiError(404, 'NotFound'), [true, false, false]],
    ['AlreadyExists', new FakeApiError(409, 'AlreadyExists'), [false, true, false]],
    ['Conflict', new FakeApiError(409, 'Conflict'), [false, false, true]],
  ])('classifies %s', (_, error, expected) => {
    expect([isNotFound(error), isAlreadyExists(error), isConflict(error)]).toEqual(expected);
  });
});

describe('isPolicyDenial', () => {
  const info = (code: number, message: string, transient = false) => ({ code, reason: 'X', message, transient });
  it.each([
    ['a webhook that denied it', info(403, 'admission webhook "deny.example.com" denied the request: no'), true],
    ['a ValidatingAdmissionPolicy', info(422, `configmaps "shared" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no`), true],
    ['a quota', info(403, 'secrets "s" is forbidden: exceeded quota: q, requested: count/secrets=1'), true],
    ['an invalid object', info(422, 'ConfigMap "x" is invalid: data[a b]: Invalid value'), false],
    ['RBAC', info(403, 'secrets is forbidden: User "u" cannot create resource "secrets"'), false],
    ['a webhook that could not be called (transient)', info(500, 'failed calling webhook "w": connection refused', true), false],
  ])('%s: %s', (_, error, expected) => {
    expect(isPolicyDenial(error)).toBe(expected);
  });
});
