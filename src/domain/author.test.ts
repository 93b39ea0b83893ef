import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_AUTHOR,
  authorPatch,
  authorProblem,
  authorValue,
  expectedAuthor,
  parseAuthor,
  sourceDecision,
  type Author,
  type AuthorInput,
  type RememberedVerdict,
  type SourceDecision,
} from './author.js';

const alice: Author = { username: 'alice', uid: 'u-1', groups: ['system:authenticated', 'team-a'] };
const admin: Author = { username: 'admin', groups: ['system:masters'] };
const ALICE = authorValue(alice);
const ADMIN = authorValue(admin);

describe('authorValue and parseAuthor', () => {
  it.each<[string, Author]>([
    ['a user with uid and groups', alice],
    ['a user without uid', admin],
    ['a ServiceAccount token with extra', { username: 'system:serviceaccount:team-a:ci', groups: [], extra: { 'authentication.kubernetes.io/pod-name': ['ci-1'] } }],
  ])('%s reads back as written', (_name, author) => {
    expect(parseAuthor(authorValue(author))).toEqual(author);
  });

  it('writes the same bytes whatever the order of keys', () => {
    expect(authorValue({ groups: ['g'], username: 'u', extra: { b: ['1'], a: ['2'] } })).toBe(authorValue({ username: 'u', extra: { a: ['2'], b: ['1'] }, groups: ['g'] }));
  });

  it.each([['not json', '{'], ['no username', '{"groups":[]}'], ['empty username', '{"username":"","groups":[]}'], ['groups not a list', '{"username":"a","groups":"g"}'], ['extra not lists', '{"username":"a","groups":[],"extra":{"k":"v"}}'], ['null', 'null']])(
    '%s is unreadable',
    (_name, value) => {
      expect(parseAuthor(value)).toBe('unreadable');
    },
  );
});

describe('expectedAuthor and authorProblem', () => {
  const create = (user: Author): AuthorInput => ({ operation: 'CREATE', user, specChanged: true });
  const update = (user: Author, specChanged: boolean, old?: string): AuthorInput => ({ operation: 'UPDATE', user, specChanged, old });

  it.each<[string, AuthorInput, string | undefined]>([
    ['a create records its requester', create(alice), ALICE],
    ['a spec change records its requester', update(admin, true, ALICE), ADMIN],
    ['a spec change of a distribution from before records its requester', update(alice, true, undefined), ALICE],
    ['an update that leaves spec keeps the old author', update(admin, false, ALICE), ALICE],
    ['an update that leaves spec of a distribution from before records nobody', update(admin, false, undefined), undefined],
  ])('%s', (_name, input, expected) => {
    expect(expectedAuthor(input)).toBe(expected);
  });

  it.each<[string, AuthorInput, string | undefined, boolean, boolean]>([
    ['a create recording its requester', create(alice), ALICE, true, true],
    ['a create naming someone else', create(alice), ADMIN, true, false],
    ['a create recording nobody, where authors are recorded', create(alice), undefined, true, false],
    ['a create recording nobody, where no mutating webhook records them', create(alice), undefined, false, true],
    ['a create naming someone else, where no mutating webhook records them', create(alice), ADMIN, false, false],
    ['a spec change recording its requester', update(alice, true, ADMIN), ALICE, true, true],
    ['a spec change keeping the old author', update(alice, true, ADMIN), ADMIN, true, false],
    ['a label change keeping the author', update(alice, false, ADMIN), ADMIN, true, true],
    ['a label change naming its requester instead', update(alice, false, ADMIN), ALICE, true, false],
    ['a label change removing the author', update(alice, false, ADMIN), undefined, true, false],
    ['a label change removing the author, where none are recorded', update(alice, false, ADMIN), undefined, false, false],
    ['a label change naming someone on a distribution from before', update(alice, false, undefined), ALICE, true, false],
    ['a label change on a distribution from before', update(alice, false, undefined), undefined, true, true],
  ])('%s: allowed %s', (_name, input, recorded, required, ok) => {
    const problem = authorProblem({ ...input, recorded, required });
    expect(problem === undefined).toBe(ok);
    if (problem !== undefined) expect(problem).toContain(`metadata.annotations[${ANNOTATION_AUTHOR}]`);
  });
});

describe('authorPatch', () => {
  const withAnnotations = (annotations?: Record<string, string>): unknown => ({ metadata: { name: 'rd', ...(annotations ? { annotations } : {}) } });
  const PATH = '/metadata/annotations/resource-distributor.io~1author';

  it.each<[string, unknown, string | undefined, unknown[]]>([
    ['no annotations yet', withAnnotations(), ALICE, [{ op: 'add', path: '/metadata/annotations', value: { [ANNOTATION_AUTHOR]: ALICE } }]],
    ['other annotations', withAnnotations({ team: 'a' }), ALICE, [{ op: 'add', path: PATH, value: ALICE }]],
    ['a forged author', withAnnotations({ [ANNOTATION_AUTHOR]: ADMIN }), ALICE, [{ op: 'add', path: PATH, value: ALICE }]],
    ['already recorded', withAnnotations({ [ANNOTATION_AUTHOR]: ALICE }), ALICE, []],
    ['an author where none may be', withAnnotations({ [ANNOTATION_AUTHOR]: ADMIN }), undefined, [{ op: 'remove', path: PATH }]],
    ['nothing where none may be', withAnnotations(), undefined, []],
  ])('%s', (_name, object, value, patch) => {
    expect(authorPatch(object, value)).toEqual(patch);
  });
});

describe('sourceDecision', () => {
  const source = { uid: 's-1', resourceVersion: '10' };
  const key = `s-1/10/${ALICE}`;
  it.each<[string, string | undefined, RememberedVerdict | undefined, SourceDecision]>([
    ['a distribution from before is not checked', undefined, undefined, { kind: 'unchecked' }],
    ['first sight of the source asks', ALICE, undefined, { kind: 'ask', key, author: alice }],
    ['the same source version keeps the answer', ALICE, { key, allowed: false, message: 'no' }, { kind: 'known', allowed: false, message: 'no' }],
    ['a new version of the source asks again', ALICE, { key: `s-1/9/${ALICE}`, allowed: true }, { kind: 'ask', key, author: alice }],
    ['another object of that name asks again', ALICE, { key: `s-0/10/${ALICE}`, allowed: true }, { kind: 'ask', key, author: alice }],
    ['another author asks again', ALICE, { key: `s-1/10/${ADMIN}`, allowed: true }, { kind: 'ask', key, author: alice }],
  ])('%s', (_name, recorded, remembered, decision) => {
    expect(sourceDecision(recorded, source, remembered)).toEqual(decision);
  });

  it('refuses a record admission would never write', () => {
    expect(sourceDecision('{"username":1}', source, undefined)).toMatchObject({ kind: 'refuse' });
  });
});
