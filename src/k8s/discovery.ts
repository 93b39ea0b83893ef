// API discovery, once at start: which of the requested kinds the cluster serves, their resource
// names and versions. Only the groups asked for are read (the core group, then one request per group);
// then the OpenAPI documents of their group versions, for the fields a template may have.
import { openApiPath, topLevelFields } from '../domain/kind-fields.js';
import { apiVersionFor, isCoreDataKind, resolveKinds, type ApiKind, type DiscoveredGroup, type KindName, type KindResolution } from '../domain/kinds.js';
import { STORAGE_VERSION, V1ALPHA1 } from '../domain/conversion.js';
import { OBJECT_SYNC_API_VERSION, OBJECT_SYNC_PLURAL } from '../domain/object-sync.js';
import { GROUP } from '../domain/types.js';
import { isNotFound } from './errors.js';
import type { KubeClient } from './kube-client.js';

interface ResourceList {
  resources?: { name: string; kind: string; namespaced: boolean }[];
}

interface GroupList {
  groups?: { name: string; versions?: { version: string }[]; preferredVersion?: { version: string } }[];
}

export async function discoverKinds(client: KubeClient, wanted: readonly KindName[]): Promise<KindResolution> {
  const groups = new Set(wanted.map((name) => name.group));
  const discovered: DiscoveredGroup[] = [];
  if (groups.has('')) {
    const core = await client.request<ResourceList>('GET', '/api/v1');
    discovered.push({ group: '', preferredVersion: 'v1', versions: ['v1'], resources: core.resources ?? [] });
  }
  const named = [...groups].filter((group) => group !== '');
  if (named.length > 0) {
    const list = await client.request<GroupList>('GET', '/apis');
    for (const group of list.groups ?? []) {
      const preferred = group.preferredVersion?.version;
      if (!groups.has(group.name) || preferred === undefined) continue;
      const resources = await client.request<ResourceList>('GET', `/apis/${group.name}/${preferred}`);
      const versions = (group.versions ?? []).map((version) => version.version);
      discovered.push({ group: group.name, preferredVersion: preferred, versions, resources: resources.resources ?? [] });
    }
  }
  return resolveKinds(wanted, discovered);
}

/** Whether the cluster serves the ObjectSync API (its CRD is installed). */
export async function servesObjectSyncs(client: KubeClient): Promise<boolean> {
  try {
    const list = await client.request<ResourceList>('GET', `/apis/${OBJECT_SYNC_API_VERSION}`);
    return (list.resources ?? []).some((resource) => resource.name === OBJECT_SYNC_PLURAL);
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/**
 * The version the controller reads and writes distributions in: the storage version when the CRD
 * serves it, else v1alpha1 (OpenKruise's older CRD, left in place with crds.install=false).
 */
export async function servedDistributionVersion(client: KubeClient): Promise<string> {
  try {
    const group = await client.request<{ versions?: { version: string }[] }>('GET', `/apis/${GROUP}`);
    const versions = (group.versions ?? []).map((entry) => entry.version);
    return versions.includes(STORAGE_VERSION) || !versions.includes(V1ALPHA1) ? STORAGE_VERSION : V1ALPHA1;
  } catch (error) {
    if (isNotFound(error)) return STORAGE_VERSION;
    throw error;
  }
}

/** A group version whose OpenAPI document could not be read: its kinds' template fields are not checked. */
export interface UnpublishedFields {
  path: string;
  reason: string;
}

/**
 * The kinds with their top-level fields per served version (Secret and ConfigMap excepted: their
 * rules are ours), from the API server's OpenAPI v3 documents, one request per group version.
 * A document the cluster does not serve or cannot give leaves those kinds unchecked: `unpublished` says which.
 */
export async function withTemplateFields(client: KubeClient, kinds: readonly ApiKind[]): Promise<{ kinds: ApiKind[]; unpublished: UnpublishedFields[] }> {
  const documents = new Map<string, Promise<unknown>>();
  const unpublished: UnpublishedFields[] = [];
  const documentAt = (path: string): Promise<unknown> => {
    let document = documents.get(path);
    if (document === undefined) {
      document = client.request<unknown>('GET', path).catch((error: unknown) => {
        unpublished.push({ path, reason: isNotFound(error) ? 'not served' : (error as Error).message });
        return undefined;
      });
      documents.set(path, document);
    }
    return document;
  };
  const resolved = await Promise.all(
    kinds.map(async (kind) => {
      if (isCoreDataKind(apiVersionFor(kind), kind.kind)) return kind;
      const fields: Record<string, readonly string[]> = {};
      for (const version of kind.versions) {
        const known = topLevelFields(await documentAt(openApiPath(kind.group, version)), kind.group, version, kind.kind);
        if (known !== undefined) fields[version] = known;
      }
      return { ...kind, fields };
    }),
  );
  return { kinds: resolved, unpublished };
}
