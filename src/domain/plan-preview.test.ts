import { describe, expect, it } from 'vitest';
import { describePlan, MAX_WARNING_LENGTH } from './plan-preview.js';
import type { Action, Resource } from './types.js';

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
    ['a new distribution', [create('a'), create('b')], ['plan: 2 copies to create: a, b', 'plan: a same-named object found where a copy is created is taken over or left alone, per writePolicy']],
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
