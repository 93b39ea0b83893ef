import { describe, expect, it } from 'vitest';
import { objectSyncWebhook } from '../../../src/admission/object-sync-webhook.js';
import type { AdmissionRequest } from '../../../src/admission/review.js';
import { FakeAccessReviewer } from './review-builder.js';

function request(spec: object, operation: AdmissionRequest['operation'] = 'CREATE'): AdmissionRequest {
  return {
    uid: 'u',
    kind: { group: 'sync.rustrial.org', version: 'v1alpha1', kind: 'ObjectSync' },
    namespace: 'platform',
    operation,
    userInfo: { username: 'olga', groups: [] },
    object: { apiVersion: 'sync.rustrial.org/v1alpha1', kind: 'ObjectSync', metadata: { name: 'sync' }, spec },
  };
}

const abandoned = { signal: new AbortController().signal };
const spec = { source: { group: '', kind: 'Secret', name: 'registry' }, destinations: [{ namespace: 'team-a' }, { namespace: 'kube-system', name: 'pull' }] };

describe('ObjectSync webhook', () => {
  it('asks to read the source in the ObjectSync namespace and to write in every destination, kube-system included when named', async () => {
    const reviewer = new FakeAccessReviewer().grant('olga', ['get', 'create', 'update'], 'secrets');
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] })(request(spec), abandoned);
    expect(verdict).toMatchObject({ decision: 'allowed' });
    expect(reviewer.checks.map((c) => `${c.verb} ${c.resource} ${c.namespace}${c.name ? ` ${c.name}` : ''}`).sort()).toEqual([
      'create secrets kube-system',
      'create secrets team-a',
      'get secrets platform registry',
      'get secrets platform registry',
      'update secrets kube-system',
      'update secrets team-a',
    ]);
  });

  it('denies, naming the destinations the author may not write', async () => {
    const reviewer = new FakeAccessReviewer().grant('olga', ['get', 'create', 'update'], 'secrets', 'platform').grant('olga', ['create', 'update'], 'secrets', 'team-a');
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] })(request(spec), abandoned);
    expect(verdict).toMatchObject({ decision: 'denied', status: { code: 403, message: 'spec.destinations: user "olga" may not create, update secrets in namespace "kube-system"' } });
  });

  it('lets DELETE and an ObjectSync being deleted through, and denies malformed ones without asking', async () => {
    const reviewer = new FakeAccessReviewer();
    const webhook = objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] });
    expect(await webhook(request({}, 'DELETE'), abandoned)).toMatchObject({ decision: 'allowed' });
    const deleting = request({});
    (deleting.object as { metadata: object }).metadata = { name: 'sync', deletionTimestamp: '2024-01-01T00:00:00Z' };
    expect(await webhook(deleting, abandoned)).toMatchObject({ decision: 'allowed' });
    expect(await webhook(request({ source: { kind: 'Pod', name: 'p' }, destinations: [] }), abandoned)).toMatchObject({ decision: 'denied', status: { code: 422 } });
    expect(reviewer.checks).toEqual([]);
  });
});
