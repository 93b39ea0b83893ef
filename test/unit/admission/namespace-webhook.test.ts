import { describe, expect, it } from 'vitest';
import { sameLabels, startsGeneration } from '../../../src/admission/namespace-webhook.js';
import type { AdmissionRequest } from '../../../src/admission/review.js';
import { distribution } from '../builders.js';
import { admit, post, review, testApp } from './review-builder.js';

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

  it.each([
    { a: undefined, b: {}, same: true },
    { a: { env: 'prod' }, b: { env: 'prod' }, same: true },
    { a: { env: 'prod' }, b: { env: 'dev' }, same: false },
    { a: { env: 'prod' }, b: { env: 'prod', team: 'a' }, same: false },
    { a: { env: 'prod', x: undefined }, b: { env: 'prod', y: undefined }, same: false },
    { a: 'labels', b: {}, same: false },
    { a: { nested: { deeper: 1 } }, b: { nested: { deeper: 1 } }, same: false },
  ])('compares labels $a and $b one level deep: $same', ({ a, b, same }) => {
    expect(sameLabels(a, b)).toBe(same);
  });

  it('answers a review whose labels are nested 100,000 deep without overflowing the stack', async () => {
    // Written as text: JSON.stringify itself would overflow on such an object.
    const deep = `${'{"x":'.repeat(100_000)}{}${'}'.repeat(100_000)}`;
    // The same deep structure before and after: a recursive comparison would walk all of it.
    const text = JSON.stringify(review().namespace('n', { marker: 'deep' }).operation('UPDATE').oldNamespaceLabels({ marker: 'deep' }).body()).replaceAll('"marker":"deep"', `"marker":${deep}`);
    const { app, admitted, logs } = testApp({ bodyLimitBytes: 8 * 1024 * 1024 });
    const res = await post(app, '/generate/namespaces', text);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { response: { allowed: boolean } }).response.allowed).toBe(true);
    // Not flat string maps: treated as changed, and handed to the generator.
    expect(admitted.map((ns) => ns.name)).toEqual(['n']);
    expect(logs.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});
