import { describe, expect, it } from 'vitest';
import { ANNOTATION_FROM, LABEL_DISTRIBUTION, type NamespaceInfo, type Resource } from '../../../src/domain/types.js';
import { CORE_REGISTRY } from '../../../src/domain/kinds.js';
import {
  copiedName,
  copyTriggers,
  distributionTriggers,
  namedObjectTriggers,
  namedTargetsOf,
  namespaceTriggers,
  sourcesOf,
  type Change,
} from '../../../src/reconcile/triggers.js';
import { copyOf, distribution, foreign, namespace, terminating } from '../builders.js';

const byLabel = distribution('by-label').matchLabels({ team: 'a' }).build();
const byName = distribution('by-name').included('named').build();
const everywhere = distribution('everywhere').allNamespaces().excluded('quiet').build();
const distributions = [byLabel, byName, everywhere];

describe('namespaceTriggers', () => {
  it.each<[string, Change<NamespaceInfo>, string[]]>([
    ['a new namespace with the label', { current: namespace('n', { team: 'a' }) }, ['by-label', 'everywhere']],
    ['a new namespace without it', { current: namespace('n') }, ['everywhere']],
    ['label added', { old: namespace('n'), current: namespace('n', { team: 'a' }) }, ['by-label', 'everywhere']],
    ['label removed: the old match counts', { old: namespace('n', { team: 'a' }), current: namespace('n') }, ['by-label', 'everywhere']],
    ['label changed to another team', { old: namespace('n', { team: 'a' }), current: namespace('n', { team: 'b' }) }, ['by-label', 'everywhere']],
    ['nothing that matters changed', { old: namespace('n', { team: 'a' }), current: namespace('n', { team: 'a' }) }, []],
    ['deleted', { old: namespace('n', { team: 'a' }) }, ['by-label', 'everywhere']],
    ['starts terminating', { old: namespace('n', { team: 'a' }), current: terminating('n', { team: 'a' }) }, ['by-label', 'everywhere']],
    ['listed by name, created', { current: namespace('named') }, ['by-name', 'everywhere']],
    ['listed by name, deleted', { old: namespace('named') }, ['by-name', 'everywhere']],
    ['listed by name, terminating', { old: namespace('named'), current: terminating('named') }, ['by-name', 'everywhere']],
    ['excluded namespace', { current: namespace('quiet') }, []],
    ['kube-system is never a target', { current: namespace('kube-system', { team: 'a' }) }, []],
  ])('%s', (_, change, expected) => {
    expect(namespaceTriggers(change, distributions)).toEqual(expected);
  });

  it('honours namespaces the operator forbids', () => {
    expect(namespaceTriggers({ current: namespace('ops', { team: 'a' }) }, distributions, ['ops'])).toEqual([]);
  });
});

const rd = distribution('shared').build();

describe('copyTriggers', () => {
  it.each<[string, Change<Resource>, string[]]>([
    ['our copy', { current: copyOf(rd, 'n').build() }, ['shared']],
    ['our copy deleted', { old: copyOf(rd, 'n').build() }, ['shared']],
    ['from changed: both names', { old: copyOf(rd, 'n').build(), current: copyOf(rd, 'n').annotation(ANNOTATION_FROM, 'other').build() }, ['other', 'shared']],
    ['label changed: both names', { old: copyOf(rd, 'n').build(), current: copyOf(rd, 'n').label(LABEL_DISTRIBUTION, 'x').build() }, ['shared', 'x']],
    ['an unlabelled object', { current: foreign('ConfigMap', 'settings', 'n').build() }, []],
  ])('%s', (_, change, expected) => {
    expect(copyTriggers(change)).toEqual(expected);
  });
});

/** `rd` as stored: uid and generation set, then `change` applied to a copy of its metadata (and status). */
function stored(change: (metadata: typeof rd.metadata) => void = () => undefined, status?: typeof rd.status): typeof rd {
  const metadata = { ...rd.metadata, uid: 'u-1', generation: 3, resourceVersion: '10', labels: { team: 'a' }, annotations: { note: 'x' }, finalizers: ['f'] };
  change(metadata);
  return { ...rd, metadata, ...(status ? { status } : {}) };
}
const converged = { desired: 2, succeeded: 2, failed: 0, observedGeneration: 3, conditions: [] };

describe('distributionTriggers', () => {
  it.each<[string, Change<typeof rd>, string[]]>([
    ['created', { current: rd }, ['shared']],
    ['the same object again: nothing to do', { old: rd, current: rd }, []],
    ['deleted', { old: rd }, ['shared']],
    ['its status written (resourceVersion and status only): nothing to do', { old: stored(), current: stored((m) => (m.resourceVersion = '11'), converged) }, []],
    ['its spec changed (generation bumped)', { old: stored(), current: stored((m) => (m.generation = 4)) }, ['shared']],
    ['being deleted', { old: stored(), current: stored((m) => (m.deletionTimestamp = '2026-11-26T00:00:00Z')) }, ['shared']],
    ['a finalizer removed', { old: stored(), current: stored((m) => (m.finalizers = [])) }, ['shared']],
    ['a label changed', { old: stored(), current: stored((m) => (m.labels = { team: 'b' })) }, ['shared']],
    ['an annotation added', { old: stored(), current: stored((m) => (m.annotations = { note: 'x', more: 'y' })) }, ['shared']],
    ['deleted and created again under that name (another uid)', { old: stored(), current: stored((m) => (m.uid = 'u-2')) }, ['shared']],
    ['no generation known: counted as a change', { old: stored((m) => delete m.generation), current: stored((m) => delete m.generation, converged) }, ['shared']],
  ])('%s', (_, change, expected) => {
    expect(distributionTriggers(change)).toEqual(expected);
  });
});

describe('copiedName', () => {
  it.each([
    ['a template', distribution('t').configMap('settings').build(), { kind: 'ConfigMap', name: 'settings' }],
    ['a source', distribution('s').source('platform', 'registry', 'Secret').build(), { kind: 'Secret', name: 'registry' }],
    ['a renamed source (an ObjectSync destination)', { ...distribution('r').source('platform', 'registry').build(), spec: { ...distribution('r').source('platform', 'registry').build().spec, rename: 'copy' } }, { kind: 'ConfigMap', name: 'copy' }],
    ['a template without a name', distribution('n').template({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }).build(), undefined],
  ])('%s', (_, rd, expected) => {
    expect(copiedName(rd)).toEqual(expected);
  });
});

describe('namedTargetsOf', () => {
  it('groups the distributions writing each kind and name, and leaves out kinds not allowed', () => {
    const a = distribution('a').configMap('shared').build();
    const b = distribution('b').configMap('shared').build();
    const c = distribution('c').secret('shared').build();
    const job = distribution('job').template({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'shared' } }).build();
    expect(namedTargetsOf([a, b, c, job], CORE_REGISTRY)).toEqual([
      { kind: 'ConfigMap', name: 'shared', distributions: ['a', 'b'] },
      { kind: 'Secret', name: 'shared', distributions: ['c'] },
    ]);
  });
});

describe('sourcesOf', () => {
  it('leaves out sources of kinds not allowed (never watched)', () => {
    const allowed = distribution('a').source('platform', 'registry', 'Secret').build();
    const job = { ...allowed, metadata: { name: 'job' }, spec: { ...allowed.spec, source: { apiVersion: 'batch/v1', kind: 'CronJob', namespace: 'platform', name: 'nightly' } } };
    expect(sourcesOf([allowed, job], CORE_REGISTRY).map((ref) => ref.name)).toEqual(['registry']);
  });
});

describe('namedObjectTriggers', () => {
  const writers = ['a', 'b'];
  const object = foreign('ConfigMap', 'shared', 'n').build();
  const ofA = foreign('ConfigMap', 'shared', 'n').label(LABEL_DISTRIBUTION, 'a').build();
  it.each<[string, Change<Resource>, string[]]>([
    ['a foreign object appears: every writer', { current: object }, ['a', 'b']],
    ['a foreign object deleted or annotated: every writer', { old: object }, ['a', 'b']],
    ["a's copy changes: not a (its copy watch sees it), b", { old: ofA, current: ofA }, ['b']],
    ["a's copy goes (a conflict that clears for b)", { old: ofA }, ['b']],
    ["a's copy loses its label: a too", { old: ofA, current: object }, ['a', 'b']],
    ['an object labelled for a distribution that does not write the name', { current: foreign('ConfigMap', 'shared', 'n').label(LABEL_DISTRIBUTION, 'z').build() }, ['a', 'b']],
  ])('%s', (_, change, expected) => {
    expect(namedObjectTriggers(change, writers)).toEqual(expected);
  });
});
