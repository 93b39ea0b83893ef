import { Readable } from 'node:stream';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { deadlineFor, webhookRoute } from '../../../src/admission/webhook-route.js';
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/log.js';
import { createMetrics } from '../../../src/metrics.js';
import { distribution, base64 } from '../builders.js';
import { post, review, testApp, type ReviewResponse } from './review-builder.js';

const DISTRIBUTIONS = '/validate/resourcedistributions';

describe('admission HTTP contract', () => {
  it('answers 400 with a JSON message for malformed JSON', async () => {
    const { app } = testApp();
    const res = await post(app, DISTRIBUTIONS, '{"apiVersion": ');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ message: 'body is not valid JSON' });
  });

  it.each([
    { what: 'an array', body: [] },
    { what: 'another kind', body: { apiVersion: 'v1', kind: 'Pod' } },
    { what: 'v1beta1', body: { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: {} } },
    { what: 'no request', body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' } },
    { what: 'no uid', body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } } },
    { what: 'a malformed userInfo', body: { ...review().body(), request: { ...review().body().request as object, userInfo: { username: 7 } } } },
    { what: 'malformed userInfo extra', body: { ...review().body(), request: { ...review().body().request as object, userInfo: { extra: { scopes: 'all' } } } } },
    { what: 'a name that is not a string', body: { ...review().body(), request: { ...review().body().request as object, name: { a: 1 } } } },
  ])('answers 400 for a body that is not an AdmissionReview v1 ($what)', async ({ body }) => {
    const { app } = testApp();
    const res = await post(app, DISTRIBUTIONS, body);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/^not an AdmissionReview v1: /);
  });

  it('answers 415 for a wrong content type', async () => {
    const { app } = testApp();
    const res = await post(app, DISTRIBUTIONS, review().body(), { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(await res.json()).toEqual({ message: 'content type must be application/json' });
  });

  it('accepts a charset parameter on the content type', async () => {
    const { app } = testApp();
    const body = review().namespace('team-a').body();
    const res = await post(app, '/generate/namespaces', body, { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
  });

  it('answers 413 above the body limit, declared or streamed', async () => {
    const { app } = testApp({ bodyLimitBytes: 1024 });
    const big = review().distribution(distribution('big').secret('s').data({ k: base64('x'.repeat(4096)) }).build()).body();
    const declared = await post(app, DISTRIBUTIONS, big);
    expect(declared.status).toBe(413);

    const stream = Readable.toWeb(Readable.from([Buffer.from(JSON.stringify(big))]));
    const streamed = await app.request(DISTRIBUTIONS, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: stream,
      duplex: 'half',
    });
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toEqual({ message: 'body larger than 1024 bytes' });
  });

  it('answers, under the default body limit, an UPDATE of a distribution as large as etcd stores (old and new object: over 3 MiB)', async () => {
    const { app } = testApp({ bodyLimitBytes: loadConfig({}).bodyLimitBytes });
    // 1.5 MiB is etcd's default request limit; the review carries the object twice. Content under
    // the 1 MiB a Secret may hold, plus 10,000 excluded names.
    const data = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, base64('x'.repeat(48 * 1024))]));
    const excluded = Array.from({ length: 10_000 }, (_, i) => `team-${String(i).padStart(5, '0')}-${'n'.repeat(48)}`);
    const before = distribution('big').secret('s').data(data).allNamespaces().excluded(...excluded).build();
    const after = distribution('big').secret('s').data({ ...data, k0: base64('y'.repeat(48 * 1024)) }).allNamespaces().excluded(...excluded).build();
    const body = review().distribution(after).operation('UPDATE').oldObject(before).body();
    expect(JSON.stringify(body).length).toBeGreaterThan(3 * 1024 * 1024);
    const res = await post(app, DISTRIBUTIONS, body);
    expect(res.status).toBe(200);
    expect(((await res.json()) as ReviewResponse).response.allowed).toBe(true);
  });

  it('turns an exception in a webhook into a well-formed errored answer with the uid', async () => {
    const { app } = testApp({
      schema: () => {
        throw new Error('boom');
      },
    });
    const builder = review().distribution(distribution('x').configMap('c', { a: 'b' }).included('team-a').build());
    const res = await post(app, DISTRIBUTIONS, builder.body());
    expect(res.status).toBe(200);
    expect((await res.json()) as ReviewResponse).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: builder.requestUid, allowed: false, status: { code: 500, reason: 'InternalError', message: 'internal error while reviewing the request' } },
    });
  });

  it('answers errored with code 504 when a webhook does not decide in time', async () => {
    const { app, reviewer } = testApp({ deadlinesMs: { distributions: 50, namespaces: 50 } });
    reviewer.review = () => new Promise(() => undefined);
    const builder = review().distribution(distribution('slow').configMap('c', { a: 'b' }).included('team-a').build());
    const res = await post(app, DISTRIBUTIONS, builder.body());
    const body = (await res.json()) as ReviewResponse;
    expect(body.response).toMatchObject({ uid: builder.requestUid, allowed: false, status: { code: 504 } });
    expect(body.response.status?.message).toBe(
      "the webhook could not decide within 50 ms while checking the author's access (create, update configmaps in 1 namespace) (the time the API server gives it: the webhook configuration's timeoutSeconds)",
    );
  });

  it('takes the time the API server gives it (the timeout parameter), less a margin', async () => {
    const { app, reviewer } = testApp({ deadlinesMs: { distributions: 50, namespaces: 50 } });
    reviewer.review = () => new Promise(() => undefined);
    const builder = review().distribution(distribution('slow').configMap('c', { a: 'b' }).included('team-a').build());
    const started = performance.now();
    const res = await post(app, `${DISTRIBUTIONS}?timeout=500ms`, builder.body());
    const body = (await res.json()) as ReviewResponse;
    expect(body.response.status?.message).toMatch(/could not decide within 400 ms/);
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
  });

  it.each([
    ['5s', 50, 4000],
    ['30s', 50, 29_000],
    ['1m0s', 50, 59_000],
    ['2.5s', 50, 2000],
    ['800ms', 50, 640],
    [undefined, 50, 50],
    ['soon', 50, 50],
    ['0s', 50, 50],
  ])('timeout=%s gives a deadline (fallback %s ms) of %s ms', (parameter, fallback, expected) => {
    expect(deadlineFor(parameter, fallback)).toBe(expected);
  });

  it('fails open where asked: an exception or a missed deadline allows, and is counted as errored', async () => {
    const metrics = createMetrics();
    const app = new Hono();
    const options = { log: createLogger({ level: 'silent' }), metrics, bodyLimitBytes: 1024, deadlineMs: 50, failOpen: true };
    app.post('/throws', ...webhookRoute({ ...options, name: 'throws', webhook: () => { throw new Error('bug'); } }));
    app.post('/hangs', ...webhookRoute({ ...options, name: 'hangs', webhook: () => new Promise(() => undefined) }));
    for (const path of ['/throws', '/hangs']) {
      const builder = review().namespace('team-a');
      const body = (await (await post(app, path, builder.body())).json()) as ReviewResponse;
      expect(body.response).toEqual({ uid: builder.requestUid, allowed: true });
    }
    const text = await metrics.registry.metrics();
    expect(text).toContain('resource_distributor_admission_requests_total{webhook="throws",operation="CREATE",decision="errored"} 1');
    expect(text).toContain('resource_distributor_admission_requests_total{webhook="hangs",operation="CREATE",decision="errored"} 1');
  });

  it('never echoes the body of a malformed request in the answer or the logs', async () => {
    const { app, logs } = testApp();
    const secretValue = 'hunter2-do-not-echo';
    const res = await post(app, DISTRIBUTIONS, `{"request": {"object": {"data": {"password": "${secretValue}"}}`);
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain(secretValue);
    expect(JSON.stringify(logs)).not.toContain(secretValue);
  });

  it('logs one structured line per review, without object data', async () => {
    const { app, logs } = testApp();
    const secretValue = 'do-not-log-me';
    const builder = review().distribution(distribution('logged').secret('s', { password: secretValue }).included('team-a').build()).user('admin');
    await post(app, DISTRIBUTIONS, builder.body());
    const reviews = logs.filter((line) => line.msg === 'admission review');
    expect(reviews).toHaveLength(1);
    expect(reviews[0]).toMatchObject({
      uid: builder.requestUid,
      kind: 'ResourceDistribution',
      objectName: 'logged',
      operation: 'CREATE',
      webhook: 'distributions',
      decision: 'allowed',
      latencyMs: expect.any(Number),
    });
    const everything = JSON.stringify(logs);
    expect(everything).not.toContain(secretValue);
    expect(everything).not.toContain(base64(secretValue));
  });

  it('counts reviews by webhook, operation and decision', async () => {
    const { app, metrics } = testApp();
    await post(app, '/generate/namespaces', review().namespace('a').body());
    await post(app, DISTRIBUTIONS, review().distribution(distribution('bad').configMap('c').field('kind', 'Pod').build()).body());
    const text = await metrics.registry.metrics();
    expect(text).toContain('resource_distributor_admission_requests_total{webhook="namespaces",operation="CREATE",decision="allowed"} 1');
    expect(text).toContain('resource_distributor_admission_requests_total{webhook="distributions",operation="CREATE",decision="denied"} 1');
    expect(text).toContain('resource_distributor_admission_duration_seconds_count{webhook="distributions"} 1');
  });
});

describe('health, readiness and metrics endpoints', () => {
  it('serves /healthz always', async () => {
    const { app } = testApp({ readiness: () => ({ certificates: false, caches: false, serving: false }) });
    const res = await app.request('/healthz');
    expect(res.status).toBe(200);
  });

  it.each([
    { checks: { certificates: true, caches: true, serving: true }, status: 200 },
    { checks: { certificates: true, caches: false, serving: true }, status: 503 },
    { checks: { certificates: false, caches: true, serving: true }, status: 503 },
    { checks: { certificates: true, caches: true, serving: false }, status: 503 },
  ])('answers /readyz $status for $checks', async ({ checks, status }) => {
    const { app } = testApp({ readiness: () => checks });
    const res = await app.request('/readyz');
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ ready: status === 200, checks });
  });

  it('serves Prometheus text on /metrics', async () => {
    const { app } = testApp();
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toContain('resource_distributor_admission_requests_total');
  });

  it.each([
    { verdict: { status: 200 as const }, status: 200, retryAfter: null },
    { verdict: { status: 401 as const }, status: 401, retryAfter: null },
    { verdict: { status: 403 as const }, status: 403, retryAfter: null },
    { verdict: { status: 429 as const, retryAfterSeconds: 2 }, status: 429, retryAfter: '2' },
    { verdict: { status: 503 as const, retryAfterSeconds: 1 }, status: 503, retryAfter: '1' },
  ])('answers /metrics $status when scrape access says $verdict', async ({ verdict, status, retryAfter }) => {
    const { app } = testApp({ scrapeAccess: { check: () => Promise.resolve(verdict) } });
    const res = await app.request('/metrics', { headers: { authorization: 'Bearer t' } });
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe(retryAfter);
    if (status !== 200) expect(((await res.json()) as { message: string }).message).not.toBe('');
  });

  it('answers 404 in JSON for unknown paths', async () => {
    const { app } = testApp();
    const res = await post(app, '/mutate/anything', review().body());
    expect(res.status).toBe(404);
  });
});
