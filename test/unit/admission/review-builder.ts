// Fluent builders for AdmissionReview requests and a ready-made app around in-memory doubles.
//   review().distribution(rd).operation('UPDATE').oldObject(old).user('alice', ['dev']).body()
//   review().namespace('team-a', { env: 'prod' }).dryRun().body()
import { Writable } from 'node:stream';
import type { Hono } from 'hono';
import { createAdmissionApp, type AdmissionAppDeps } from '../../../src/admission/app.js';
import type { AdmittedNamespace } from '../../../src/admission/namespace-webhook.js';
import type { Operation } from '../../../src/admission/review.js';
import { convertDistribution } from '../../../src/domain/conversion.js';
import { compileSpecValidator } from '../../../src/domain/schema.js';
import type { ResourceDistribution } from '../../../src/domain/types.js';
import type { AccessAnswer, AccessCheck, AccessReviewer } from '../../../src/k8s/access-review.js';
import { loadCrdSchema } from '../../../src/k8s/crd-schema.js';
import { WEBHOOK_PATHS } from '../../../src/k8s/webhook-config.js';
import { createLogger } from '../../../src/log.js';
import { createMetrics } from '../../../src/metrics.js';

let counter = 0;

export class ReviewBuilder {
  private readonly request: Record<string, unknown> = {
    uid: `uid-${++counter}`,
    kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ResourceDistribution' },
    resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'resourcedistributions' },
    operation: 'CREATE',
    userInfo: { username: 'admin', groups: ['system:authenticated'] },
    dryRun: false,
  };

  distribution(rd: ResourceDistribution | Record<string, unknown>): this {
    this.request.kind = { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ResourceDistribution' };
    this.request.resource = { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'resourcedistributions' };
    this.request.name = (rd as { metadata?: { name?: string } }).metadata?.name;
    this.request.object = structuredClone(rd);
    return this;
  }

  namespace(name: string, labels: Record<string, string> = {}, uid = `ns-uid-${name}`): this {
    this.request.kind = { group: '', version: 'v1', kind: 'Namespace' };
    this.request.resource = { group: '', version: 'v1', resource: 'namespaces' };
    this.request.name = name;
    this.request.object = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, uid, labels: { 'kubernetes.io/metadata.name': name, ...labels } } };
    return this;
  }

  pod(namespace: string, spec: Record<string, unknown>, name = 'app'): this {
    this.request.kind = { group: '', version: 'v1', kind: 'Pod' };
    this.request.resource = { group: '', version: 'v1', resource: 'pods' };
    this.request.name = name;
    this.request.namespace = namespace;
    this.request.object = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace }, spec };
    return this;
  }

  /** The request as an author of `version` sends it: that version's kind, and the objects converted to it. */
  inVersion(version: string): this {
    const toVersion = (object: unknown): unknown => {
      const converted = convertDistribution(object as Record<string, unknown>, `apps.kruise.io/${version}`);
      if (!converted.ok) throw new Error(converted.message);
      return converted.object;
    };
    this.request.kind = { group: 'apps.kruise.io', version, kind: 'ResourceDistribution' };
    this.request.resource = { group: 'apps.kruise.io', version, resource: 'resourcedistributions' };
    this.request.object = toVersion(this.request.object);
    if (this.request.oldObject !== undefined) this.request.oldObject = toVersion(this.request.oldObject);
    return this;
  }

  uid(uid: string): this {
    this.request.uid = uid;
    return this;
  }

  operation(operation: Operation): this {
    this.request.operation = operation;
    if (operation === 'DELETE') {
      this.request.oldObject = this.request.object;
      this.request.object = null;
    }
    return this;
  }

  oldObject(object: unknown): this {
    this.request.oldObject = structuredClone(object);
    return this;
  }

  oldNamespaceLabels(labels: Record<string, string>): this {
    const object = structuredClone(this.request.object) as { metadata: { name: string; labels?: Record<string, string> } };
    object.metadata.labels = { 'kubernetes.io/metadata.name': object.metadata.name, ...labels };
    this.request.oldObject = object;
    return this;
  }

  user(username: string, groups: string[] = ['system:authenticated']): this {
    this.request.userInfo = { username, groups };
    return this;
  }

  dryRun(dryRun = true): this {
    this.request.dryRun = dryRun;
    return this;
  }

  get requestUid(): string {
    return this.request.uid as string;
  }

  body(): Record<string, unknown> {
    return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: structuredClone(this.request) };
  }
}

export function review(): ReviewBuilder {
  return new ReviewBuilder();
}

/**
 * An in-memory authorizer: `grant('alice', 'create', 'secrets', 'team-a')`; namespace '' grants
 * everywhere, as a ClusterRoleBinding would.
 */
export class FakeAccessReviewer implements AccessReviewer {
  readonly checks: AccessCheck[] = [];
  private readonly grants = new Set<string>();
  failWith: Error | undefined;

  grant(user: string, verbs: string[], resource: string, namespace = ''): this {
    for (const verb of verbs) this.grants.add(`${user}|${verb}|${resource}|${namespace}`);
    return this;
  }

  review(check: AccessCheck): Promise<AccessAnswer> {
    this.checks.push(check);
    if (this.failWith) return Promise.reject(this.failWith);
    const key = (ns: string): string => `${check.subject.username}|${check.verb}|${check.resource}|${ns}`;
    return Promise.resolve({ allowed: this.grants.has(key(check.namespace)) || this.grants.has(key('')) });
  }
}

export interface TestApp {
  app: Hono;
  reviewer: FakeAccessReviewer;
  admitted: AdmittedNamespace[];
  logs: Record<string, unknown>[];
  metrics: ReturnType<typeof createMetrics>;
}

const schema = compileSpecValidator(loadCrdSchema());

export function testApp(overrides: Partial<AdmissionAppDeps> = {}): TestApp {
  const logs: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logs.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const log = createLogger({ level: 'info', destination });
  const reviewer = new FakeAccessReviewer().grant('admin', ['create', 'update'], 'secrets').grant('admin', ['create', 'update'], 'configmaps');
  const admitted: AdmittedNamespace[] = [];
  const metrics = createMetrics();
  const app = createAdmissionApp({
    log,
    metrics,
    schema,
    accessReviewer: reviewer,
    namespaceExists: (name) => !name.startsWith('missing'),
    onNamespaceAdmitted: (ns) => admitted.push(ns),
    forbiddenNamespaces: [],
    readiness: () => ({ certificates: true, caches: true, serving: true }),
    bodyLimitBytes: 64 * 1024,
    ...overrides,
  });
  return { app, reviewer, admitted, logs, metrics };
}

export interface ReviewResponse {
  apiVersion: string;
  kind: string;
  response: {
    uid: string;
    allowed: boolean;
    status?: { code: number; message: string; reason?: string };
    warnings?: string[];
  };
}

export async function post(app: Hono, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Posts a review to a webhook and returns the decoded AdmissionReview (asserting HTTP 200). */
export async function admit(app: Hono, webhook: keyof typeof WEBHOOK_PATHS, builder: ReviewBuilder): Promise<ReviewResponse['response']> {
  const res = await post(app, WEBHOOK_PATHS[webhook], builder.body());
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  const decoded = (await res.json()) as ReviewResponse;
  if (decoded.response.uid !== builder.requestUid) throw new Error('uid not echoed');
  return decoded.response;
}
