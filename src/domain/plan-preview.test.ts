import { describe, expect, it } from 'vitest';
import { describePlan, describeTally, mergeTallies, MAX_WARNING_LENGTH, tallyActions, type PlanTally, type TypeTally } from './plan-preview.js';
import type { Action, Resource, WritePolicy } from './types.js';

const object: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } };
const create = (namespace: string): Action => ({ type: 'create', namespace, object });
const update = (namespace: string): Action => ({ type: 'update', namespace, object });
const remove = (namespace: string): Action => ({ type: 'delete', namespace, name: 'settings', uid: 'u' });
const conflict = (namespace: string): Action => ({ type: 'conflict', namespace, reason: 'foreign-object' });
const missing = (namespace: string): Action => ({ type: 'namespace-missing', namespace });
const inSync = (namespace: string): Action => ({ type: 'in-sync', namespace });

describe('describePlan', () => {
  it.each([
    ['nothing to do at all', [], []],
    ['a new distribution', [create('a'), create('b')], ['plan: 2 copies to create: a, b']],
    [
      'an update that narrows and changes content',
      [update('a'), remove('c'), remove('d'), inSync('e')],
      ['plan: 1 copy to update: a', 'plan: 2 copies to delete (no longer targeted): c, d', 'plan: 1 copy is already up to date'],
    ],
    ['conflicts and missing namespaces', [conflict('x'), missing('y'), missing('z')], ['plan: 1 conflict left alone: x', 'plan: 2 listed namespaces do not exist yet: y, z']],
    ['many namespaces: the first three and a count', ['n1', 'n2', 'n3', 'n4', 'n5'].map(update), ['plan: 5 copies to update: n1, n2, n3 and 2 more']],
  ])('%s', (_what, actions: Action[], lines) => {
    expect(describePlan(actions, { sameNamedUnknown: true })).toEqual(lines);
  });

  it('keeps every line whole within the length the API server keeps, however long the names', () => {
    const long = (i: number): string => `${'n'.repeat(60)}-${i}`;
    const lines = describePlan(Array.from({ length: 2000 }, (_, i) => create(long(i))), { sameNamedUnknown: false });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.length).toBeLessThanOrEqual(MAX_WARNING_LENGTH);
    expect(lines[0]).toMatch(/^plan: 2000 copies to create: n+-0 and 1999 more$/);
  });
});

describe('tallyActions: per type, how many and the first namespaces by name', () => {
  it.each<[string, Action[], PlanTally]>([
    ['nothing', [], {}],
    ['in order', ['a', 'b', 'c', 'd'].map(create), { create: { count: 4, first: ['a', 'b', 'c'] } }],
    ['in any order, the first by name', ['d', 'b', 'e', 'a', 'c'].map(create), { create: { count: 5, first: ['a', 'b', 'c'] } }],
    ['types apart', [create('b'), remove('a'), create('a'), inSync('c')], { create: { count: 2, first: ['a', 'b'] }, delete: { count: 1, first: ['a'] }, 'in-sync': { count: 1, first: ['c'] } }],
  ])('%s', (_what, actions, tally) => {
    expect(tallyActions(actions)).toEqual(tally);
  });
});

describe('mergeTallies', () => {
  const counted = (count: number, ...first: string[]): TypeTally => ({ count, first });
  it.each<[string, (TypeTally | undefined)[], TypeTally | undefined]>([
    ['none counted', [undefined, undefined], undefined],
    ['one', [undefined, counted(5, 'b', 'c', 'd')], counted(5, 'b', 'c', 'd')],
    ['two: counts add up, the first by name of both', [counted(5, 'b', 'd', 'f'), counted(2, 'a', 'e')], counted(7, 'a', 'b', 'd')],
  ])('%s', (_what, parts, merged) => {
    expect(mergeTallies(parts)).toEqual(merged);
  });
});

describe('describeTally', () => {
  it.each<[string, PlanTally, string[]]>([
    ['updates and recreates are one line, their first namespaces merged', { update: { count: 4, first: ['b', 'd', 'e'] }, recreate: { count: 1, first: ['c'] } }, ['plan: 5 copies to update: b, c, d and 2 more']],
    ['10,000 to create', { create: { count: 10_000, first: ['ns-0000', 'ns-0001', 'ns-0002'] } }, ['plan: 10000 copies to create: ns-0000, ns-0001, ns-0002 and 9997 more']],
    ['in sync only', { 'in-sync': { count: 2, first: ['a', 'b'] } }, ['plan: 2 copies are already up to date']],
  ])('%s', (_what, tally, lines) => {
    expect(describeTally(tally, { sameNamedUnknown: true })).toEqual(lines);
  });
});

describe('the sentence on meeting a same-named object: only where it says something of this distribution', () => {
  const creates: PlanTally = { create: { count: 1, first: ['a'] } };
  it.each<[string, PlanTally, WritePolicy | undefined, string | undefined]>([
    ['default (left alone and reported, as always): nothing more', creates, undefined, undefined],
    ['ignore: nothing more', creates, 'ignore', undefined],
    ['overwrite: taken over', creates, 'overwrite', 'plan: a same-named object someone else made where a copy is created is taken over (writePolicy overwrite)'],
    ['strict: holds back every write', creates, 'strict', 'plan: a same-named object someone else made where a copy is created holds back every write (writePolicy strict)'],
    ['overwrite, nothing to create: nothing more', { update: { count: 1, first: ['a'] } }, 'overwrite', undefined],
  ])('%s', (_what, tally, writePolicy, sentence) => {
    const lines = describeTally(tally, { sameNamedUnknown: true, ...(writePolicy === undefined ? {} : { writePolicy }) });
    expect(lines.slice(1)).toEqual(sentence === undefined ? [] : [sentence]);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(MAX_WARNING_LENGTH);
  });
});
