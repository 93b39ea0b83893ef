import { describe, expect, it, vi } from 'vitest';
import { controllerRef, copyOf, distribution, foreign, namespace, seedSample, T0, terminating } from '../../test/unit/builders.js';
import { tallyActions } from './plan-preview.js';
import { planDistribution, planNamespace, previewDistribution, previewTally, writesHeldBack } from './plan.js';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, CONDITION_TYPES, type Action, type Condition, type DistributionStatus, type NamespaceInfo, type OwnerReference, type PlannedAction, type Resource, type ResolvedDistribution, type WritePolicy } from './types.js';

const rd = distribution('shared').configMap('settings', { a: '1' }).build();
const otherRdRef = controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'other');

function metadataOf(actions: readonly (Action | PlannedAction)[]): object[] {
  return actions.flatMap((action) => ('object' in action ? [action.object.metadata] : []));
}

function summary(action: Action): string {
  return action.type === 'conflict' ? `${action.namespace}:conflict:${action.reason}` : `${action.namespace}:${action.type}`;
}

function withPolicy(policy: WritePolicy | undefined): ResolvedDistribution {
  const built = distribution('shared').configMap('settings', { a: '1' });
  return (policy === undefined ? built : built.writePolicy(policy)).build();
}

describe('planNamespace', () => {
  it.each<[string, ResolvedDistribution, Resource | undefined, string]>([
    ['nothing there: create', rd, undefined, 'create'],
    ['our copy in sync', rd, copyOf(rd, 'n').build(), 'in-sync'],
    ['our copy drifted', rd, copyOf(rd, 'n').data({ a: 'changed' }).build(), 'update'],
    [
      'stale owner (distribution recreated): repaired by update',
      rd,
      copyOf(rd, 'n').owners(controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'shared', 'old-uid')).build(),
      'update',
    ],
    ['from changed by a user: conflict, untouched', rd, copyOf(rd, 'n').annotation(ANNOTATION_FROM, 'mine').build(), 'conflict:from-changed'],
    ['foreign object (default ignore): conflict', rd, foreign('ConfigMap', 'settings', 'n').build(), 'conflict:foreign-object'],
    ['foreign object, ignore: conflict', withPolicy('ignore'), foreign('ConfigMap', 'settings', 'n').build(), 'conflict:foreign-object'],
    ['foreign object, overwrite: taken over', withPolicy('overwrite'), foreign('ConfigMap', 'settings', 'n').build(), 'update'],
    [
      'owned by another controller, overwrite: taken over',
      withPolicy('overwrite'),
      foreign('ConfigMap', 'settings', 'n').owner(controllerRef('apps/v1', 'Deployment', 'web')).build(),
      'update',
    ],
    [
      'from changed, overwrite: taken back',
      withPolicy('overwrite'),
      copyOf(rd, 'n').annotation(ANNOTATION_FROM, 'mine').build(),
      'update',
    ],
    [
      "another distribution's copy, overwrite: left alone (no tug of war)",
      withPolicy('overwrite'),
      foreign('ConfigMap', 'settings', 'n').annotation(ANNOTATION_FROM, 'other').owner(otherRdRef).build(),
      'conflict:from-changed',
    ],
    ['adopt, ignore: update in place', withPolicy('ignore'), foreign('ConfigMap', 'settings', 'n').annotation(ANNOTATION_ADOPT, 'shared').build(), 'update'],
    ['adopt, strict: update in place', withPolicy('strict'), foreign('ConfigMap', 'settings', 'n').annotation(ANNOTATION_ADOPT, 'shared').build(), 'update'],
    [
      'adopt of an immutable object with other content: recreate',
      rd,
      foreign('ConfigMap', 'settings', 'n').annotation(ANNOTATION_ADOPT, 'shared').immutable().build(),
      'recreate',
    ],
  ])('%s', (_name, distributionUnderTest, existing, expected) => {
    const action = planNamespace(distributionUnderTest, 'n', existing, T0);
    expect(summary(action)).toBe(`n:${expected}`);
  });

  it('a forbidden-type Secret is a conflict under every policy', () => {
    const secretRd = (policy: WritePolicy): ResolvedDistribution => distribution('shared').secret('token', { a: 'b' }).writePolicy(policy).build();
    const token = foreign('Secret', 'token', 'n').type('kubernetes.io/service-account-token').annotation(ANNOTATION_ADOPT, 'shared').build();
    for (const policy of ['ignore', 'overwrite', 'strict'] as const) {
      expect(planNamespace(secretRd(policy), 'n', token, T0)).toEqual({ type: 'conflict', namespace: 'n', reason: 'forbidden-type' });
    }
  });

  it('adoption updates in place: resourceVersion carried, adopt annotation consumed, others kept', () => {
    const existing = foreign('ConfigMap', 'settings', 'n').annotation(ANNOTATION_ADOPT, 'shared').label('app', 'web').resourceVersion('12').build();
    const action = planNamespace(rd, 'n', existing, T0);
    expect(action.type).toBe('update');
    if (action.type !== 'update') return;
    expect(action.object.metadata.resourceVersion).toBe('12');
    expect(action.object.metadata.labels?.app).toBe('web');
    expect(action.object.metadata.annotations).not.toHaveProperty(ANNOTATION_ADOPT);
    expect(action.object.metadata.annotations?.[ANNOTATION_FROM]).toBe('shared');
    expect(action.object.data).toEqual({ a: '1' });
  });

  it('a Secret type change is delete + create of the old uid', () => {
    const tls = distribution('certs').secret('certs', { 'tls.crt': 'c', 'tls.key': 'k' }, 'kubernetes.io/tls').build();
    const opaque = distribution('certs').secret('certs', { 'tls.crt': 'c', 'tls.key': 'k' }).build();
    const action = planNamespace(tls, 'n', copyOf(opaque, 'n').label('kept', 'yes').build(), T0);
    expect(action).toMatchObject({ type: 'recreate', namespace: 'n', existingUid: 'uid-n-certs' });
    if (action.type !== 'recreate') return;
    expect(action.object.type).toBe('kubernetes.io/tls');
    expect(action.object.metadata.labels?.kept).toBe('yes');
    expect(action.object.metadata).not.toHaveProperty('resourceVersion');
  });

  it('an immutable copy whose content changed is recreated', () => {
    const v1 = distribution('d').configMap('c', { a: '1' }).immutable().build();
    const v2 = distribution('d').configMap('c', { a: '2' }).immutable().build();
    const action = planNamespace(v2, 'n', copyOf(v1, 'n').build(), T0);
    expect(action).toMatchObject({ type: 'recreate', existingUid: 'uid-n-c', object: { data: { a: '2' } } });
  });
});

describe('planDistribution', () => {
  const namespaces = [
    namespace('ns-1'),
    namespace('ns-2', { group: 'test' }),
    namespace('ns-3', { group: 'test' }),
    namespace('ns-5', { group: 'test' }),
    namespace('old'),
    terminating('ns-4'),
  ];

  it('one action per target, missing namespaces reported, sorted by namespace', () => {
    const seed = seedSample().build();
    const existing = new Map([['ns-2', copyOf(seed, 'ns-2').build()]]);
    const actions = planDistribution({ distribution: seed, namespaces, existing, now: T0 });
    expect(actions.map(summary)).toEqual(['ns-1:create', 'ns-2:in-sync', 'ns-4:namespace-missing', 'ns-5:create']);
  });

  it('deletes only our copies in namespaces no longer targeted', () => {
    const seed = seedSample().build();
    const existing = new Map<string, Resource>([
      ['old', copyOf(seed, 'old').build()],
      ['ns-3', copyOf(seed, 'ns-3').annotation(ANNOTATION_FROM, 'someone-else').build()],
      ['elsewhere', foreign('ConfigMap', 'game-demo', 'elsewhere').build()],
    ]);
    const actions = planDistribution({ distribution: seed, namespaces, existing, now: T0 });
    expect(actions.filter((a) => a.type === 'delete')).toEqual([{ type: 'delete', namespace: 'old', name: 'game-demo', uid: 'uid-old-game-demo' }]);
  });

  // Where it no longer targets, a distribution deletes only what it controls by uid: its author may
  // have no rights there, and a copy without the reference was orphaned on purpose.
  it.each([
    { what: 'controlled by this distribution (same uid)', owners: undefined, deleted: true },
    { what: 'orphaned on purpose (no controller reference)', owners: [] as OwnerReference[], deleted: false },
    { what: 'controlled by an earlier distribution of the same name', owners: [controllerRef('apps.kruise.io/v1alpha1', 'ResourceDistribution', 'sample', 'uid-earlier')], deleted: false },
  ])('in a namespace no longer targeted, a copy $what is deleted: $deleted', ({ owners, deleted }) => {
    const seed = seedSample().build();
    const copy = copyOf(seed, 'old');
    const existing = new Map<string, Resource>([['old', (owners === undefined ? copy : copy.owners(...owners)).build()]]);
    const actions = planDistribution({ distribution: seed, namespaces, existing, now: T0 });
    expect(actions.some((a) => a.type === 'delete' && a.namespace === 'old')).toBe(deleted);
  });

  it.each([
    { what: 'a namespace not known yet (its watch event is late)', ns: 'unseen', known: [] as NamespaceInfo[] },
    { what: 'a terminating namespace', ns: 'leaving', known: [terminating('leaving')] },
  ])('never deletes a copy in $what', ({ ns, known }) => {
    const seed = seedSample().build();
    const existing = new Map<string, Resource>([[ns, copyOf(seed, ns).build()]]);
    const actions = planDistribution({ distribution: seed, namespaces: [...namespaces, ...known], existing, now: T0 });
    expect(actions.filter((a) => a.namespace === ns)).toEqual([]);
  });

  // A pass over the namespaces that changed plans them alone: what it plans there is what the whole plan does.
  it.each([['ns-1'], ['ns-2'], ['ns-4'], ['old'], ['ns-1', 'old', 'ns-4'], ['unseen']])('within %s: the whole plan\'s actions there, nothing else', (...within) => {
    const seed = seedSample().build();
    const existing = new Map<string, Resource>([
      ['ns-2', copyOf(seed, 'ns-2').build()],
      ['ns-3', copyOf(seed, 'ns-3').data({ drifted: 'x' }).build()],
      ['old', copyOf(seed, 'old').build()],
    ]);
    const whole = planDistribution({ distribution: seed, namespaces, existing, now: T0 });
    const scope = new Set(within);
    const some = planDistribution({
      distribution: seed,
      namespaces: namespaces.filter((ns) => scope.has(ns.name)),
      existing: new Map([...existing].filter(([ns]) => scope.has(ns))),
      now: T0,
      within: scope,
    });
    expect(some).toEqual(whole.filter((action) => scope.has(action.namespace)));
  });

  it('a copy whose from annotation a user changed: conflict, no write anywhere for it', () => {
    const seed = seedSample().build();
    const edited = copyOf(seed, 'ns-2').annotation(ANNOTATION_FROM, 'mine').data({ mine: 'yes' }).build();
    const actions = planDistribution({ distribution: seed, namespaces, existing: new Map([['ns-2', edited]]), now: T0 });
    expect(actions.filter((a) => a.namespace === 'ns-2')).toEqual([{ type: 'conflict', namespace: 'ns-2', reason: 'from-changed' }]);
  });

  it('strict with one conflict: no create, update or recreate at all; in-sync and deletes stay', () => {
    const strict = seedSample().writePolicy('strict').build();
    const existing = new Map<string, Resource>([
      ['ns-1', copyOf(strict, 'ns-1').build()],
      ['ns-2', foreign('ConfigMap', 'game-demo', 'ns-2').build()],
      ['ns-5', copyOf(strict, 'ns-5').data({ drifted: 'x' }).build()],
      ['old', copyOf(strict, 'old').build()],
    ]);
    const actions = planDistribution({ distribution: strict, namespaces: [...namespaces, namespace('ns-4')], existing, now: T0 });
    expect(actions.map(summary)).toEqual([
      'ns-1:in-sync',
      'ns-2:conflict:foreign-object',
      'ns-4:conflict:strict-blocked',
      'ns-5:conflict:strict-blocked',
      'old:delete',
    ]);
    expect(actions.some((a) => a.type === 'create' || a.type === 'update' || a.type === 'recreate')).toBe(false);
  });

  it.each<[WritePolicy | undefined, string[]]>([
    [undefined, ['ns-1:create', 'ns-2:conflict:foreign-object', 'ns-4:namespace-missing', 'ns-5:create']],
    ['ignore', ['ns-1:create', 'ns-2:conflict:foreign-object', 'ns-4:namespace-missing', 'ns-5:create']],
    ['overwrite', ['ns-1:create', 'ns-2:update', 'ns-4:namespace-missing', 'ns-5:create']],
    ['strict', ['ns-1:conflict:strict-blocked', 'ns-2:conflict:foreign-object', 'ns-4:namespace-missing', 'ns-5:conflict:strict-blocked']],
  ])('one foreign object under writePolicy %s', (policy, expected) => {
    const builder = seedSample();
    const seed = (policy === undefined ? builder : builder.writePolicy(policy)).build();
    const existing = new Map([['ns-2', foreign('ConfigMap', 'game-demo', 'ns-2').build()]]);
    expect(planDistribution({ distribution: seed, namespaces, existing, now: T0 }).map(summary)).toEqual(expected);
  });

  it('strict without conflict writes normally', () => {
    const strict = seedSample().writePolicy('strict').build();
    const actions = planDistribution({ distribution: strict, namespaces, existing: new Map(), now: T0 });
    expect(actions.map(summary)).toEqual(['ns-1:create', 'ns-2:create', 'ns-4:namespace-missing', 'ns-5:create']);
  });

  it('kube-system and kube-public never get a copy, even with allNamespaces and listed by name', () => {
    const all = distribution('everywhere').allNamespaces().included('kube-system', 'kube-public').build();
    const actions = planDistribution({
      distribution: all,
      namespaces: [namespace('kube-system'), namespace('kube-public'), namespace('default')],
      existing: new Map(),
      now: T0,
    });
    expect(actions.map(summary)).toEqual(['default:create']);
  });

  it('operator-forbidden namespaces: no copy, and ours there is removed', () => {
    const all = distribution('everywhere').allNamespaces().build();
    const actions = planDistribution({
      distribution: all,
      namespaces: [namespace('vault'), namespace('default')],
      existing: new Map([['vault', copyOf(all, 'vault').build()]]),
      forbidden: ['vault'],
      now: T0,
    });
    expect(actions.map(summary)).toEqual(['default:create', 'vault:delete']);
  });
});

describe('previewDistribution (what admission says a distribution will do)', () => {
  const namespaces = [namespace('ns-1'), namespace('ns-2'), namespace('ns-3'), namespace('ns-5'), namespace('old'), terminating('ns-4')];
  const listed = (builder: ReturnType<typeof seedSample>): ResolvedDistribution => builder.included('ns-1', 'ns-2', 'ns-3', 'ns-4', 'ns-5').build();
  const retyped = (seed: ResolvedDistribution): [string, Resource][] => [['ns-3', { ...copyOf(seed, 'ns-3').build(), type: 'example.com/other' }]];

  it.each<[string, ResolvedDistribution, (seed: ResolvedDistribution) => [string, Resource][]]>([
    ['nothing there yet', listed(seedSample()), () => []],
    ['in sync, drifted, a conflict, ours no longer targeted', listed(seedSample()), (seed) => [
      ['ns-1', copyOf(seed, 'ns-1').build()],
      ['ns-2', copyOf(seed, 'ns-2').data({ drifted: 'x' }).build()],
      ['ns-3', foreign('ConfigMap', 'game-demo', 'ns-3').build()],
      ['old', copyOf(seed, 'old').build()],
    ]],
    ['overwrite takes a foreign object over', listed(seedSample().writePolicy('overwrite')), () => [['ns-3', foreign('ConfigMap', 'game-demo', 'ns-3').build()]]],
    ['strict with a conflict blocks every write', listed(seedSample().writePolicy('strict')), (seed) => [['ns-2', copyOf(seed, 'ns-2').data({ drifted: 'x' }).build()], ['ns-3', foreign('ConfigMap', 'game-demo', 'ns-3').build()]]],
    ['a Secret whose type changed is recreated (an update, said in a preview)', distribution('s').secret('game-demo', { a: 'b' }, 'example.com/new').included('ns-3').build(), retyped],
  ])('decides as the plan does: %s', (_case, seed, copies) => {
    const existing = new Map(copies(seed));
    const planned = planDistribution({ distribution: seed, namespaces, existing, now: T0 }).map((action) => ({
      type: action.type === 'recreate' ? 'update' : action.type,
      namespace: action.namespace,
    }));
    const previewed = previewDistribution({ distribution: seed, namespaces, existing, now: T0 }).map(({ type, namespace: ns }) => ({ type, namespace: ns }));
    expect(previewed).toEqual(planned);
    // Counted, without an action per namespace: the same.
    expect(previewTally({ distribution: seed, namespaces, existing, now: T0 })).toEqual(tallyActions(planned));
  });

  const big = distribution('everywhere').configMap('settings', { big: 'x'.repeat(100_000) }).allNamespaces().build();
  const many = Array.from({ length: 500 }, (_, i) => namespace(`team-${i}`));
  const older = distribution('everywhere').configMap('settings', { big: 'y'.repeat(100_000) }).allNamespaces().build();
  const staleCopies = new Map(many.map((ns) => [ns.name, copyOf(older, ns.name).build()]));
  it.each<[string, () => readonly (Action | PlannedAction)[], Action['type']]>([
    ['a preview of creates', () => previewDistribution({ distribution: big, namespaces: many, existing: new Map(), now: T0 }), 'create'],
    ['a plan of creates', () => planDistribution({ distribution: big, namespaces: many, existing: new Map(), now: T0 }), 'create'],
    ['a plan of updates (every copy holds an older template)', () => planDistribution({ distribution: big, namespaces: many, existing: staleCopies, now: T0 }), 'update'],
  ])('%s clones no template per target namespace, and changes none', (_, plan, type) => {
    const before = structuredClone(big.spec.resource);
    const clone = vi.spyOn(globalThis, 'structuredClone');
    try {
      const actions = plan();
      expect(actions).toHaveLength(500);
      expect(actions.every((action) => action.type === type)).toBe(true);
      expect(clone).not.toHaveBeenCalled();
    } finally {
      clone.mockRestore();
    }
    expect(big.spec.resource).toEqual(before);
    // Each copy's metadata is its own: the writer may change it (its resourceVersion) without touching another's.
    const rendered = metadataOf(plan());
    expect(new Set(rendered).size).toBe(rendered.length);
  });
});

describe('writesHeldBack (writes outside the reconciler: generator, pod materialiser)', () => {
  const conditions = (conflict: boolean): Condition[] =>
    CONDITION_TYPES.map((type) => ({
      type,
      status: type === 'ConflictOccurred' && conflict ? 'True' : 'False',
      reason: 'Succeeded',
      lastTransitionTime: '2024-01-01T00:00:00Z',
    }));
  const status = (observedGeneration: number, conflict: boolean): DistributionStatus => ({ desired: 2, succeeded: 1, failed: 1, observedGeneration, conditions: conditions(conflict) });
  it.each<[string, ResolvedDistribution, boolean]>([
    ['ignore, no status yet', withPolicy(undefined), false],
    ['overwrite, a conflict reported', distribution('s').configMap('c', {}).writePolicy('overwrite').status(status(1, true)).build(), false],
    ['strict, no status yet: nobody has looked at every target', withPolicy('strict'), true],
    ['strict, status of an earlier spec', distribution('s').configMap('c', {}).writePolicy('strict').generation(2).status(status(1, false)).build(), true],
    ['strict, a conflict reported', distribution('s').configMap('c', {}).writePolicy('strict').status(status(1, true)).build(), true],
    ['strict, the current spec settled without conflict', distribution('s').configMap('c', {}).writePolicy('strict').status(status(1, false)).build(), false],
  ])('%s: held back %s', (_case, distributionUnderTest, held) => {
    expect(writesHeldBack(distributionUnderTest)).toBe(held);
  });
});
