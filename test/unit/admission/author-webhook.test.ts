import { describe, expect, it } from 'vitest';
import { ANNOTATION_AUTHOR, authorValue } from '../../../src/domain/author.js';
import { distribution } from '../builders.js';
import { admit, review, testApp, type ReviewBuilder } from './review-builder.js';

const ALICE = authorValue({ username: 'alice', groups: ['system:authenticated'] });
const ADMIN = authorValue({ username: 'admin', groups: ['system:authenticated'] });

function settings(data: Record<string, string>, author?: string): ReturnType<ReturnType<typeof distribution>['build']> {
  const rd = distribution('settings').configMap('settings', data).included('team-a').build();
  if (author !== undefined) rd.metadata.annotations = { ...rd.metadata.annotations, [ANNOTATION_AUTHOR]: author };
  return rd;
}

interface Patched {
  allowed: boolean;
  patch?: unknown;
}

async function mutate(builder: ReviewBuilder): Promise<Patched> {
  const { app } = testApp();
  const response = (await admit(app, 'distributionAuthors', builder)) as Patched & { patch?: string };
  return { allowed: response.allowed, ...(response.patch === undefined ? {} : { patch: JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as unknown }) };
}

describe('the author webhook (mutating)', () => {
  it.each<[string, ReviewBuilder, unknown]>([
    ['a create records its requester', review().distribution(settings({ a: '1' })).user('alice'), [{ op: 'add', path: '/metadata/annotations', value: { [ANNOTATION_AUTHOR]: ALICE } }]],
    [
      'a forged author is replaced by the requester',
      review().distribution(settings({ a: '1' }, ADMIN)).user('alice'),
      [{ op: 'add', path: '/metadata/annotations/resource-distributor.io~1author', value: ALICE }],
    ],
    [
      'a spec change records its requester',
      review().distribution(settings({ a: '2' }, ADMIN)).operation('UPDATE').oldObject(settings({ a: '1' }, ADMIN)).user('alice'),
      [{ op: 'add', path: '/metadata/annotations/resource-distributor.io~1author', value: ALICE }],
    ],
    [
      'a label change keeps the old author, whatever the request says',
      review().distribution(settings({ a: '1' }, ALICE)).operation('UPDATE').oldObject(settings({ a: '1' }, ADMIN)).user('alice'),
      [{ op: 'add', path: '/metadata/annotations/resource-distributor.io~1author', value: ADMIN }],
    ],
    ['a label change of a distribution from before records nobody', review().distribution(settings({ a: '1' }, ALICE)).operation('UPDATE').oldObject(settings({ a: '1' })).user('alice'), [
      { op: 'remove', path: '/metadata/annotations/resource-distributor.io~1author' },
    ]],
  ])('%s', async (_name, builder, patch) => {
    expect(await mutate(builder)).toEqual({ allowed: true, patch });
  });

  it('leaves a record that is already right as it is', async () => {
    expect(await mutate(review().distribution(settings({ a: '1' }, ALICE)).user('alice'))).toEqual({ allowed: true });
  });
});

describe('the distribution webhook guards the author', () => {
  it.each<[string, ReviewBuilder, boolean, boolean]>([
    ['a create recording its requester', review().distribution(settings({ a: '1' }, ALICE)).user('alice'), true, true],
    ['a create naming someone else', review().distribution(settings({ a: '1' }, ADMIN)).user('alice'), true, false],
    ['a create recording nobody where authors are recorded', review().distribution(settings({ a: '1' })).user('alice'), true, false],
    ['a create recording nobody where they are not', review().distribution(settings({ a: '1' })).user('alice'), false, true],
    ['a label change keeping the author', review().distribution(settings({ a: '1' }, ADMIN)).operation('UPDATE').oldObject(settings({ a: '1' }, ADMIN)).user('alice'), true, true],
    ['a label change renaming the author', review().distribution(settings({ a: '1' }, ALICE)).operation('UPDATE').oldObject(settings({ a: '1' }, ADMIN)).user('alice'), true, false],
    ['a label change removing the author', review().distribution(settings({ a: '1' })).operation('UPDATE').oldObject(settings({ a: '1' }, ADMIN)).user('alice'), false, false],
  ])('%s (authors recorded: %s): allowed %s', async (_name, builder, recordsAuthors, allowed) => {
    const { app, reviewer } = testApp({ recordsAuthors });
    reviewer.grant('alice', ['create', 'update'], 'configmaps');
    const response = await admit(app, 'distributions', builder);
    expect(response.allowed).toBe(allowed);
    if (!allowed) expect(response.status?.message).toContain(`metadata.annotations[${ANNOTATION_AUTHOR}]`);
  });
});
