import { describe, expect, it } from 'vitest';
import { objectSyncWebhook } from '../../../src/admission/object-sync-webhook.js';
import type { AdmissionRequest } from '../../../src/admission/review.js';
import { ANNOTATION_AUTHOR, authorValue } from '../../../src/domain/author.js';
import { CORE_REGISTRY } from '../../../src/domain/kinds.js';
import { distributionsOf, type ObjectSync } from '../../../src/domain/object-sync.js';
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

  it.each([
    ['a Helm release', { apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1' }, ['spec.source: source Secret platform/registry exists but is of type helm.sh/release.v1, which is never distributed: nothing is copied from it']],
    ['missing', null, ['spec.source: Secret platform/registry does not exist yet: its copies appear once it does']],
    ['an Opaque Secret', { apiVersion: 'v1', kind: 'Secret', type: 'Opaque' }, undefined],
  ] as const)('warns an allowed author of a source that is %s, as for a ResourceDistribution', async (_case, found, warnings) => {
    const reviewer = new FakeAccessReviewer().grant('olga', ['get', 'create', 'update'], 'secrets');
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [], findSource: () => Promise.resolve(found) })(request(spec), abandoned);
    expect(verdict).toEqual(warnings === undefined ? { decision: 'allowed' } : { decision: 'allowed', warnings });
  });

  it('denies, naming the destinations the author may not write', async () => {
    const reviewer = new FakeAccessReviewer().grant('olga', ['get', 'create', 'update'], 'secrets', 'platform').grant('olga', ['create', 'update'], 'secrets', 'team-a');
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] })(request(spec), abandoned);
    expect(verdict).toMatchObject({ decision: 'denied', status: { code: 403, message: 'spec.destinations: user "olga" may not create, update secrets in namespace "kube-system"' } });
  });

  it('lets DELETE and an update that leaves the spec as it is through, and denies malformed ones without asking', async () => {
    const reviewer = new FakeAccessReviewer();
    const webhook = objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] });
    expect(await webhook(request({}, 'DELETE'), abandoned)).toMatchObject({ decision: 'allowed' });
    const releasing = update(spec, spec, { finalizers: [] });
    expect(await webhook(releasing, abandoned)).toMatchObject({ decision: 'allowed' });
    expect(await webhook(request({ source: { kind: 'Pod', name: 'p' }, destinations: [] }), abandoned)).toMatchObject({ decision: 'denied', status: { code: 422 } });
    expect(reviewer.checks).toEqual([]);
  });

  it('checks a spec change of an ObjectSync being deleted like any other', async () => {
    const reviewer = new FakeAccessReviewer().grant('olga', ['get', 'create', 'update', 'delete'], 'secrets', 'platform');
    const webhook = objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] });
    const own = { source: { group: '', kind: 'Secret', name: 'registry' }, destinations: [{ namespace: 'platform', name: 'copy' }] };
    const bobs = { source: { group: '', kind: 'Secret', namespace: 'team-b', name: 'bobs' }, destinations: [{ namespace: 'team-b', name: 'copy' }] };
    const verdict = await webhook(update(own, bobs, { deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['example.com/hold'] }), abandoned);
    expect(verdict).toMatchObject({ decision: 'denied', status: { code: 403 } });
    expect((verdict as { status: { message: string } }).status.message).toContain('spec.source: user "olga" may not get secrets "bobs" in namespace "team-b"');
  });

  it.each([
    ['a destination removed', [{ namespace: 'team-a' }, { namespace: 'team-b' }], [{ namespace: 'team-a' }], ['delete secrets team-b'], 'may not delete secrets in namespace "team-b"'],
    ['every namespace narrowed to one', [{ namespace: '*' }], [{ namespace: 'team-a' }], ['delete secrets '], 'may not delete secrets in every namespace'],
    ['a destination renamed', [{ namespace: 'team-b' }], [{ namespace: 'team-b', name: 'other' }], ['delete secrets team-b'], 'may not delete secrets in namespace "team-b"'],
  ])('on UPDATE, asks to delete where the change stops writing a copy: %s', async (_case, before, after, asked, line) => {
    const reviewer = new FakeAccessReviewer().grant('olga', ['get', 'create', 'update', 'delete'], 'secrets', 'platform').grant('olga', ['create', 'update', 'delete'], 'secrets', 'team-a').grant('olga', ['create', 'update'], 'secrets', 'team-b');
    const source = { group: '', kind: 'Secret', name: 'registry' };
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] })(update({ source, destinations: before }, { source, destinations: after }), abandoned);
    const deletes = reviewer.checks.filter((c) => c.verb === 'delete').map((c) => `${c.verb} ${c.resource} ${c.namespace}`);
    expect(deletes).toEqual(asked);
    expect(verdict).toMatchObject({ decision: 'denied', status: { code: 403 } });
    expect((verdict as { status: { message: string } }).status.message).toContain(line);
  });
  it('on UPDATE, asks to delete where the source moves into a destination namespace (its copy there would go)', async () => {
    const reviewer = new FakeAccessReviewer().grant('olga', ['get', 'create', 'update', 'delete'], 'secrets', 'platform').grant('olga', ['get', 'create', 'update'], 'secrets');
    const destinations = [{ namespace: '*' }];
    const before = { source: { group: '', kind: 'Secret', name: 'registry' }, destinations };
    const after = { source: { group: '', kind: 'Secret', namespace: 'team-b', name: 'registry' }, destinations };
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer, forbiddenNamespaces: [] })(update(before, after), abandoned);
    expect(reviewer.checks.filter((c) => c.verb === 'delete').map((c) => c.namespace)).toEqual(['team-b']);
    expect(verdict).toMatchObject({
      decision: 'denied',
      status: { code: 403, message: 'spec.source.namespace: user "olga" may not delete secrets in namespace "team-b", where the source moves: the source\'s namespace is never a target, so the copy there would be deleted' },
    });
  });
});

function update(before: object, after: object, metadata: object = {}): AdmissionRequest {
  const next = request(after, 'UPDATE');
  const meta = { name: 'sync', namespace: 'platform', uid: 'os-uid' };
  next.object = { ...(next.object as object), metadata: { ...meta, ...metadata } };
  next.oldObject = { ...(request(before).object as object), metadata: meta };
  return next;
}

describe('ObjectSync webhook: the recorded author', () => {
  const OLGA = authorValue({ username: 'olga', groups: [] });
  const withAuthor = (req: AdmissionRequest, author: string | undefined): AdmissionRequest => {
    const object = req.object as { metadata: Record<string, unknown> };
    return { ...req, object: { ...object, metadata: { ...object.metadata, ...(author === undefined ? {} : { annotations: { [ANNOTATION_AUTHOR]: author } }) } } };
  };
  const reviewer = (): FakeAccessReviewer => new FakeAccessReviewer().grant('olga', ['get', 'create', 'update'], 'secrets');

  it.each<[string, string | undefined, string]>([
    ['its requester', OLGA, 'allowed'],
    ['someone else', authorValue({ username: 'admin', groups: ['system:masters'] }), 'denied'],
    ['nobody, where authors are recorded', undefined, 'denied'],
  ])('a create recording %s is %s', async (_name, author, decision) => {
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer(), forbiddenNamespaces: [], recordsAuthors: true })(withAuthor(request(spec), author), abandoned);
    expect(verdict).toMatchObject({ decision });
  });

  it('refuses an update that leaves the spec but renames the author', async () => {
    const renamed = { ...withAuthor(request(spec, 'UPDATE'), authorValue({ username: 'admin', groups: [] })), oldObject: withAuthor(request(spec), OLGA).object };
    const verdict = await objectSyncWebhook({ accessReviewer: reviewer(), forbiddenNamespaces: [], recordsAuthors: true })(renamed, abandoned);
    expect(verdict).toMatchObject({ decision: 'denied', status: { message: expect.stringContaining(ANNOTATION_AUTHOR) } });
  });

  it('hands the author on to the distributions it stands for', () => {
    const os = { ...(withAuthor(request(spec), OLGA).object as ObjectSync), metadata: { name: 'sync', namespace: 'platform', uid: 'os-1', annotations: { [ANNOTATION_AUTHOR]: OLGA } } };
    expect(distributionsOf(os, CORE_REGISTRY).map((rd) => rd.metadata.annotations?.[ANNOTATION_AUTHOR])).toEqual([OLGA, OLGA]);
  });
});
