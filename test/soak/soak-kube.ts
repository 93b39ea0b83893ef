// The soak's hands on the cluster: each operation as the API calls a user or a tool would make,
// with the admin's credentials; and the snapshot the checker reads.
import { ApiException, CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { ANNOTATION_FROM } from './markers.js';
import { SOURCE_NAMESPACE, type ModelDistribution, type ModelSource } from './model.js';
import type { ByHand, Operation } from './operations.js';

export const RD = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'resourcedistributions' };
const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export type Outcome = { result: 'ok'; uid?: string } | { result: 'skipped' | 'failed'; message: string };

/** Not a failure: the by-hand operation found nothing to do (no copy there yet, or one came first). */
export class NothingToDo extends Error {}

function statusOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { message: text };
  }
}

/** The API server's own message when it sent one (a Status body), else the client's. */
function describe(error: unknown): string {
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? parsedOrText(error.body) : (error.body as unknown);
    const message = typeof body === 'object' && body !== null && 'message' in body ? String(body.message) : error.message;
    return `${error.code} ${message.slice(0, 300)}`;
  }
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]?.slice(0, 300) ?? '';
}

export function distributionManifest(rd: ModelDistribution): object {
  const what = rd.source ? { source: { apiVersion: 'v1', kind: rd.kind, namespace: SOURCE_NAMESPACE, name: rd.source } } : { resource: rd.template };
  return {
    apiVersion: `${RD.group}/${RD.version}`,
    kind: 'ResourceDistribution',
    metadata: { name: rd.name },
    spec: { ...what, targets: rd.targets, ...(rd.writePolicy === undefined ? {} : { writePolicy: rd.writePolicy }) },
  };
}

function objectManifest(kind: string, namespace: string, name: string, data: Record<string, string>, labels: Record<string, string>): object {
  return { apiVersion: 'v1', kind, metadata: { name, namespace, labels }, data, ...(kind === 'Secret' ? { type: 'Opaque' } : {}) };
}

export class SoakKube {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  async apply(operation: Operation): Promise<Outcome> {
    try {
      const uid = await this.run(operation);
      return { result: 'ok', ...(uid === undefined ? {} : { uid }) };
    } catch (error) {
      if (error instanceof NothingToDo) return { result: 'skipped', message: error.message };
      return { result: 'failed', message: describe(error) };
    }
  }

  async createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    try {
      await this.core.createNamespace({ body: { metadata: { name, labels } } });
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  }

  private async run(o: Operation): Promise<string | undefined> {
    switch (o.op) {
      case 'namespace-create':
        return (await this.core.createNamespace({ body: { metadata: { name: o.name, labels: o.labels } } })).metadata?.uid;
      case 'namespace-delete':
        await this.core.deleteNamespace({ name: o.name });
        return undefined;
      case 'namespace-relabel':
        await this.relabel(o.name, o.labels);
        return undefined;
      case 'source-rotate':
      case 'source-recreate':
        await this.putSource(o.source);
        return undefined;
      case 'source-delete':
        await this.deleteObject('Secret', SOURCE_NAMESPACE, o.name).catch(() => this.deleteObject('ConfigMap', SOURCE_NAMESPACE, o.name));
        return undefined;
      case 'copy-edit':
      case 'copy-delete':
      case 'foreign-create':
        return this.byHand(o);
      default:
        await this.distribution(o);
        return undefined;
    }
  }

  private async distribution(o: Operation): Promise<void> {
    switch (o.op) {
      case 'distribution-create':
        if (o.source) await this.putSource(o.source);
        await this.custom.createClusterCustomObject({ ...RD, body: distributionManifest(o.distribution) });
        return;
      case 'distribution-template':
        return this.patchSpec(o.name, [{ op: 'add', path: '/spec/resource', value: o.template }]);
      case 'distribution-targets':
      case 'distribution-narrow':
        return this.patchSpec(o.name, [{ op: 'add', path: '/spec/targets', value: o.targets }]);
      case 'distribution-write-policy':
        await this.custom.patchClusterCustomObject({ ...RD, name: o.name, body: { spec: { writePolicy: o.writePolicy ?? null } } }, MERGE_PATCH);
        return;
      case 'distribution-delete':
        await this.custom.deleteClusterCustomObject({ ...RD, name: o.name, propagationPolicy: o.orphan ? 'Orphan' : 'Background' });
        return;
      default:
        throw new Error(`not a distribution operation: ${o.op}`);
    }
  }

  private async relabel(name: string, labels: Record<string, string>): Promise<void> {
    const current = (await this.core.readNamespace({ name })).metadata?.labels ?? {};
    const removed = Object.fromEntries(Object.keys(current).filter((key) => key.startsWith('soak.example/') && !(key in labels)).map((key) => [key, null]));
    await this.core.patchNamespace({ name, body: { metadata: { labels: { ...removed, ...labels } } } }, MERGE_PATCH);
  }

  private async patchSpec(name: string, patch: object[]): Promise<void> {
    await this.custom.patchClusterCustomObject({ ...RD, name, body: patch }, JSON_PATCH);
  }

  /** Creates the source, or replaces its data and labels. */
  private async putSource(source: ModelSource): Promise<void> {
    const body = objectManifest(source.kind, SOURCE_NAMESPACE, source.name, source.data, source.labels) as never;
    try {
      if (source.kind === 'Secret') await this.core.createNamespacedSecret({ namespace: SOURCE_NAMESPACE, body });
      else await this.core.createNamespacedConfigMap({ namespace: SOURCE_NAMESPACE, body });
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
      await this.patchObject(source.kind, SOURCE_NAMESPACE, source.name, [
        { op: 'add', path: '/data', value: source.data },
        { op: 'add', path: '/metadata/labels', value: source.labels },
      ]);
    }
  }

  private async patchObject(kind: string, namespace: string, name: string, body: object[]): Promise<void> {
    if (kind === 'Secret') await this.core.patchNamespacedSecret({ name, namespace, body }, JSON_PATCH);
    else await this.core.patchNamespacedConfigMap({ name, namespace, body }, JSON_PATCH);
  }

  private async deleteObject(kind: string, namespace: string, name: string): Promise<void> {
    if (kind === 'Secret') await this.core.deleteNamespacedSecret({ name, namespace });
    else await this.core.deleteNamespacedConfigMap({ name, namespace });
  }

  /**
   * Only copies are edited or deleted by hand: objects that are not ours are not watched, so the
   * removal of one is seen at the next pass (README: Limitations), not within a quiet period.
   */
  private async mustBeCopy(kind: string, namespace: string, name: string): Promise<void> {
    const found = kind === 'Secret' ? await this.core.readNamespacedSecret({ name, namespace }) : await this.core.readNamespacedConfigMap({ name, namespace });
    if (found.metadata?.annotations?.[ANNOTATION_FROM] === undefined) throw new NothingToDo(`${namespace}/${name} is not a copy`);
  }

  private async byHand(o: ByHand<'copy-edit' | 'copy-delete' | 'foreign-create'>): Promise<string | undefined> {
    try {
      if (o.op !== 'foreign-create') await this.mustBeCopy(o.kind, o.namespace, o.name);
      if (o.op === 'copy-edit') await this.patchObject(o.kind, o.namespace, o.name, [{ op: 'add', path: '/data', value: o.data }]);
      if (o.op === 'copy-delete') await this.deleteObject(o.kind, o.namespace, o.name);
      if (o.op !== 'foreign-create') return undefined;
      // Someone else's object of the copy's name: the copy (if any) removed first, as a user replacing it would.
      await this.deleteObject(o.kind, o.namespace, o.name).catch((error: unknown) => {
        if (statusOf(error) !== 404) throw error;
      });
      const body = objectManifest(o.kind, o.namespace, o.name, o.data, { 'soak.example/foreign': 'yes' }) as never;
      const made = o.kind === 'Secret' ? await this.core.createNamespacedSecret({ namespace: o.namespace, body }) : await this.core.createNamespacedConfigMap({ namespace: o.namespace, body });
      return made.metadata?.uid;
    } catch (error) {
      const code = statusOf(error);
      if (code === 404 || code === 409) throw new NothingToDo(describe(error));
      throw error;
    }
  }
}
