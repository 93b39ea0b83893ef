import { describe, expect, it } from 'vitest';
import { classifyExisting } from './copy.js';
import { CORE_KINDS, createKindRegistry } from './kinds.js';
import { distributionName, distributionsOf, foldStatus, LEGACY_SOURCE_ANNOTATION, orphanIntent, reportedDistributionsOf, untiedCopy, type ObjectSync, type ObjectSyncDestination, type ObjectSyncSource } from './object-sync.js';
import { renderCopy } from './render.js';
import { withSource } from './source.js';
import { computeTargets, forbiddenFor } from './targets.js';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, ANNOTATION_OBJECT_SYNC, LABEL_DISTRIBUTION, type DistributionStatus, type NamespaceInfo, type Resource } from './types.js';
import { validateObjectSync } from './validate-object-sync.js';

const kinds = createKindRegistry([...CORE_KINDS, { group: 'batch', kind: 'CronJob', plural: 'cronjobs', version: 'v1', versions: ['v1'] }]);
const UID = '5b0c6a7e-0000-4000-8000-000000000001';

function objectSync(destinations: ObjectSyncDestination[], source: Partial<ObjectSyncSource> = {}): ObjectSync {
  return {
    apiVersion: 'sync.rustrial.org/v1alpha1',
    kind: 'ObjectSync',
    metadata: { name: 'sync', namespace: 'platform', uid: UID, generation: 3 },
    spec: { source: { group: '', kind: 'ConfigMap', name: 'settings', ...source }, destinations },
  };
}

const ns = (name: string): NamespaceInfo => ({ name, labels: {}, terminating: false });
const NAMESPACES = ['platform', 'team-a', 'team-b', 'kube-system', 'kube-public', 'kube-node-lease'].map(ns);

/** What each distribution of the ObjectSync targets, by copy name. */
function targetsByName(os: ObjectSync): Record<string, string[]> {
  const entries = distributionsOf(os, kinds).map((rd): [string, string[]] => [rd.spec.rename ?? rd.spec.source?.name ?? '', computeTargets(rd.spec.targets, NAMESPACES, forbiddenFor(rd)).targeted]);
  return Object.fromEntries(entries);
}

describe('an ObjectSync as distributions', () => {
  it.each([
    ['"*": every namespace but the source\'s and the system ones', [{ namespace: '*' }], { settings: ['team-a', 'team-b'] }],
    ['"" means every namespace too', [{ namespace: '' }], { settings: ['team-a', 'team-b'] }],
    ['named namespaces, kube-system included when named', [{ namespace: 'kube-system' }, { namespace: 'team-a' }], { settings: ['kube-system', 'team-a'] }],
    ['kube-node-lease only when named', [{ namespace: 'kube-node-lease' }], { settings: ['kube-node-lease'] }],
    ['a rename is another distribution, and may go to the source namespace', [{ namespace: 'team-a' }, { namespace: '*', name: 'global' }], { global: ['platform', 'team-a', 'team-b'], settings: ['team-a'] }],
    ['the source namespace named, without rename: the source itself, never a target', [{ namespace: 'platform' }], { settings: [] }],
  ])('%s', (_what, destinations, expected) => {
    expect(targetsByName(objectSync(destinations))).toEqual(expected);
  });

  it.each([
    ['a kind not allowed', { group: 'apps', kind: 'Deployment' }],
    ['the right kind in another group', { group: 'batch', kind: 'ConfigMap' }],
  ])('stands for nothing with %s', (_what, source) => {
    expect(distributionsOf(objectSync([{ namespace: '*' }], source), kinds)).toEqual([]);
  });

  it.each([
    ['a kind not allowed', { group: 'apps', kind: 'Deployment', name: 'web' }, 'apps/v1'],
    ['the right kind in another group, in the version it names', { group: 'batch', kind: 'ConfigMap', name: 'web', version: 'v2' }, 'batch/v2'],
    ['a core kind not allowed', { group: '', kind: 'Pod', name: 'web' }, 'v1'],
  ])('is reported, not served, with %s: the same distributions, of the kind as named', (_what, source, apiVersion) => {
    const [rd, ...rest] = reportedDistributionsOf(objectSync([{ namespace: 'team-a' }], source), kinds);
    expect(rest).toEqual([]);
    expect(rd?.metadata.name).toBe(distributionName(UID, 'web'));
    expect(rd?.spec.source).toMatchObject({ apiVersion, kind: source.kind, name: 'web' });
  });

  it('is served as it is when its kind is allowed', () => {
    const os = objectSync([{ namespace: 'team-a' }]);
    expect(reportedDistributionsOf(os, kinds)).toEqual(distributionsOf(os, kinds));
  });

  it('names its distributions by uid and copy name, its source in its own namespace by default, and says where it comes from', () => {
    const [rd] = distributionsOf(objectSync([{ namespace: 'team-a' }], { group: 'batch', kind: 'CronJob', name: 'scanner' }), kinds);
    expect(rd?.metadata.name).toBe(distributionName(UID, 'scanner'));
    expect(rd?.metadata.name).toMatch(/^objectsync-[0-9a-f]{40}$/);
    expect(rd?.spec.source).toEqual({ apiVersion: 'batch/v1', kind: 'CronJob', namespace: 'platform', name: 'scanner' });
    expect(rd?.origin).toEqual({ apiVersion: 'sync.rustrial.org/v1alpha1', kind: 'ObjectSync', namespace: 'platform', name: 'sync', uid: UID });
  });

  it('renders copies with the rename, an annotation naming the ObjectSync, and no owner reference', () => {
    const [rd] = distributionsOf(objectSync([{ namespace: 'team-a', name: 'global' }]), kinds);
    const source: Resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'platform', uid: 'u' }, data: { a: '1' } };
    const copy = renderCopy(withSource(rd!, source), 'team-a', new Date(0));
    expect(copy.metadata).toMatchObject({ name: 'global', namespace: 'team-a', ownerReferences: [] });
    expect(copy.metadata.annotations?.[ANNOTATION_OBJECT_SYNC]).toBe('platform/sync');
  });

  it.each([
    ['no version: the preferred one', undefined, 'batch/v1'],
    ['a served version', 'v1beta1', 'batch/v1beta1'],
    ['a version not served: the preferred one', 'v9', 'batch/v1'],
  ])('reads the source in %s', (_what, version, apiVersion) => {
    const registry = createKindRegistry([{ group: 'batch', kind: 'CronJob', plural: 'cronjobs', version: 'v1', versions: ['v1', 'v1beta1'] }]);
    const [rd] = distributionsOf(objectSync([{ namespace: 'team-a' }], { group: 'batch', kind: 'CronJob', ...(version ? { version } : {}) }), registry);
    expect(rd?.spec.source?.apiVersion).toBe(apiVersion);
  });

  it("takes over k8s-object-syncer's copies of the same source, and only those", () => {
    const [rd] = distributionsOf(objectSync([{ namespace: 'team-a' }]), kinds);
    const made = (source: string): Resource => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a', annotations: { [LEGACY_SOURCE_ANNOTATION]: source } } });
    expect(classifyExisting(rd!, made('platform/settings'))).toEqual({ kind: 'adoptable' });
    expect(classifyExisting(rd!, made('other/settings'))).toEqual({ kind: 'conflict', reason: 'foreign-object' });
  });

  it('adopts an object whose adopt annotation names the ObjectSync', () => {
    const [rd] = distributionsOf(objectSync([{ namespace: 'team-a' }]), kinds);
    const existing = (adopt: string): Resource => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'team-a', annotations: { [ANNOTATION_ADOPT]: adopt } } });
    expect(classifyExisting(rd!, existing('platform/sync'))).toEqual({ kind: 'adoptable' });
    expect(classifyExisting(rd!, existing('sync'))).toEqual({ kind: 'conflict', reason: 'foreign-object' });
  });
});

const status = (desired: number, succeeded: number, failedCondition?: string): DistributionStatus => ({
  desired,
  succeeded,
  failed: desired - succeeded,
  conditions:
    failedCondition === undefined
      ? [
          { type: 'ConflictOccurred', status: 'False', reason: 'Succeeded', lastTransitionTime: '2024-01-01T00:00:00Z' },
          { type: 'Ready', status: 'True', reason: 'Synced', lastTransitionTime: '2024-01-01T00:00:00Z' },
          { type: 'Stalled', status: 'False', reason: 'Succeeded', lastTransitionTime: '2024-01-01T00:00:00Z' },
        ]
      : [
          { type: 'ConflictOccurred', status: 'True', reason: 'ResourceConflict', message: failedCondition, lastTransitionTime: '2024-01-01T00:00:00Z' },
          { type: 'Ready', status: 'False', reason: 'ResourceConflict', message: failedCondition, lastTransitionTime: '2024-01-01T00:00:00Z' },
          { type: 'Stalled', status: 'True', reason: 'ResourceConflict', message: failedCondition, lastTransitionTime: '2024-01-01T00:00:00Z' },
        ],
});

describe('the ObjectSync status, folded from its distributions', () => {
  const NOW = '2024-05-01T10:00:00Z';

  it.each([
    ['all in sync', [status(2, 2), status(3, 3)], { desired: 5, succeeded: 5, failed: 0 }, 'True', 'False'],
    ['one conflict somewhere', [status(2, 2), status(3, 2, 'conflict in team-b')], { desired: 5, succeeded: 4, failed: 1 }, 'False', 'True'],
  ])('%s', (_what, statuses, counts, ready, conflict) => {
    const folded = foldStatus(objectSync([]), statuses, NOW);
    expect(folded).toMatchObject({ ...counts, observedGeneration: 3 });
    expect(folded.conditions.map((c) => [c.type, c.status])).toEqual([
      ['Ready', ready],
      ['InSync', ready],
      ['ConflictOccurred', conflict],
      ['Stalled', conflict],
    ]);
  });

  it('is not Ready when its kind is not allowed', () => {
    expect(foldStatus(objectSync([]), [], NOW).conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'False', reason: 'KindNotAllowed' }),
      expect.objectContaining({ type: 'InSync', status: 'False', reason: 'KindNotAllowed' }),
      expect.objectContaining({ type: 'Stalled', status: 'True', reason: 'KindNotAllowed' }),
    ]);
  });

  it('keeps lastTransitionTime while a condition keeps its status', () => {
    const os = { ...objectSync([]), status: foldStatus(objectSync([]), [status(1, 1)], '2024-01-01T00:00:00Z') };
    expect(foldStatus(os, [status(1, 1)], NOW).conditions[0]?.lastTransitionTime).toBe('2024-01-01T00:00:00Z');
    expect(foldStatus(os, [status(1, 0, 'x')], NOW).conditions[0]?.lastTransitionTime).toBe(NOW);
  });
});

describe('ObjectSync admission rules', () => {
  it.each([
    ['a version as the group', { group: 'v1', kind: 'Secret' }, '"Secret.v1" is not supported: use Secret, ConfigMap or CronJob.batch (allowed by RD_ALLOWED_KINDS); Secret has group "", the core group ("v1" is a version: set it in spec.source.version)'],
    ['an allowed kind in another group', { group: 'batch', kind: 'ConfigMap' }, '"ConfigMap.batch" is not supported: use Secret, ConfigMap or CronJob.batch (allowed by RD_ALLOWED_KINDS); ConfigMap has group "", the core group'],
    ['a kind allowed in no group', { group: 'apps', kind: 'Deployment' }, '"Deployment.apps" is not supported: use Secret, ConfigMap or CronJob.batch (allowed by RD_ALLOWED_KINDS)'],
  ])('%s: the message says which group', (_what, source, message) => {
    expect(validateObjectSync({ spec: { source: { ...source, name: 's' }, destinations: [{ namespace: '*' }] } }, kinds)).toEqual([{ path: 'spec.source.kind', message }]);
  });

  it.each([
    ['the README example', { source: { group: '', kind: 'ConfigMap', name: 'my-test-config-map' }, destinations: [{ namespace: '*' }] }, []],
    ['a CronJob of group batch', { source: { group: 'batch', kind: 'CronJob', name: 'scanner' }, destinations: [{ namespace: 'linkerd' }] }, []],
    ['no spec', undefined, ['spec']],
    ['a kind not allowed', { source: { group: 'apps', kind: 'Deployment', name: 'x' }, destinations: [{ namespace: '*' }] }, ['spec.source.kind']],
    ['a bad name and namespace', { source: { kind: 'Secret', name: 'Bad_Name', namespace: 'Bad NS' }, destinations: [{ namespace: '*' }] }, ['spec.source.name', 'spec.source.namespace']],
    ['no destination', { source: { kind: 'Secret', name: 's' }, destinations: [] }, ['spec.destinations']],
    ['a bad destination', { source: { kind: 'Secret', name: 's' }, destinations: [{ namespace: 'all' }, { namespace: 'x_y', name: 'Bad' }, 'nope'] }, ['spec.destinations[1].namespace', 'spec.destinations[1].name', 'spec.destinations[2]']],
    ['more destinations than one ObjectSync may hold', { source: { kind: 'Secret', name: 's' }, destinations: Array.from({ length: 1001 }, (_, i) => ({ namespace: 'team-a', name: `copy-${i}` })) }, ['spec.destinations']],
  ])('%s', (_what, spec, paths) => {
    expect(validateObjectSync({ spec }, kinds).map((problem) => problem.path)).toEqual(paths);
  });
});

describe('an ObjectSync deleted with propagation Orphan keeps its copies', () => {
  const live = objectSync([{ namespace: 'team-a' }]);
  const deleting = (finalizers: string[], uid = UID): ObjectSync => ({ ...live, metadata: { ...live.metadata, uid, deletionTimestamp: '2026-01-01T00:00:00Z', finalizers } });
  const kept = { ...deleting(['orphan']), keepsCopies: true as const };
  it.each([
    ['not being deleted', live, undefined, false],
    ['deleted, cascading (no orphan finalizer)', deleting(['resource-distributor.io/copies']), undefined, false],
    ['deleted with the orphan finalizer', deleting(['resource-distributor.io/copies', 'orphan']), undefined, true],
    ['after the garbage collector removed the orphan finalizer', deleting(['resource-distributor.io/copies']), kept, true],
    ['another object of the same name (new uid)', deleting(['resource-distributor.io/copies'], 'other-uid'), kept, false],
  ])('%s: keeps copies %s', (_case, current, previous, keeps) => {
    const found = orphanIntent(current, previous);
    expect(found.keepsCopies === true).toBe(keeps);
    expect(distributionsOf(found, kinds)[0]?.origin?.keepsCopies === true).toBe(keeps);
  });

  it('a copy is untied from it: no label it is watched by, no ObjectSync marker; the rest stays', () => {
    const copy: Resource = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: 'team-a', labels: { app: 'x', [LABEL_DISTRIBUTION]: 'objectsync-1' }, annotations: { [ANNOTATION_OBJECT_SYNC]: 'platform/sync', [ANNOTATION_FROM]: 'objectsync-1' } },
      data: { a: 'b' },
    };
    expect(untiedCopy(copy)).toEqual({ ...copy, metadata: { ...copy.metadata, labels: { app: 'x' }, annotations: { [ANNOTATION_FROM]: 'objectsync-1' } } });
  });
});
