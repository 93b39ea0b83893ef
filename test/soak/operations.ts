// The soak's operations: what a user or another tool does to the cluster, chosen by the seeded
// sequence from what the model holds (pure), then applied to the model as intended.
import { GROUP_LABEL, MAX_DISTRIBUTIONS, MAX_NAMESPACES, NAME_PREFIX, namespaceName, TIER_LABEL, type Model, type ModelDistribution, type ModelSource, type WritePolicy } from './model.js';
import type { Prng } from './prng.js';
import { randomTargets, narrowed } from './random-targets.js';
import type { CopyKind, Targets, Template } from './snapshot-types.js';

export type Operation =
  | { op: 'namespace-create'; name: string; labels: Record<string, string> }
  | { op: 'namespace-delete'; name: string }
  | { op: 'namespace-relabel'; name: string; labels: Record<string, string> }
  | { op: 'distribution-create'; distribution: ModelDistribution; source?: ModelSource }
  | { op: 'distribution-template'; name: string; template: Template }
  | { op: 'distribution-targets'; name: string; targets: Targets }
  | { op: 'distribution-narrow'; name: string; targets: Targets }
  | { op: 'distribution-write-policy'; name: string; writePolicy: WritePolicy }
  | { op: 'distribution-delete'; name: string; orphan: boolean }
  | { op: 'source-rotate'; source: ModelSource }
  | { op: 'source-recreate'; source: ModelSource }
  | { op: 'source-delete'; name: string }
  | ByHand<'copy-edit'>
  | ByHand<'copy-delete'>
  | ByHand<'foreign-create'>;

/** A copy's name edited, deleted or taken first by someone other than the product. */
export interface ByHand<K extends string> {
  op: K;
  distribution: string;
  namespace: string;
  kind: CopyKind;
  name: string;
  data: Record<string, string>;
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

function newDistribution(model: Model, prng: Prng): Operation {
  const n = model.nextDistribution;
  const kind: CopyKind = prng.chance(0.6) ? 'Secret' : 'ConfigMap';
  const targets = randomTargets(model, prng);
  const writePolicy = randomWritePolicy(prng);
  const name = `${NAME_PREFIX}rd-${n}`;
  if (prng.chance(0.3)) {
    const source: ModelSource = { kind, name: `${NAME_PREFIX}s-${n}`, exists: true, data: randomData(prng, kind), labels: randomTemplateLabels(prng) };
    return { op: 'distribution-create', distribution: { name, kind, copyName: source.name, source: source.name, targets, writePolicy }, source };
  }
  const template = randomTemplate(prng, kind, `${NAME_PREFIX}c-${n}`);
  return { op: 'distribution-create', distribution: { name, kind, copyName: template.metadata.name, template, targets, writePolicy } };
}

type Chooser = (model: Model, prng: Prng) => Operation;

const CHOOSERS: Record<OperationKind, { weight: (model: Model) => number; choose: Chooser }> = {
  'namespace-create': {
    weight: (m) => (m.namespaces.size < MAX_NAMESPACES ? 12 : 0),
    choose: (m, prng) => ({ op: 'namespace-create', name: namespaceName(m.nextNamespace), labels: randomNamespaceLabels(prng) }),
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
      return { op: 'distribution-template', name: rd.name, template: randomTemplate(prng, rd.kind, rd.copyName) };
    },
  },
  'distribution-targets': {
    weight: (m) => (m.distributions.size > 0 ? 6 : 0),
    choose: (m, prng) => ({ op: 'distribution-targets', name: prng.pick([...m.distributions.keys()]), targets: randomTargets(m, prng) }),
  },
  'distribution-narrow': {
    weight: (m) => (m.distributions.size > 0 ? 4 : 0),
    choose: (m, prng) => {
      const rd = prng.pick([...m.distributions.values()]);
      return { op: 'distribution-narrow', name: rd.name, targets: narrowed(rd.targets, m, prng) };
    },
  },
  'distribution-write-policy': {
    weight: (m) => (m.distributions.size > 0 ? 4 : 0),
    choose: (m, prng) => ({ op: 'distribution-write-policy', name: prng.pick([...m.distributions.keys()]), writePolicy: randomWritePolicy(prng) }),
  },
  'distribution-delete': {
    weight: (m) => (m.distributions.size > 2 ? 3 : 0),
    choose: (m, prng) => ({ op: 'distribution-delete', name: prng.pick([...m.distributions.keys()]), orphan: prng.chance(0.4) }),
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
  'copy-edit': { weight: byHand(8), choose: (m, prng) => byHandOperation('copy-edit', m, prng) },
  'copy-delete': { weight: byHand(6), choose: (m, prng) => byHandOperation('copy-delete', m, prng) },
  'foreign-create': { weight: byHand(4), choose: (m, prng) => byHandOperation('foreign-create', m, prng) },
};

function byHand(weight: number): (model: Model) => number {
  return (m) => (m.distributions.size > 0 && m.namespaces.size > 0 ? weight : 0);
}

function byHandOperation<K extends 'copy-edit' | 'copy-delete' | 'foreign-create'>(op: K, model: Model, prng: Prng): ByHand<K> {
  const rd = prng.pick([...model.distributions.values()]);
  const namespace = prng.pick([...model.namespaces.keys()]);
  return { op, distribution: rd.name, namespace, kind: rd.kind, name: rd.copyName, data: randomData(prng, rd.kind) };
}

export function chooseOperation(model: Model, prng: Prng): Operation {
  const weights = Object.fromEntries(Object.entries(CHOOSERS).map(([kind, chooser]) => [kind, chooser.weight(model)])) as Record<OperationKind, number>;
  return CHOOSERS[prng.weighted(weights)].choose(model, prng);
}
