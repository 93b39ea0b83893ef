// API discovery, once at start: which of the requested kinds the cluster serves, their resource
// names and versions. Only the groups asked for are read (the core group, then one request per group).
import { resolveKinds, type DiscoveredGroup, type KindName, type KindResolution } from '../domain/kinds.js';
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
