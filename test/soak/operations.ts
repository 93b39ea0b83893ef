// The soak's operations: what a user or another tool does to the cluster, chosen by the seeded
// sequence from what the model holds (pure), then applied to the model as intended.
import { authorMayWrite, GROUP_LABEL, MAX_DISTRIBUTIONS, MAX_NAMESPACES, MAX_OBJECT_SYNCS, NAME_PREFIX, namespaceName, TIER_LABEL, type Model, type ModelDistribution, type ModelObjectSync, type ModelSource, type WritePolicy } from './model.js';
import { meantCopies, planPod, type PodPlan } from './pod-plan.js';
import type { Prng } from './prng.js';
import { randomTargets, narrowed } from './random-targets.js';
import type { CopyKind, Targets, Template } from './snapshot-types.js';

/** Set on the operations of a distribution written by AUTHOR: they are made as that user. */
interface AsAuthor {
  asAuthor?: true;
}

export type Operation =
  | { op: 'namespace-create'; name: string; labels: Record<string, string>; authorMayWrite: boolean; pod?: PodPlan }
  | { op: 'namespace-delete'; name: string }
  | { op: 'namespace-relabel'; name: string; labels: Record<string, string> }
  | ({ op: 'distribution-create'; distribution: ModelDistribution; source?: ModelSource } & AsAuthor)
  | ({ op: 'distribution-template'; name: string; template: Template } & AsAuthor)
  | ({ op: 'distribution-targets'; name: string; targets: Targets } & AsAuthor)
  | ({ op: 'distribution-narrow'; name: string; targets: Targets } & AsAuthor)
  | ({ op: 'distribution-write-policy'; name: string; writePolicy: WritePolicy } & AsAuthor)
  | ({ op: 'distribution-delete'; name: string; orphan: boolean } & AsAuthor)
  | { op: 'source-rotate'; source: ModelSource }
  | { op: 'source-recreate'; source: ModelSource }
  | { op: 'source-delete'; name: string }
  | { op: 'objectsync-create'; objectSync: ModelObjectSync; source: ModelSource }
  | { op: 'objectsync-destinations'; name: string; destinations: ModelObjectSync['destinations'] }
  | { op: 'objectsync-delete'; name: string }
  | { op: 'pod-create'; pod: PodPlan }
  | ByHand<'copy-edit'>
  | ByHand<'copy-delete'>
  | ByHand<'foreign-create'>
  | ByHand<'foreign-edit'>
  | ByHand<'foreign-adopt'>;

export type ByHandKind = 'copy-edit' | 'copy-delete' | 'foreign-create' | 'foreign-edit' | 'foreign-adopt';
const BY_HAND: readonly string[] = ['copy-edit', 'copy-delete', 'foreign-create', 'foreign-edit', 'foreign-adopt'] satisfies ByHandKind[];

export function isByHand(operation: Operation): operation is ByHand<ByHandKind> {
  return BY_HAND.includes(operation.op);
}

/**
 * A copy's name edited, deleted or taken first by someone other than the product; an object that
 * is not ours edited; or one made to be adopted (annotated and labelled for the distribution).
 */
export interface ByHand<K extends string> {
  op: K;
  distribution: string;
  namespace: string;
  kind: CopyKind;
  name: string;
  data: Record<string, string>;
  /** foreign-adopt of a Secret: the template's type, so that taking it over needs no recreate. */
  type?: string;
}

export type OperationKind = Operation['op'];

/** A value never seen before, long enough that finding it in a log line is no coincidence. */
function value(prng: Prng): string {
  return `v-${prng.hex(16)}`;
}

/** 1 to 3 keys of fresh values; Secret data base64-encoded as the API carries it. */
function randomData(prng: Prng, kind: CopyKind): Record<string, string> {
  const data: Record<string, string> = {};
  for (let i = prng.int(1, 3); i > 0; i--) {
    const plain = value(prng);
    data[`k${prng.int(0, 4)}`] = kind === 'Secret' ? Buffer.from(plain).toString('base64') : plain;
  }
  return data;
}

/** Template-owned labels: their own prefix, so that the checker can tell a dropped one. */
function randomTemplateLabels(prng: Prng): Record<string, string> {
  const labels: Record<string, string> = {};
  if (prng.chance(0.5)) labels['tmpl.soak.example/a'] = String(prng.int(0, 2));
  if (prng.chance(0.3)) labels['tmpl.soak.example/b'] = 'x';
  return labels;
}

function randomTemplate(prng: Prng, kind: CopyKind, name: string): Template {
  const type = kind === 'Secret' ? { type: prng.chance(0.15) ? 'soak.example/custom' : 'Opaque' } : {};
  const annotations: Record<string, string> = prng.chance(0.3) ? { 'tmpl.soak.example/note': `n${prng.int(0, 9)}` } : {};
  return { apiVersion: 'v1', kind, metadata: { name, labels: randomTemplateLabels(prng), annotations }, data: randomData(prng, kind), ...type };
}

function randomNamespaceLabels(prng: Prng): Record<string, string> {
  const labels: Record<string, string> = { [GROUP_LABEL]: prng.pick(['a', 'b', 'c']) };
  if (prng.chance(0.5)) labels[TIER_LABEL] = prng.pick(['x', 'y']);
  return labels;
}

function randomWritePolicy(prng: Prng): WritePolicy {
  return prng.weighted({ default: 5, ignore: 1, overwrite: 3, strict: 1 }) === 'default' ? undefined : (prng.pick(['ignore', 'overwrite', 'strict'] as const));
}

/**
 * AUTHOR's targets: mostly names where it may write (admitted), sometimes any targets (mostly
 * refused: a selector or allNamespaces needs rights everywhere).
 */
function authorTargets(model: Model, prng: Prng): Targets {
  const writable = [...model.namespaces.keys()].filter(authorMayWrite);
  if (writable.length === 0 || prng.chance(0.3)) return randomTargets(model, prng);
  const names = new Set([prng.pick(writable), prng.pick(writable)]);
  return { includedNamespaces: { list: [...names].map((name) => ({ name })) } };
}

function asAuthor(rd: ModelDistribution): AsAuthor {
  return rd.byAuthor ? { asAuthor: true } : {};
}

function newDistribution(model: Model, prng: Prng): Operation {
  const n = model.nextDistribution;
  const kind: CopyKind = prng.chance(0.6) ? 'Secret' : 'ConfigMap';
  const byAuthor = prng.chance(0.25);
  const targets = byAuthor ? authorTargets(model, prng) : randomTargets(model, prng);
  const writePolicy = randomWritePolicy(prng);
  const name = `${NAME_PREFIX}rd-${n}`;
  if (byAuthor) {
    const template = randomTemplate(prng, kind, `${NAME_PREFIX}c-${n}`);
    return { op: 'distribution-create', distribution: { name, kind, copyName: template.metadata.name, template, targets, writePolicy, byAuthor }, asAuthor: true };
  }
  if (prng.chance(0.3)) {
    const source: ModelSource = { kind, name: `${NAME_PREFIX}s-${n}`, exists: true, data: randomData(prng, kind), labels: randomTemplateLabels(prng) };
    return { op: 'distribution-create', distribution: { name, kind, copyName: source.name, source: source.name, targets, writePolicy }, source };
  }
  const template = randomTemplate(prng, kind, `${NAME_PREFIX}c-${n}`);
  return { op: 'distribution-create', distribution: { name, kind, copyName: template.metadata.name, template, targets, writePolicy } };
}

function newObjectSync(model: Model, prng: Prng): Operation {
  const n = model.nextObjectSync;
  const kind: CopyKind = prng.chance(0.5) ? 'Secret' : 'ConfigMap';
  const source: ModelSource = { kind, name: `${NAME_PREFIX}os-${n}`, exists: true, data: randomData(prng, kind), labels: randomTemplateLabels(prng) };
  return { op: 'objectsync-create', objectSync: { name: `${NAME_PREFIX}sync-${n}`, kind, source: source.name, destinations: randomDestinations(model, prng, n) }, source };
}

/** Every namespace, or one to three names (also not created yet); sometimes a second copy name. */
function randomDestinations(model: Model, prng: Prng, n: number): ModelObjectSync['destinations'] {
  const rename = prng.chance(0.4) ? { name: `${NAME_PREFIX}os-${n}-r${prng.int(0, 2)}` } : {};
  if (prng.chance(0.3)) return [{ namespace: '*', ...rename }];
  const candidates = [...model.namespaces.keys(), namespaceName(model.nextNamespace), namespaceName(model.nextNamespace + 1)];
  const names = new Set(Array.from({ length: prng.int(1, 3) }, () => prng.pick(candidates)));
  const destinations: ModelObjectSync['destinations'] = [...names].map((namespace) => ({ namespace, ...rename }));
  if (prng.chance(0.3)) destinations.push({ namespace: prng.pick(candidates), name: `${NAME_PREFIX}os-${n}-x` });
  return destinations;
}

type Chooser = (model: Model, prng: Prng) => Operation;

const CHOOSERS: Record<OperationKind, { weight: (model: Model) => number; choose: Chooser }> = {
  'namespace-create': {
    weight: (m) => (m.namespaces.size < MAX_NAMESPACES ? 12 : 0),
    choose: (m, prng) => {
      const name = namespaceName(m.nextNamespace);
      const labels = randomNamespaceLabels(prng);
      // As `kubectl apply -f app/` does: a namespace, and at once a pod in it.
      const pod = prng.chance(0.4) ? { pod: planPod(m, prng, name, labels) } : {};
      return { op: 'namespace-create', name, labels, authorMayWrite: authorMayWrite(name), ...pod };
    },
  },
  'namespace-delete': { weight: (m) => (m.namespaces.size > 4 ? 5 : 0), choose: (m, prng) => ({ op: 'namespace-delete', name: prng.pick([...m.namespaces.keys()]) }) },
  'namespace-relabel': {
    weight: (m) => (m.namespaces.size > 0 ? 10 : 0),
    choose: (m, prng) => ({ op: 'namespace-relabel', name: prng.pick([...m.namespaces.keys()]), labels: randomNamespaceLabels(prng) }),
  },
  'distribution-create': { weight: (m) => (m.distributions.size < MAX_DISTRIBUTIONS ? 8 : 0), choose: newDistribution },
  'distribution-template': {
    weight: (m) => ([...m.distributions.values()].some((d) => d.template) ? 8 : 0),
    choose: (m, prng) => {
      const rd = prng.pick([...m.distributions.values()].filter((d) => d.template));
      return { op: 'distribution-template', name: rd.name, template: randomTemplate(prng, rd.kind, rd.copyName), ...asAuthor(rd) };
    },
  },
  'distribution-targets': {
    weight: (m) => (m.distributions.size > 0 ? 6 : 0),
    choose: (m, prng) => {
      const rd = prng.pick([...m.distributions.values()]);
      return { op: 'distribution-targets', name: rd.name, targets: rd.byAuthor ? authorTargets(m, prng) : randomTargets(m, prng), ...asAuthor(rd) };
    },
  },
  'distribution-narrow': {
    weight: (m) => (m.distributions.size > 0 ? 4 : 0),
    choose: (m, prng) => {
      const rd = prng.pick([...m.distributions.values()]);
      return { op: 'distribution-narrow', name: rd.name, targets: narrowed(rd.targets, m, prng), ...asAuthor(rd) };
    },
  },
  'distribution-write-policy': {
    weight: (m) => (m.distributions.size > 0 ? 4 : 0),
    choose: (m, prng) => {
      const rd = prng.pick([...m.distributions.values()]);
      return { op: 'distribution-write-policy', name: rd.name, writePolicy: randomWritePolicy(prng), ...asAuthor(rd) };
    },
  },
  'distribution-delete': {
    weight: (m) => (m.distributions.size > 2 ? 3 : 0),
    choose: (m, prng) => {
      const rd = prng.pick([...m.distributions.values()]);
      return { op: 'distribution-delete', name: rd.name, orphan: prng.chance(0.4), ...asAuthor(rd) };
    },
  },
  'source-rotate': {
    weight: (m) => ([...m.sources.values()].some((s) => s.exists) ? 6 : 0),
    choose: (m, prng) => {
      const source = prng.pick([...m.sources.values()].filter((s) => s.exists));
      return { op: 'source-rotate', source: { ...source, data: randomData(prng, source.kind), labels: randomTemplateLabels(prng) } };
    },
  },
  'source-delete': {
    weight: (m) => ([...m.sources.values()].some((s) => s.exists) ? 2 : 0),
    choose: (m, prng) => ({ op: 'source-delete', name: prng.pick([...m.sources.values()].filter((s) => s.exists)).name }),
  },
  'source-recreate': {
    weight: (m) => ([...m.sources.values()].some((s) => !s.exists) ? 4 : 0),
    choose: (m, prng) => {
      const source = prng.pick([...m.sources.values()].filter((s) => !s.exists));
      return { op: 'source-recreate', source: { ...source, exists: true, data: randomData(prng, source.kind) } };
    },
  },
  'objectsync-create': { weight: (m) => (m.objectSyncs.size < MAX_OBJECT_SYNCS ? 3 : 0), choose: newObjectSync },
  'objectsync-destinations': {
    weight: (m) => (m.objectSyncs.size > 0 ? 3 : 0),
    choose: (m, prng) => {
      const os = prng.pick([...m.objectSyncs.values()]);
      return { op: 'objectsync-destinations', name: os.name, destinations: randomDestinations(m, prng, Number(os.name.split('-').at(-1))) };
    },
  },
  'objectsync-delete': { weight: (m) => (m.objectSyncs.size > 1 ? 1 : 0), choose: (m, prng) => ({ op: 'objectsync-delete', name: prng.pick([...m.objectSyncs.keys()]) }) },
  'pod-create': {
    weight: (m) => (m.namespaces.size > 0 ? 5 : 0),
    choose: (m, prng) => ({ op: 'pod-create', pod: planPod(m, prng, prng.pick([...m.namespaces.keys()])) }),
  },
  'copy-edit': { weight: byHand(8), choose: (m, prng) => byHandOperation('copy-edit', m, prng) },
  'copy-delete': { weight: byHand(6), choose: (m, prng) => byHandOperation('copy-delete', m, prng) },
  'foreign-create': { weight: byHand(4), choose: (m, prng) => byHandOperation('foreign-create', m, prng) },
  'foreign-edit': { weight: byHand(3), choose: (m, prng) => byHandOperation('foreign-edit', m, prng) },
  'foreign-adopt': { weight: byHand(3), choose: (m, prng) => byHandOperation('foreign-adopt', m, prng) },
};

function byHand(weight: number): (model: Model) => number {
  return (m) => (m.distributions.size > 0 && m.namespaces.size > 0 ? weight : 0);
}

function byHandOperation<K extends ByHandKind>(op: K, model: Model, prng: Prng): ByHand<K> {
  const rd = prng.pick([...model.distributions.values()]);
  // An object made for adoption where the distribution is meant to write, mostly: there it must be taken over.
  const meant = op === 'foreign-adopt' ? [...model.namespaces.keys()].filter((ns) => meantCopies(model, ns).some((c) => c.kind === rd.kind && c.name === rd.copyName)) : [];
  const namespace = meant.length > 0 && prng.chance(0.8) ? prng.pick(meant) : prng.pick([...model.namespaces.keys()]);
  const type = op === 'foreign-adopt' && rd.kind === 'Secret' ? { type: rd.template?.type ?? 'Opaque' } : {};
  return { op, distribution: rd.name, namespace, kind: rd.kind, name: rd.copyName, data: randomData(prng, rd.kind), ...type };
}

export function chooseOperation(model: Model, prng: Prng): Operation {
  const weights = Object.fromEntries(Object.entries(CHOOSERS).map(([kind, chooser]) => [kind, chooser.weight(model)])) as Record<OperationKind, number>;
  return CHOOSERS[prng.weighted(weights)].choose(model, prng);
}
