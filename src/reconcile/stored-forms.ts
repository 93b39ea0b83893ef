// What the API server stores of a template of a kind other than Secret and ConfigMap: its
// defaults (a NetworkPolicy's policyTypes, a port's protocol) and what admission adds. Copies are
// compared with it whole, so that a field someone adds by hand is drift and is reverted.
//
// Learned by a server-side dry run of a create, once per kind and template (two, in two
// namespaces: when they differ, what is stored is not a function of the template alone — a
// Service's cluster IP, a namespace's own mutation — and copies are compared by the fields the
// template sets, as before). A copy we write that is stored otherwise all the same (a mutation of
// its namespace's own) marks its namespace, whose copies are then compared by the template's
// fields: a stored form no write can reach would be rewritten at every pass.
import { LRUCache } from 'lru-cache';
import { isCoreDataKind, kindKeyOf } from '../domain/kinds.js';
import { sameContent } from '../domain/ownership.js';
import { ANNOTATION_HASH, type NamespaceInfo, type ResolvedDistribution, type Resource, type StoredForm } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import { describeApiError } from '../k8s/errors.js';

export interface StoredForms {
  /** `rd` with what the API server stores of its template, once known; `rd` itself until then, and for Secrets and ConfigMaps. */
  attach(rd: ResolvedDistribution, hash: string, namespaces: readonly NamespaceInfo[]): Promise<ResolvedDistribution>;
  /** A copy we wrote (`sent`) as the API server stored it. */
  written: (sent: Resource, stored: Resource) => void;
}

/** `none`: copies of that template are compared by its fields (not a function of the template, or the dry run was refused). */
type Known = StoredForm | 'none';

const MAX_TEMPLATES = 1_000;
/** A refused dry run is asked again after this long: a webhook or a right may change. */
const REFUSED_TTL_MS = 5 * 60_000;

function keyOf(apiVersion: string, kind: string, hash: string): string {
  return `${kindKeyOf(apiVersion, kind)}|${hash}`;
}

/** Two live namespaces to ask in: what is stored may depend on the namespace. */
function askIn(namespaces: readonly NamespaceInfo[]): string[] {
  const live: string[] = [];
  for (const ns of namespaces) {
    if (ns.terminating) continue;
    live.push(ns.name);
    if (live.length === 2) break;
  }
  return live;
}

export function createStoredForms(deps: { api: Pick<ClusterApi, 'dryRunCopy'>; log: Logger }): StoredForms {
  const { api, log } = deps;
  const known = new LRUCache<string, Known>({ max: MAX_TEMPLATES });
  const asking = new Map<string, Promise<Known | undefined>>();
  const attached = new WeakMap<ResolvedDistribution, { form: StoredForm; rd: ResolvedDistribution }>();

  /** undefined: not known now (a transient failure), asked again at the next pass. */
  async function ask(template: Resource, namespaces: string[]): Promise<Known | undefined> {
    const dryRun = api.dryRunCopy?.bind(api);
    if (dryRun === undefined) return 'none';
    try {
      const stored = await Promise.all(namespaces.map((namespace) => dryRun({ ...template, metadata: { ...template.metadata, namespace } })));
      const [first, second] = stored;
      if (first === undefined) return undefined;
      return second === undefined || sameContent(first, second) ? { object: first, storedOtherwiseIn: new Set() } : 'none';
    } catch (error) {
      const info = describeApiError(error);
      log.warn({ kind: template.kind, name: template.metadata.name, err: info.message }, 'stored form of template unknown: copies compared by its fields');
      return info.transient ? undefined : 'none';
    }
  }

  async function formOf(rd: ResolvedDistribution, hash: string, namespaces: readonly NamespaceInfo[]): Promise<Known | undefined> {
    const template = rd.spec.resource;
    const key = keyOf(template.apiVersion, template.kind, hash);
    const cached = known.get(key);
    if (cached !== undefined) return cached;
    const where = askIn(namespaces);
    if (where.length === 0) return undefined;
    let pending = asking.get(key);
    if (pending === undefined) {
      pending = ask(template, where).finally(() => asking.delete(key));
      asking.set(key, pending);
    }
    const answer = await pending;
    if (answer !== undefined && !known.has(key)) known.set(key, answer, answer === 'none' ? { ttl: REFUSED_TTL_MS } : {});
    return known.get(key) ?? answer;
  }

  return {
    async attach(rd, hash, namespaces) {
      if (isCoreDataKind(rd.spec.resource.apiVersion, rd.spec.resource.kind)) return rd;
      const form = await formOf(rd, hash, namespaces);
      if (form === undefined || form === 'none') return rd;
      const last = attached.get(rd);
      if (last?.form === form) return last.rd;
      const withForm = { ...rd, stored: form };
      attached.set(rd, { form, rd: withForm });
      return withForm;
    },
    written: (sent, stored) => {
      const hash = sent.metadata.annotations?.[ANNOTATION_HASH];
      const namespace = stored.metadata.namespace;
      if (hash === undefined || namespace === undefined) return;
      const key = keyOf(sent.apiVersion, sent.kind, hash);
      const form = known.get(key);
      if (form === undefined || form === 'none' || form.storedOtherwiseIn.has(namespace) || sameContent(form.object, stored)) return;
      log.info({ kind: sent.kind, ns: namespace, name: sent.metadata.name }, 'copy stored otherwise than its template: compared by the template fields there');
      known.set(key, { object: form.object, storedOtherwiseIn: new Set([...form.storedOtherwiseIn, namespace]) });
    },
  };
}
