import { describe, expect, it } from 'vitest';
import { controllerRef, copyOf, distribution, foreign, namespace, ok, T0, T1 } from '../../test/unit/builders.js';
import { claimedCopy, releasedCopy, untouchedCopy } from './create-once.js';
import { hashResource } from './hash.js';
import { planDistribution, planNamespace, previewTally } from './plan.js';
import { computeStatus } from './status.js';
import {
  ANNOTATION_FROM,
  ANNOTATION_HASH,
  ANNOTATION_TEMPLATE_METADATA,
  ANNOTATION_TIMESTAMP,
  LABEL_DISTRIBUTION,
  type Action,
  type ResolvedDistribution,
  type Resource,
  type SyncPolicy,
  type WritePolicy,
} from './types.js';

function rdWith(policy: SyncPolicy | undefined, data: Record<string, string> = { a: '1' }, writePolicy?: WritePolicy): ResolvedDistribution {
  let built = distribution('shared').configMap('settings', data).templateLabels({ team: 'x' });
  if (policy !== undefined) built = built.syncPolicy(policy);
  if (writePolicy !== undefined) built = built.writePolicy(writePolicy);
  return built.build();
}

const once = rdWith('CreateOnce');
const earlier = rdWith('CreateOnce', { a: 'old' });
const staleOwner = controllerRef('apps.kruise.io/v1beta1', 'ResourceDistribution', 'shared', 'uid-of-an-earlier-shared');

function summary(action: Action): string {
  return action.type === 'conflict' ? `${action.type}:${action.reason}` : action.type;
}

describe('syncPolicy CreateOnce: what the plan does in a target namespace', () => {
  it.each<[string, Resource | undefined, string, string]>([
    ['nothing there: created', undefined, 'create', 'create'],
    ['our copy as written', copyOf(once, 'n').build(), 'in-sync', 'in-sync'],
    ['our copy, its data edited by hand: left as it is', copyOf(once, 'n').data({ a: 'tuned' }).build(), 'in-sync', 'update'],
    ['our copy, a template label removed by hand: left as it is', copyOf(once, 'n').withoutLabel('team').build(), 'in-sync', 'update'],
    ['our copy written from an earlier template: not updated', copyOf(earlier, 'n').build(), 'in-sync', 'update'],
    ['our copy under an earlier distribution of that name: claimed (markers and owner back, content kept)', copyOf(once, 'n').data({ a: 'tuned' }).owners(staleOwner).build(), 'update', 'update'],
    ['our copy kept with --cascade=orphan (no owner): claimed', copyOf(once, 'n').owners().build(), 'update', 'update'],
    ['our label removed by hand: claimed (the label put back, content kept)', copyOf(once, 'n').data({ a: 'tuned' }).withoutLabel(LABEL_DISTRIBUTION).build(), 'update', 'update'],
    ['its from annotation changed by hand: a conflict, as under Sync', copyOf(once, 'n').annotation(ANNOTATION_FROM, 'mine').build(), 'conflict:from-changed', 'conflict:from-changed'],
    ['someone else\'s object: a conflict, as under Sync', foreign('ConfigMap', 'settings', 'n').build(), 'conflict:foreign-object', 'conflict:foreign-object'],
  ])('%s', (_what, existing, createOnce, sync) => {
    expect(summary(planNamespace(once, 'n', existing, T1))).toBe(createOnce);
    // The same copy under Sync (also what switching from CreateOnce to Sync does: the copies are taken back).
    expect(summary(planNamespace(rdWith('Sync'), 'n', existing, T1))).toBe(sync);
    expect(summary(planNamespace(rdWith(undefined), 'n', existing, T1))).toBe(sync);
  });

  it('someone else\'s object under writePolicy overwrite is taken over with the template, as under Sync', () => {
    const action = planNamespace(rdWith('CreateOnce', { a: '1' }, 'overwrite'), 'n', foreign('ConfigMap', 'settings', 'n').build(), T1);
    expect(action.type).toBe('update');
    expect(action.type === 'update' && action.object.data).toEqual({ a: '1' });
  });

  it('a claimed copy keeps what the namespace made of it, and is ours again', () => {
    const existing = copyOf(once, 'n').data({ a: 'tuned' }).label('owner', 'team-a').owners(staleOwner, controllerRef('v1', 'ConfigMap', 'keep-me')).build();
    existing.metadata.ownerReferences = existing.metadata.ownerReferences?.map((ref) => (ref.kind === 'ConfigMap' ? { ...ref, controller: false } : ref));
    const claimed = claimedCopy(once, existing);
    expect(claimed.data).toEqual({ a: 'tuned' });
    expect(claimed.metadata.labels).toEqual({ team: 'x', owner: 'team-a', [LABEL_DISTRIBUTION]: 'shared' });
    expect(claimed.metadata.resourceVersion).toBe('1');
    expect(claimed.metadata.ownerReferences?.map((ref) => `${ref.kind}/${ref.name}/${ref.uid}`)).toEqual(['ConfigMap/keep-me/uid-keep-me', 'ResourceDistribution/shared/uid-shared']);
    expect(planNamespace(once, 'n', claimed, T1).type).toBe('in-sync');
  });
});

describe('syncPolicy CreateOnce: our copy in a namespace no longer targeted', () => {
  const narrowed = (policy: SyncPolicy): ResolvedDistribution => {
    const rd = rdWith(policy);
    rd.spec.targets = { includedNamespaces: { list: [{ name: 'kept' }] } };
    return rd;
  };

  it.each<[string, Resource, string]>([
    ['untouched since it was written: deleted', copyOf(once, 'gone').build(), 'delete'],
    ['its data edited: released', copyOf(once, 'gone').data({ a: 'tuned' }).build(), 'release'],
    ['a label added by hand: released', copyOf(once, 'gone').label('owner', 'team-a').build(), 'release'],
    ['an annotation added by hand: released', copyOf(once, 'gone').annotation('note', 'ours now').build(), 'release'],
    ['a template label removed by hand: released', copyOf(once, 'gone').withoutLabel('team').build(), 'release'],
    ['written from an earlier template (the namespace may rely on it): released', copyOf(earlier, 'gone').build(), 'release'],
  ])('%s', (_what, copy, type) => {
    const actions = planDistribution({ distribution: narrowed('CreateOnce'), namespaces: [namespace('kept'), namespace('gone')], existing: new Map([['gone', copy]]), now: T1 });
    expect(actions.map((action) => `${action.namespace}:${action.type}`)).toEqual(['gone:' + type, 'kept:create']);
    // Under Sync the copy goes, whatever it holds.
    const sync = planDistribution({ distribution: narrowed('Sync'), namespaces: [namespace('kept'), namespace('gone')], existing: new Map([['gone', copy]]), now: T1 });
    expect(sync.map((action) => `${action.namespace}:${action.type}`)).toEqual(['gone:delete', 'kept:create']);
  });

  it('the delete of an untouched copy holds only while it is unchanged since it was read', () => {
    const copy = copyOf(once, 'gone').resourceVersion('17').build();
    const [action] = planDistribution({ distribution: narrowed('CreateOnce'), namespaces: [namespace('gone')], existing: new Map([['gone', copy]]), now: T1 });
    expect(action).toEqual({ type: 'delete', namespace: 'gone', name: 'settings', uid: copy.metadata.uid, resourceVersion: '17' });
  });

  it('a released copy keeps its content and what others put there, without our markers, record or owner reference', () => {
    const copy = copyOf(once, 'gone').data({ a: 'tuned' }).label('owner', 'team-a').owner({ ...controllerRef('v1', 'ConfigMap', 'other'), controller: false }).resourceVersion('9').build();
    const released = releasedCopy(once, copy);
    expect(released.data).toEqual({ a: 'tuned' });
    expect(released.metadata.labels).toEqual({ team: 'x', owner: 'team-a' });
    expect(released.metadata.annotations).toBeUndefined();
    expect(released.metadata.ownerReferences?.map((ref) => ref.name)).toEqual(['other']);
    expect(released.metadata.resourceVersion).toBe('9');
    for (const key of [ANNOTATION_FROM, ANNOTATION_HASH, ANNOTATION_TIMESTAMP, ANNOTATION_TEMPLATE_METADATA]) expect(copy.metadata.annotations?.[key]).toBeDefined();
    // Released, it is someone else's object: targeted again, it is a conflict.
    expect(summary(planNamespace(once, 'gone', released, T1))).toBe('conflict:foreign-object');
  });

  it.each<[string, Resource, boolean]>([
    ['as written', copyOf(once, 'n').build(), true],
    ['written at another time (only the timestamp differs)', copyOf(once, 'n', T0).annotation(ANNOTATION_TIMESTAMP, '2020-01-01T00:00:00Z').build(), true],
    ['data edited', copyOf(once, 'n').data({ a: '2' }).build(), false],
    ['a label added', copyOf(once, 'n').label('x', 'y').build(), false],
    ['from an earlier template', copyOf(earlier, 'n').build(), false],
  ])('untouched: %s', (_what, copy, untouched) => {
    expect(untouchedCopy(once, copy, hashResource(once.spec.resource))).toBe(untouched);
  });

  it('admission\'s preview says which copies are released and which deleted', () => {
    const existing = new Map([
      ['a', copyOf(once, 'a').build()],
      ['b', copyOf(once, 'b').data({ a: 'tuned' }).build()],
    ]);
    const tally = previewTally({ distribution: narrowed('CreateOnce'), namespaces: [namespace('kept'), namespace('a'), namespace('b')], existing, now: T1 });
    expect(tally.delete?.first).toEqual(['a']);
    expect(tally.release?.first).toEqual(['b']);
  });

  it('status: a release counts in no total, as a delete; a failed one reports UpdateResourceFailed', () => {
    const released: Action = { type: 'release', namespace: 'gone', object: releasedCopy(once, copyOf(once, 'gone').build()) };
    const outcomes = [ok({ type: 'in-sync', namespace: 'kept' }), ok(released)];
    expect(computeStatus({ distribution: once, outcomes, now: T0 })).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
    const failed = computeStatus({ distribution: once, outcomes: [outcomes[0]!, { action: released, ok: false, verb: 'update', message: 'Forbidden: no', transient: false }], now: T0 });
    expect(failed).toMatchObject({ desired: 1, succeeded: 1 });
    expect(failed.conditions.find((condition) => condition.type === 'UpdateResourceFailed')?.status).toBe('True');
  });
});
