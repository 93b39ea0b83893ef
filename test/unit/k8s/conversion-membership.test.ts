import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { conversionMembership, SERVES_CONVERSION_LABEL } from '../../../src/k8s/conversion-membership.js';
import { ApiError, type CallOptions, type KubeClient } from '../../../src/k8s/kube-client.js';
import { createLogger } from '../../../src/log.js';

interface Call {
  method: string;
  path: string;
  body: unknown;
  contentType: string | undefined;
}

/** A KubeClient whose requests answer in turn from `answers` (an error is thrown; past the end: success). */
function recordingClient(answers: (Error | 'ok' | Promise<void>)[] = []): { client: KubeClient; calls: Call[] } {
  const calls: Call[] = [];
  const client = {
    request: async (method: string, path: string, options?: CallOptions) => {
      calls.push({ method, path, body: options?.body, contentType: options?.contentType });
      const answer = answers.shift() ?? 'ok';
      if (answer instanceof Error) throw answer;
      if (answer !== 'ok') await answer;
      return {};
    },
  } as unknown as KubeClient;
  return { client, calls };
}

function logged(): { log: ReturnType<typeof createLogger>; lines: () => { msg: string; reason?: string }[] } {
  const chunks: string[] = [];
  const log = createLogger({ level: 'info', destination: new Writable({ write: (chunk: Buffer, _e, done) => (chunks.push(chunk.toString('utf8')), done()) }) });
  return { log, lines: () => chunks.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string; reason?: string }) };
}

const labelled = (value: 'true' | null): Partial<Call> => ({
  method: 'PATCH',
  path: '/api/v1/namespaces/resource-distributor/pods/rd-7f9c-x2k4p',
  body: { metadata: { labels: { [SERVES_CONVERSION_LABEL]: value } } },
  contentType: 'application/merge-patch+json',
});

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('conversionMembership', () => {
  const setup = (answers: (Error | 'ok' | Promise<void>)[] = []) => {
    const { client, calls } = recordingClient(answers);
    const { log, lines } = logged();
    const membership = conversionMembership({ client, namespace: 'resource-distributor', pod: 'rd-7f9c-x2k4p', log, retryMs: { first: 1, last: 4 } });
    return { membership, calls, lines };
  };

  it('labels its own pod on join (once, then says so) and takes the label off on leave', async () => {
    const { membership, calls, lines } = setup();
    let told = 0;
    expect(membership.joined).toBe(false);
    membership.join(() => told++);
    membership.join(() => told++);
    await until(() => lines().length === 1);
    expect(membership.joined).toBe(true);
    expect(told).toBe(1);
    await membership.leave();
    expect(membership.joined).toBe(false);
    expect(calls).toEqual([labelled('true'), labelled(null)]);
    expect(lines().map((line) => line.msg)).toEqual(['conversion Service joined', 'conversion Service left']);
  });

  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 10.96.0.1:443'), { code: 'ECONNREFUSED' })],
    ['the API server busy', new ApiError(429, { message: 'too many requests' })],
    ['RBAC without the pods rule', new ApiError(403, { message: 'pods "rd-7f9c-x2k4p" is forbidden' })],
  ])('retries a join that failed (%s) until it succeeds, saying why', async (_, error) => {
    const { membership, calls, lines } = setup([error, error]);
    membership.join();
    await until(() => lines().some((line) => line.msg === 'conversion Service joined'));
    expect(calls).toEqual([labelled('true'), labelled('true'), labelled('true')]);
    expect(lines().filter((line) => line.msg === 'conversion Service not joined').map((line) => line.reason)).toEqual([error.message, error.message]);
    await membership.leave();
  });

  it('a leave while joining fails stops the retries and still takes the label off', async () => {
    const forbidden = new ApiError(403, { message: 'forbidden' });
    const { membership, calls } = setup(Array.from({ length: 100 }, () => forbidden));
    membership.join();
    await until(() => calls.length >= 2);
    await membership.leave();
    const sent = calls.length;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.length).toBe(sent);
    expect(calls.at(-1)).toEqual(labelled(null));
  });

  it('a leave during a join in flight waits for it: the label never comes back after it went', async () => {
    let answer: () => void = () => undefined;
    const inFlight = new Promise<void>((resolve) => (answer = resolve));
    const { membership, calls } = setup([inFlight]);
    membership.join();
    const leaving = membership.leave();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(calls).toEqual([labelled('true')]);
    answer();
    await leaving;
    expect(calls).toEqual([labelled('true'), labelled(null)]);
  });

  it('a leave while a failing attempt is in flight does not wait out the backoff after it', async () => {
    let fail: () => void = () => undefined;
    const inFlight = new Promise<void>((_, reject) => (fail = () => reject(new ApiError(503, { message: 'unavailable' }))));
    const { client, calls } = recordingClient([inFlight]);
    const membership = conversionMembership({ client, namespace: 'resource-distributor', pod: 'rd-7f9c-x2k4p', log: logged().log, retryMs: { first: 60_000, last: 60_000 } });
    membership.join();
    const leaving = membership.leave();
    fail();
    const started = Date.now();
    await leaving;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(calls).toEqual([labelled('true'), labelled(null)]);
  });

  it('a failed leave is logged, not thrown: the shutdown goes on', async () => {
    const { membership, lines } = setup(['ok', new ApiError(503, { message: 'unavailable' })]);
    membership.join();
    await expect(membership.leave()).resolves.toBeUndefined();
    expect(lines().at(-1)).toMatchObject({ msg: 'conversion Service not left', reason: 'unavailable' });
  });
});
