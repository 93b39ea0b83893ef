// The soak's hands on the cluster: each operation as the API calls a user or a tool would make,
// with the admin's credentials; and the snapshot the checker reads.
import { request } from 'node:https';
import { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, LABEL_DISTRIBUTION, OBJECT_SYNC } from './markers.js';
import { AUTHOR, SOURCE_NAMESPACE, type ModelDistribution, type ModelObjectSync, type ModelSource } from './model.js';
import { isByHand, type ByHand, type ByHandKind, type Operation } from './operations.js';
import type { PodPlan } from './pod-plan.js';

export const RD = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'resourcedistributions' };
const JSON_PATCH = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A pod's create: admitted at this resourceVersion (etcd's revision of its write), or refused. */
export type PodOutcome = { resourceVersion: string } | { failed: string };

export type Outcome = { result: 'ok'; uid?: string; pod?: PodOutcome } | { result: 'skipped' | 'failed'; message: string };

/** The ClusterRole AUTHOR is bound to in the namespaces where it may write (setup creates it). */
export const AUTHOR_WRITER_ROLE = 'soak-author-writer';

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

export function objectSyncManifest(os: ModelObjectSync): object {
  return {
    apiVersion: `${OBJECT_SYNC.group}/${OBJECT_SYNC.version}`,
    kind: 'ObjectSync',
    metadata: { name: os.name, namespace: SOURCE_NAMESPACE },
    spec: { source: { group: '', kind: os.kind, name: os.source }, destinations: os.destinations },
  };
}

/** No scheduler serves this name: the soak's pods stay Pending also where a node runs the replicas. */
export const UNSCHEDULED = 'soak-never-scheduled';

/** A pod that never runs (never scheduled), referencing each Secret or ConfigMap the way the plan says. */
export function podManifest(plan: PodPlan): V1Pod {
  const env: object[] = [];
  const envFrom: object[] = [];
  const volumes: object[] = [];
  plan.refs.forEach((ref, i) => {
    const secret = ref.kind === 'Secret';
    if (ref.how === 'env') env.push({ name: `V${i}`, valueFrom: { [secret ? 'secretKeyRef' : 'configMapKeyRef']: { name: ref.name, key: 'k0', optional: true } } });
    if (ref.how === 'envFrom') envFrom.push({ [secret ? 'secretRef' : 'configMapRef']: { name: ref.name, optional: true } });
    if (ref.how === 'volume') volumes.push({ name: `v${i}`, ...(secret ? { secret: { secretName: ref.name, optional: true } } : { configMap: { name: ref.name, optional: true } }) });
  });
  return {
    metadata: { name: plan.name, namespace: plan.namespace },
    spec: { schedulerName: UNSCHEDULED, containers: [{ name: 'app', image: 'soak.example/app:1', env, envFrom } as never], volumes: volumes as never, automountServiceAccountToken: false },
  };
}

function objectManifest(kind: string, namespace: string, name: string, data: Record<string, string>, labels: Record<string, string>, annotations: Record<string, string> = {}, type = 'Opaque'): object {
  return { apiVersion: 'v1', kind, metadata: { name, namespace, labels, annotations }, data, ...(kind === 'Secret' ? { type } : {}) };
}

/** The admin kubeconfig impersonating `user`. */
function impersonating(kc: KubeConfig, user: string): KubeConfig {
  const impersonated = new KubeConfig();
  const admin = kc.getCurrentUser();
  impersonated.loadFromOptions({
    clusters: kc.clusters,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
    users: kc.users.map((u) => (u.name === admin?.name ? { ...u, impersonateUser: user } : u)),
  });
  return impersonated;
}

export class SoakKube {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  /** As AUTHOR, for its distributions. */
  private readonly authorCustom: CustomObjectsApi;
  private readonly rbac: RbacAuthorizationV1Api;

  constructor(private readonly kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.authorCustom = impersonating(kc, AUTHOR).makeApiClient(CustomObjectsApi);
    this.rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  }

  async apply(operation: Operation): Promise<Outcome> {
    try {
      const uid = await this.run(operation);
      const pod = await this.podOf(operation);
      return { result: 'ok', ...(uid === undefined ? {} : { uid }), ...(pod === undefined ? {} : { pod }) };
    } catch (error) {
      if (error instanceof NothingToDo) return { result: 'skipped', message: error.message };
      return { result: 'failed', message: describe(error) };
    }
  }

  /** The API server's own /metrics (its admin may read them); undefined when it does not answer. */
  async apiserverMetrics(): Promise<string | undefined> {
    const server = this.kc.getCurrentCluster()?.server;
    if (!server) return undefined;
    const options: { timeout: number } & Record<string, unknown> = { timeout: 5_000 };
    await this.kc.applyToHTTPSOptions(options);
    return new Promise((resolve) => {
      const req = request(`${server}/metrics`, options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(res.statusCode === 200 ? body : undefined));
        res.on('error', () => resolve(undefined));
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(undefined));
      req.end();
    });
  }

  async createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
    try {
      await this.core.createNamespace({ body: { metadata: { name, labels } } });
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  }

  /** The pod of a pod-create, or of a namespace-create that makes one at once. */
  private async podOf(o: Operation): Promise<PodOutcome | undefined> {
    const plan = o.op === 'pod-create' ? o.pod : o.op === 'namespace-create' ? o.pod : undefined;
    if (!plan) return undefined;
    try {
      const made = await this.core.createNamespacedPod({ namespace: plan.namespace, body: podManifest(plan) });
      return { resourceVersion: made.metadata?.resourceVersion ?? '' };
    } catch (error) {
      if (o.op === 'pod-create') throw error;
      return { failed: describe(error) };
    }
  }

  private async run(o: Operation): Promise<string | undefined> {
    if (isByHand(o)) return this.byHand(o);
    switch (o.op) {
      case 'namespace-create':
      case 'namespace-delete':
      case 'namespace-relabel':
        return this.namespace(o);
      case 'source-rotate':
      case 'source-recreate':
        await this.putSource(o.source);
        return undefined;
      case 'source-delete':
        await this.deleteObject('Secret', SOURCE_NAMESPACE, o.name).catch(() => this.deleteObject('ConfigMap', SOURCE_NAMESPACE, o.name));
        return undefined;
      case 'objectsync-create':
      case 'objectsync-destinations':
      case 'objectsync-delete':
        await this.objectSync(o);
        return undefined;
      case 'pod-create':
        return undefined;
      default:
        await this.distribution(o);
        return undefined;
    }
  }

  private async namespace(o: Extract<Operation, { op: 'namespace-create' | 'namespace-delete' | 'namespace-relabel' }>): Promise<string | undefined> {
    if (o.op === 'namespace-delete') await this.core.deleteNamespace({ name: o.name });
    if (o.op === 'namespace-relabel') await this.relabel(o.name, o.labels);
    if (o.op !== 'namespace-create') return undefined;
    const uid = (await this.core.createNamespace({ body: { metadata: { name: o.name, labels: o.labels } } })).metadata?.uid;
    if (o.authorMayWrite) await this.grantAuthor(o.name);
    return uid;
  }

  private async objectSync(o: Extract<Operation, { op: 'objectsync-create' | 'objectsync-destinations' | 'objectsync-delete' }>): Promise<void> {
    const at = { ...OBJECT_SYNC, namespace: SOURCE_NAMESPACE };
    if (o.op === 'objectsync-create') {
      await this.putSource(o.source);
      await this.custom.createNamespacedCustomObject({ ...at, body: objectSyncManifest(o.objectSync) });
    }
    if (o.op === 'objectsync-destinations') await this.custom.patchNamespacedCustomObject({ ...at, name: o.name, body: { spec: { destinations: o.destinations } } }, MERGE_PATCH);
    if (o.op === 'objectsync-delete') await this.custom.deleteNamespacedCustomObject({ ...at, name: o.name });
  }

  /** AUTHOR may write Secrets and ConfigMaps in this namespace: a RoleBinding to the writer role. */
  private async grantAuthor(namespace: string): Promise<void> {
    await this.rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: AUTHOR },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: AUTHOR_WRITER_ROLE },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: AUTHOR }],
      },
    });
  }

  private async distribution(o: Operation): Promise<void> {
    const custom = 'asAuthor' in o && o.asAuthor === true ? this.authorCustom : this.custom;
    switch (o.op) {
      case 'distribution-create':
        if (o.source) await this.putSource(o.source);
        await custom.createClusterCustomObject({ ...RD, body: distributionManifest(o.distribution) });
        return;
      case 'distribution-template':
        return this.patchSpec(custom, o.name, [{ op: 'add', path: '/spec/resource', value: o.template }]);
      case 'distribution-targets':
      case 'distribution-narrow':
        return this.patchSpec(custom, o.name, [{ op: 'add', path: '/spec/targets', value: o.targets }]);
      case 'distribution-write-policy':
        await custom.patchClusterCustomObject({ ...RD, name: o.name, body: { spec: { writePolicy: o.writePolicy ?? null } } }, MERGE_PATCH);
        return;
      case 'distribution-delete':
        await custom.deleteClusterCustomObject({ ...RD, name: o.name, propagationPolicy: o.orphan ? 'Orphan' : 'Background' });
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

  private async patchSpec(custom: CustomObjectsApi, name: string, patch: object[]): Promise<void> {
    await custom.patchClusterCustomObject({ ...RD, name, body: patch }, JSON_PATCH);
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

  private async read(kind: string, namespace: string, name: string): Promise<{ metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> } }> {
    return kind === 'Secret' ? this.core.readNamespacedSecret({ name, namespace }) : this.core.readNamespacedConfigMap({ name, namespace });
  }

  /**
   * Only copies are edited or deleted by hand: objects that are not ours are not watched, so the
   * removal of one is seen at the next pass (README: Limitations), not within a quiet period.
   */
  private async mustBeCopy(kind: string, namespace: string, name: string): Promise<void> {
    const found = await this.read(kind, namespace, name);
    if (found.metadata?.annotations?.[ANNOTATION_FROM] === undefined) throw new NothingToDo(`${namespace}/${name} is not a copy`);
  }

  /** Only an object someone else made (the soak's own foreign objects) is edited as theirs. */
  private async mustBeForeign(kind: string, namespace: string, name: string): Promise<void> {
    const found = await this.read(kind, namespace, name);
    if (found.metadata?.annotations?.[ANNOTATION_FROM] !== undefined || found.metadata?.labels?.['soak.example/foreign'] !== 'yes') throw new NothingToDo(`${namespace}/${name} is not a foreign object`);
  }

  /** Someone else's object of the copy's name: the copy (if any) removed first, as a user replacing it would. */
  private async replaceWithForeign(o: ByHand<'foreign-create' | 'foreign-adopt'>): Promise<string | undefined> {
    await this.deleteObject(o.kind, o.namespace, o.name).catch((error: unknown) => {
      if (statusOf(error) !== 404) throw error;
    });
    // Adoption by consent, with the label that makes it taken over at once (README).
    const adopt = o.op === 'foreign-adopt';
    const labels: Record<string, string> = adopt ? { 'soak.example/adopt': 'yes', [LABEL_DISTRIBUTION]: o.distribution } : { 'soak.example/foreign': 'yes' };
    const body = objectManifest(o.kind, o.namespace, o.name, o.data, labels, adopt ? { [ANNOTATION_ADOPT]: o.distribution } : {}, o.type) as never;
    const made = o.kind === 'Secret' ? await this.core.createNamespacedSecret({ namespace: o.namespace, body }) : await this.core.createNamespacedConfigMap({ namespace: o.namespace, body });
    return made.metadata?.uid;
  }

  private async byHand(o: ByHand<ByHandKind>): Promise<string | undefined> {
    try {
      if (o.op === 'copy-edit' || o.op === 'copy-delete') await this.mustBeCopy(o.kind, o.namespace, o.name);
      if (o.op === 'foreign-edit') await this.mustBeForeign(o.kind, o.namespace, o.name);
      if (o.op === 'copy-edit' || o.op === 'foreign-edit') await this.patchObject(o.kind, o.namespace, o.name, [{ op: 'add', path: '/data', value: o.data }]);
      if (o.op === 'copy-delete') await this.deleteObject(o.kind, o.namespace, o.name);
      if (o.op === 'foreign-create' || o.op === 'foreign-adopt') return await this.replaceWithForeign({ ...o, op: o.op });
      return undefined;
    } catch (error) {
      const code = statusOf(error);
      if (code === 404 || code === 409) throw new NothingToDo(describe(error));
      throw error;
    }
  }
}
