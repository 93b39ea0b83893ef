// Fluent builders for test fixtures: distributions, namespaces, copies and foreign objects.
//   distribution('sample').configMap('game-demo', { k: 'v' }).included('ns-1', 'ns-4')
//     .selector({ matchLabels: { group: 'test' } }).excluded('ns-3').build()
//   namespace('ns-1', { group: 'test' }), terminating('ns-2')
//   copyOf(rd, 'ns-1').annotation(ANNOTATION_FROM, 'other').build()
//   foreign('ConfigMap', 'game-demo', 'ns-1').build()
import { renderCopy } from '../../src/domain/copy.js';
import {
  API_VERSION,
  KIND,
  type Action,
  type DistributionStatus,
  type FailedVerb,
  type LabelSelector,
  type LabelSelectorOperator,
  type NamespaceInfo,
  type Outcome,
  type OwnerReference,
  type ResolvedDistribution,
  type Resource,
  type SyncPolicy,
  type WritePolicy,
} from '../../src/domain/types.js';

/** A fixed instant for tests that need a `now`. */
export const T0 = new Date('2024-05-01T10:00:00Z');
export const T1 = new Date('2024-05-01T11:30:00Z');

export function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

export class DistributionBuilder {
  private readonly rd: ResolvedDistribution;

  constructor(name: string) {
    this.rd = {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name, uid: `uid-${name}`, generation: 1 },
      spec: {
        resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { key: 'value' } },
        targets: {},
      },
    };
  }

  private get resource(): Resource {
    return this.rd.spec.resource;
  }

  /**
   * Copies an object of the cluster instead of a template (`spec.source`); the result is for
   * admission and access tests, which read the source, never the template.
   */
  source(namespace: string, name: string, kind: 'Secret' | 'ConfigMap' = 'ConfigMap'): this {
    delete (this.rd.spec as { resource?: Resource }).resource;
    this.rd.spec.source = { apiVersion: 'v1', kind, namespace, name };
    return this;
  }

  /** Replaces the template wholesale (raw, unvalidated: for admission tests). */
  template(resource: Record<string, unknown>): this {
    this.rd.spec.resource = resource as Resource;
    return this;
  }

  configMap(name: string, data: Record<string, string> = {}): this {
    this.rd.spec.resource = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { ...data } };
    return this;
  }

  /** A Secret whose `plain` values are base64-encoded into data. */
  secret(name: string, plain: Record<string, string> = {}, type?: string): this {
    const data = Object.fromEntries(Object.entries(plain).map(([k, v]) => [k, base64(v)]));
    this.rd.spec.resource = { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data };
    if (type !== undefined) this.resource.type = type;
    return this;
  }

  /** Raw data values, as written (already base64 for a Secret). */
  data(data: Record<string, string>): this {
    this.resource.data = { ...data };
    return this;
  }

  stringData(stringData: Record<string, string>): this {
    this.resource.stringData = { ...stringData };
    return this;
  }

  binaryData(binaryData: Record<string, string>): this {
    this.resource.binaryData = { ...binaryData };
    return this;
  }

  type(type: string): this {
    this.resource.type = type;
    return this;
  }

  immutable(immutable = true): this {
    this.resource.immutable = immutable;
    return this;
  }

  /** Sets any field of the template (e.g. 'kind', 'apiVersion'). */
  field(key: string, value: unknown): this {
    (this.resource as Record<string, unknown>)[key] = value;
    return this;
  }

  templateMetadata(metadata: Record<string, unknown>): this {
    this.resource.metadata = { ...this.resource.metadata, ...metadata };
    return this;
  }

  templateLabels(labels: Record<string, string>): this {
    return this.templateMetadata({ labels: { ...this.resource.metadata.labels, ...labels } });
  }

  templateAnnotations(annotations: Record<string, string>): this {
    return this.templateMetadata({ annotations: { ...this.resource.metadata.annotations, ...annotations } });
  }

  allNamespaces(all = true): this {
    this.rd.spec.targets.allNamespaces = all;
    return this;
  }

  included(...names: string[]): this {
    const list = this.rd.spec.targets.includedNamespaces?.list ?? [];
    this.rd.spec.targets.includedNamespaces = { list: [...list, ...names.map((name) => ({ name }))] };
    return this;
  }

  excluded(...names: string[]): this {
    const list = this.rd.spec.targets.excludedNamespaces?.list ?? [];
    this.rd.spec.targets.excludedNamespaces = { list: [...list, ...names.map((name) => ({ name }))] };
    return this;
  }

  /** Name patterns (`team-*`) in the included list, or in the excluded one. */
  patterns(included: string[], excluded: string[] = []): this {
    const targets = this.rd.spec.targets;
    if (included.length > 0) targets.includedNamespaces = { list: [...(targets.includedNamespaces?.list ?? []), ...included.map((pattern) => ({ pattern }))] };
    if (excluded.length > 0) targets.excludedNamespaces = { list: [...(targets.excludedNamespaces?.list ?? []), ...excluded.map((pattern) => ({ pattern }))] };
    return this;
  }

  selector(selector: LabelSelector): this {
    this.rd.spec.targets.namespaceLabelSelector = structuredClone(selector);
    return this;
  }

  matchLabels(labels: Record<string, string>): this {
    const selector = this.rd.spec.targets.namespaceLabelSelector ?? {};
    return this.selector({ ...selector, matchLabels: { ...selector.matchLabels, ...labels } });
  }

  expression(key: string, operator: LabelSelectorOperator, values?: string[]): this {
    const selector = this.rd.spec.targets.namespaceLabelSelector ?? {};
    const requirement = values === undefined ? { key, operator } : { key, operator, values };
    return this.selector({ ...selector, matchExpressions: [...(selector.matchExpressions ?? []), requirement] });
  }

  writePolicy(policy: WritePolicy): this {
    this.rd.spec.writePolicy = policy;
    return this;
  }

  syncPolicy(policy: SyncPolicy): this {
    this.rd.spec.syncPolicy = policy;
    return this;
  }

  uid(uid: string | undefined): this {
    if (uid === undefined) delete this.rd.metadata.uid;
    else this.rd.metadata.uid = uid;
    return this;
  }

  generation(generation: number): this {
    this.rd.metadata.generation = generation;
    return this;
  }

  status(status: DistributionStatus): this {
    this.rd.status = structuredClone(status);
    return this;
  }

  build(): ResolvedDistribution {
    return structuredClone(this.rd);
  }
}

export function distribution(name: string): DistributionBuilder {
  return new DistributionBuilder(name);
}

/** The complete example of the OpenKruise documentation (name `sample`, ConfigMap game-demo). */
export function seedSample(): DistributionBuilder {
  return distribution('sample')
    .configMap('game-demo', {
      'game.properties': 'enemy.types=aliens,monsters\nplayer.maximum-lives=5\n',
      player_initial_lives: '3',
      ui_properties_file_name: 'user-interface.properties',
      'user-interface.properties': 'color.good=purple\ncolor.bad=yellow\nallow.textmode=true\n',
    })
    .excluded('ns-3')
    .included('ns-1', 'ns-4')
    .matchLabels({ group: 'test' });
}

export function namespace(name: string, labels: Record<string, string> = {}): NamespaceInfo {
  return { name, labels: { ...labels }, terminating: false };
}

export function terminating(name: string, labels: Record<string, string> = {}): NamespaceInfo {
  return { name, labels: { ...labels }, terminating: true };
}

export class ResourceBuilder {
  constructor(private readonly object: Resource) {}

  uid(uid: string): this {
    this.object.metadata.uid = uid;
    return this;
  }

  resourceVersion(resourceVersion: string): this {
    this.object.metadata.resourceVersion = resourceVersion;
    return this;
  }

  label(key: string, value: string): this {
    this.object.metadata.labels = { ...this.object.metadata.labels, [key]: value };
    return this;
  }

  annotation(key: string, value: string): this {
    this.object.metadata.annotations = { ...this.object.metadata.annotations, [key]: value };
    return this;
  }

  withoutAnnotation(key: string): this {
    const annotations = { ...this.object.metadata.annotations };
    delete annotations[key];
    this.object.metadata.annotations = annotations;
    return this;
  }

  withoutLabel(key: string): this {
    const labels = { ...this.object.metadata.labels };
    delete labels[key];
    this.object.metadata.labels = labels;
    return this;
  }

  data(data: Record<string, string> | undefined): this {
    if (data === undefined) delete this.object.data;
    else this.object.data = { ...data };
    return this;
  }

  binaryData(binaryData: Record<string, string>): this {
    this.object.binaryData = { ...binaryData };
    return this;
  }

  type(type: string | undefined): this {
    if (type === undefined) delete this.object.type;
    else this.object.type = type;
    return this;
  }

  immutable(immutable: boolean | undefined = true): this {
    if (immutable === undefined) delete this.object.immutable;
    else this.object.immutable = immutable;
    return this;
  }

  finalizers(...finalizers: string[]): this {
    this.object.metadata.finalizers = finalizers;
    return this;
  }

  /** Replaces every owner reference. */
  owners(...refs: OwnerReference[]): this {
    this.object.metadata.ownerReferences = refs.map((ref) => ({ ...ref }));
    return this;
  }

  /** Adds an owner reference. */
  owner(ref: OwnerReference): this {
    this.object.metadata.ownerReferences = [...(this.object.metadata.ownerReferences ?? []), { ...ref }];
    return this;
  }

  build(): Resource {
    return structuredClone(this.object);
  }
}

/** Our copy of `rd` in `ns` as the API server would return it (uid, resourceVersion set). */
export function copyOf(rd: ResolvedDistribution, ns: string, now: Date = T0): ResourceBuilder {
  const copy = renderCopy(rd, ns, now);
  copy.metadata.uid = `uid-${ns}-${copy.metadata.name ?? ''}`;
  copy.metadata.resourceVersion = '1';
  return new ResourceBuilder(copy);
}

/** A same-named object nobody distributed. */
export function foreign(kind: 'Secret' | 'ConfigMap', name: string, ns: string): ResourceBuilder {
  const object: Resource = {
    apiVersion: 'v1',
    kind,
    metadata: { name, namespace: ns, uid: `uid-${ns}-${name}`, resourceVersion: '7' },
    data: {},
  };
  if (kind === 'Secret') object.type = 'Opaque';
  return new ResourceBuilder(object);
}

/** A controller reference, e.g. to another owner: `controllerRef('apps/v1', 'Deployment', 'web')`. */
export function controllerRef(apiVersion: string, kind: string, name: string, uid = `uid-${name}`): OwnerReference {
  return { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
}

export function ok(action: Action): Outcome {
  return { action, ok: true };
}

export function failed(action: Action, verb: FailedVerb, message = 'the server is unavailable', transient = true): Outcome {
  return { action, ok: false, verb, message, transient };
}
