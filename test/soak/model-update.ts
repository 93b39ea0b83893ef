// The model after an operation, as the operation intended it.
import type { Model, ModelDistribution } from './model.js';
import type { Operation, OperationKind } from './operations.js';

type Of<K extends OperationKind> = Extract<Operation, { op: K }>;

function changeDistribution(model: Model, name: string, change: (rd: ModelDistribution) => void): void {
  const rd = model.distributions.get(name);
  if (rd) change(rd);
}

const nothing = (): void => undefined;

// By-hand edits and foreign objects change what the product must repair, not what is meant.
const UPDATES: { [K in OperationKind]: (model: Model, operation: Of<K>) => void } = {
  'namespace-create': (model, o) => {
    model.namespaces.set(o.name, o.labels);
    model.nextNamespace += 1;
    if (o.pod) model.nextPod += 1;
  },
  'namespace-delete': (model, o) => void model.namespaces.delete(o.name),
  'namespace-relabel': (model, o) => void model.namespaces.set(o.name, o.labels),
  'distribution-create': (model, o) => {
    model.distributions.set(o.distribution.name, structuredClone(o.distribution));
    if (o.source) model.sources.set(o.source.name, structuredClone(o.source));
    model.nextDistribution += 1;
  },
  'distribution-template': (model, o) => changeDistribution(model, o.name, (rd) => (rd.template = o.template)),
  'distribution-targets': (model, o) => changeDistribution(model, o.name, (rd) => (rd.targets = o.targets)),
  'distribution-narrow': (model, o) => changeDistribution(model, o.name, (rd) => (rd.targets = o.targets)),
  'distribution-write-policy': (model, o) => changeDistribution(model, o.name, (rd) => (rd.writePolicy = o.writePolicy)),
  'distribution-delete': (model, o) => void model.distributions.delete(o.name),
  'source-rotate': (model, o) => void model.sources.set(o.source.name, structuredClone(o.source)),
  'source-recreate': (model, o) => void model.sources.set(o.source.name, structuredClone(o.source)),
  'source-delete': (model, o) => {
    const source = model.sources.get(o.name);
    if (source) source.exists = false;
  },
  'objectsync-create': (model, o) => {
    model.objectSyncs.set(o.objectSync.name, structuredClone(o.objectSync));
    model.sources.set(o.source.name, structuredClone(o.source));
    model.nextObjectSync += 1;
  },
  'objectsync-destinations': (model, o) => {
    const os = model.objectSyncs.get(o.name);
    if (os) os.destinations = structuredClone(o.destinations);
  },
  'objectsync-delete': (model, o) => void model.objectSyncs.delete(o.name),
  'pod-create': (model) => void (model.nextPod += 1),
  'copy-edit': nothing,
  'copy-delete': nothing,
  'foreign-create': nothing,
  'foreign-edit': nothing,
  'foreign-adopt': nothing,
};

export function applyToModel(model: Model, operation: Operation): void {
  (UPDATES[operation.op] as (model: Model, operation: Operation) => void)(model, operation);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The plain values an operation writes (every `data` beside a `kind`: templates, sources, objects
 * made by hand): none may ever appear in a log line or an Event.
 */
export function valuesOf(operation: unknown): string[] {
  if (!isRecord(operation)) return [];
  const own: string[] = [];
  const { data, kind } = operation;
  if (isRecord(data) && typeof kind === 'string') {
    for (const v of Object.values(data)) if (typeof v === 'string') own.push(kind === 'Secret' ? Buffer.from(v, 'base64').toString('utf8') : v);
  }
  return [...own, ...Object.values(operation).flatMap(valuesOf)];
}
