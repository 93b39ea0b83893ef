import { describe, expect, it } from 'vitest';
import { startsGeneration } from '../../../src/admission/namespace-webhook.js';
import type { AdmissionRequest } from '../../../src/admission/review.js';
import { distribution } from '../builders.js';
import { admit, review, testApp } from './review-builder.js';

describe('namespace webhook', () => {
  it('hands a created namespace to the generator and allows it', async () => {
    const { app, admitted } = testApp();
    const response = await admit(app, 'namespaces', review().namespace('team-a', {}, 'uid-1'));
    expect(response.allowed).toBe(true);
    expect(admitted).toEqual([{ name: 'team-a', uid: 'uid-1' }]);
  });

  it('does nothing for a dry run', async () => {
    const { app, admitted } = testApp();
    const response = await admit(app, 'namespaces', review().namespace('team-a').dryRun());
    expect(response.allowed).toBe(true);
    expect(admitted).toEqual([]);
  });

  it('still allows the namespace when the generator throws', async () => {
    const { app } = testApp({
      onNamespaceAdmitted: () => {
        throw new Error('queue closed');
      },
    });
    const response = await admit(app, 'namespaces', review().namespace('team-a'));
    expect(response.allowed).toBe(true);
  });

  it.each([
    { when: 'a CREATE', build: () => review().namespace('n'), expected: true },
    { when: 'a dry-run CREATE', build: () => review().namespace('n').dryRun(), expected: false },
    { when: 'an UPDATE changing labels', build: () => review().namespace('n', { env: 'prod' }).operation('UPDATE').oldNamespaceLabels({}), expected: true },
    { when: 'an UPDATE keeping labels', build: () => review().namespace('n', { env: 'prod' }).operation('UPDATE').oldNamespaceLabels({ env: 'prod' }), expected: false },
    { when: 'a dry-run UPDATE changing labels', build: () => review().namespace('n', { a: 'b' }).operation('UPDATE').oldNamespaceLabels({}).dryRun(), expected: false },
    { when: 'a DELETE', build: () => review().namespace('n').operation('DELETE'), expected: false },
    { when: 'another kind (a misrouted review)', build: () => review().distribution(distribution('n').configMap('c').build()), expected: false },
  ])('starts generation on $when: $expected', ({ build, expected }) => {
    const request = build().body().request as AdmissionRequest;
    expect(startsGeneration(request)).toBe(expected);
  });
});
