import { describe, expect, it } from 'vitest';
import { podWebhook } from '../../../src/admission/pod-webhook.js';
import type { AdmissionRequest } from '../../../src/admission/review.js';
import type { PodReferences } from '../../../src/domain/pod-references.js';
import { silentLog } from '../reconcile/harness.js';
import { review } from './review-builder.js';

const abandoned = { signal: new AbortController().signal };
const spec = { imagePullSecrets: [{ name: 'pull' }], containers: [{ name: 'c', image: 'nginx' }] };
const asRequest = (body: Record<string, unknown>): AdmissionRequest => body.request as AdmissionRequest;

function recording(answer: unknown): { calls: [string, PodReferences, boolean][]; webhook: ReturnType<typeof podWebhook> } {
  const calls: [string, PodReferences, boolean][] = [];
  const webhook = podWebhook({
    log: silentLog,
    materialize: (namespace, refs, options) => {
      calls.push([namespace, refs, options.dryRun]);
      return answer;
    },
  });
  return { calls, webhook };
}

describe('pod webhook', () => {
  it('hands a pod CREATE its namespace and references, and allows it once they are written', async () => {
    const { calls, webhook } = recording(Promise.resolve({ pending: 1 }));
    expect(await webhook(asRequest(review().pod('team-a', spec).body()), abandoned)).toEqual({ decision: 'allowed' });
    expect(calls.map(([ns, refs, dryRun]) => [ns, [...refs.secrets], dryRun])).toEqual([['team-a', ['pull'], false]]);
  });

  it('passes the dry-run flag on', async () => {
    const { calls, webhook } = recording({ pending: 0 });
    await webhook(asRequest(review().pod('team-a', spec).dryRun().body()), abandoned);
    expect(calls[0]?.[2]).toBe(true);
  });

  it.each([
    ['a failed write', () => Promise.reject(new Error('boom'))],
    [
      'an exception',
      () => {
        throw new Error('boom');
      },
    ],
  ])('never denies, even after %s', async (_what, answer) => {
    const webhook = podWebhook({ log: silentLog, materialize: answer });
    expect(await webhook(asRequest(review().pod('team-a', spec).body()), abandoned)).toEqual({ decision: 'allowed' });
  });

  it('ignores anything but a Pod CREATE', async () => {
    const { calls, webhook } = recording({ pending: 0 });
    await webhook(asRequest(review().pod('team-a', spec).operation('UPDATE').body()), abandoned);
    await webhook(asRequest(review().namespace('team-b').body()), abandoned);
    expect(calls).toEqual([]);
  });
});
