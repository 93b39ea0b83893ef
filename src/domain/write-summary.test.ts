import { describe, expect, it } from 'vitest';
import type { Action, Outcome, Resource } from './types.js';
import { summarizeWrites } from './write-summary.js';

const object: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'a' } };
const actions: Record<string, Action> = {
  create: { type: 'create', namespace: 'a', object },
  update: { type: 'update', namespace: 'a', object },
  recreate: { type: 'recreate', namespace: 'a', object, existingUid: 'u' },
  delete: { type: 'delete', namespace: 'a', name: 'settings', uid: 'u' },
  release: { type: 'release', namespace: 'a', object },
  inSync: { type: 'in-sync', namespace: 'a' },
  conflict: { type: 'conflict', namespace: 'a', reason: 'foreign-object' },
  missing: { type: 'namespace-missing', namespace: 'a' },
};
const ok = (name: string): Outcome => ({ action: actions[name] as Action, ok: true });
const failed = (name: string): Outcome => ({ action: actions[name] as Action, ok: false, verb: 'update', message: 'Conflict: x', transient: true });

describe('summarizeWrites', () => {
  it.each([
    ['nothing written: every copy in sync, a conflict, a listed namespace missing', [ok('inSync'), ok('conflict'), ok('missing')], undefined],
    ['a template change: every copy updated', [ok('update'), ok('update'), ok('inSync')], { updated: 2 }],
    ['a new distribution, one create failed', [ok('create'), ok('create'), failed('create')], { created: 2, failed: 1 }],
    ['each kind of write once', ['create', 'update', 'recreate', 'delete', 'release'].map(ok), { created: 1, updated: 1, recreated: 1, deleted: 1, released: 1 }],
    ['a failed read is no write', [{ action: actions.inSync as Action, ok: false, verb: 'get', message: 'Forbidden: x', transient: false }], undefined],
  ] as const)('%s', (_, outcomes, expected) => {
    expect(summarizeWrites(outcomes)).toEqual(expected);
  });
});
