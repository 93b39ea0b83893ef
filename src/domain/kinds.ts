// The kinds a distribution may copy: RD_ALLOWED_KINDS, resolved against the API server's discovery
// into what paths, watches and RBAC checks need. Pure data; discovery itself is in k8s/discovery.ts.

/** A namespaced kind the cluster serves and the configuration allows. */
export interface ApiKind {
  /** '' for the core group. */
  group: string;
  kind: string;
  /** The resource name: `secrets`, `networkpolicies`. */
  plural: string;
  /** The version lists and watches use (the group's preferred one). */
  version: string;
  /** Every version the group serves: a template may be written in any of them. */
  versions: readonly string[];
  /**
   * The top-level fields of the kind per version, from the API server's OpenAPI; a version
   * missing here (not published, or a schema that keeps unknown fields) is not checked.
   */
  fields?: Readonly<Record<string, readonly string[]>>;
}

/** How a kind is named in RD_ALLOWED_KINDS, in CopyRefs and in watches: `Secret`, `NetworkPolicy.networking.k8s.io`. */
export type KindKey = string;

/** A requested kind, before discovery: `Kind` (core group) or `Kind.group`. */
export interface KindName {
  kind: string;
  group: string;
}

export const CORE_KINDS: readonly ApiKind[] = [
  { group: '', kind: 'Secret', plural: 'secrets', version: 'v1', versions: ['v1'] },
  { group: '', kind: 'ConfigMap', plural: 'configmaps', version: 'v1', versions: ['v1'] },
];

export function groupOf(apiVersion: string | undefined): string {
  const slash = apiVersion?.indexOf('/') ?? -1;
  return slash < 0 ? '' : (apiVersion ?? '').slice(0, slash);
}

export function versionOf(apiVersion: string | undefined): string {
  return apiVersion?.slice(apiVersion.indexOf('/') + 1) ?? '';
}

export function kindKey(name: KindName): KindKey {
  return name.group === '' ? name.kind : `${name.kind}.${name.group}`;
}

/** The key of an object's kind, from its apiVersion and kind. */
export function kindKeyOf(apiVersion: string | undefined, kind: string): KindKey {
  return kindKey({ group: groupOf(apiVersion), kind });
}

export function apiVersionFor(kind: ApiKind, version: string = kind.version): string {
  return kind.group === '' ? version : `${kind.group}/${version}`;
}

const KIND_NAME = /^[A-Z][A-Za-z0-9]*$/;

/**
 * `Secret,ConfigMap,NetworkPolicy.networking.k8s.io,CronJob.batch`: the kind as it is spelled in
 * manifests, then its API group (none for the core group). Throws on anything else.
 */
export function parseKindNames(value: string): KindName[] {
  const names = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  if (names.length === 0) throw new Error('names no kind: list at least one, e.g. "Secret,ConfigMap"');
  return names.map((item) => {
    const dot = item.indexOf('.');
    const kind = dot < 0 ? item : item.slice(0, dot);
    const group = dot < 0 ? '' : item.slice(dot + 1);
    if (!KIND_NAME.test(kind) || (dot >= 0 && group === '')) {
      throw new Error(`"${item}" is not a kind: write it as in manifests (ConfigMap), followed by its API group if it has one (CronJob.batch)`);
    }
    return { kind, group };
  });
}

/** The allowed kinds, found by an object's apiVersion and kind or by their key. */
export interface KindRegistry {
  readonly all: readonly ApiKind[];
  /** The kind of an object or template whose apiVersion names a served version; undefined otherwise. */
  find(apiVersion: string | undefined, kind: string | undefined): ApiKind | undefined;
  byKey(key: KindKey): ApiKind | undefined;
  /** The allowed kinds of that name, in any group (to tell a wrong apiVersion from a wrong kind). */
  named(kind: string): ApiKind[];
  /** `Secret or ConfigMap`: for messages. */
  describe(): string;
}

export function createKindRegistry(kinds: readonly ApiKind[]): KindRegistry {
  const byKey = new Map(kinds.map((kind) => [kindKey(kind), kind]));
  return {
    all: kinds,
    find: (apiVersion, kind) => {
      if (apiVersion === undefined || kind === undefined) return undefined;
      const found = byKey.get(kindKeyOf(apiVersion, kind));
      return found?.versions.includes(versionOf(apiVersion)) ? found : undefined;
    },
    byKey: (key) => byKey.get(key),
    named: (name) => kinds.filter((kind) => kind.kind === name),
    describe: () => {
      const keys = kinds.map((kind) => kindKey(kind));
      return keys.length < 2 ? (keys[0] ?? 'nothing') : `${keys.slice(0, -1).join(', ')} or ${keys.at(-1)}`;
    },
  };
}

/** Secret and ConfigMap: what every distribution could copy before kinds were configurable. */
export const CORE_REGISTRY: KindRegistry = createKindRegistry(CORE_KINDS);

/** The two kinds whose content we know field by field (data maps, types); every other kind is compared by the fields it sets. */
export function isCoreDataKind(apiVersion: string | undefined, kind: string | undefined): boolean {
  return groupOf(apiVersion) === '' && (kind === 'Secret' || kind === 'ConfigMap');
}

/** What discovery says of one API group (resources of its preferred version, subresources left out). */
export interface DiscoveredGroup {
  group: string;
  preferredVersion: string;
  versions: readonly string[];
  resources: readonly { name: string; kind: string; namespaced: boolean }[];
}

export interface KindResolution {
  kinds: ApiKind[];
  /** Kinds that cannot be allowed whatever the cluster (cluster-scoped): a configuration error. */
  invalid: string[];
  /** Kinds the cluster does not serve (yet): left out. */
  unknown: string[];
}

export function resolveKinds(wanted: readonly KindName[], discovered: readonly DiscoveredGroup[]): KindResolution {
  const result: KindResolution = { kinds: [], invalid: [], unknown: [] };
  const seen = new Set<KindKey>();
  for (const name of wanted) {
    const key = kindKey(name);
    if (seen.has(key)) continue;
    seen.add(key);
    const group = discovered.find((candidate) => candidate.group === name.group);
    const resource = group?.resources.find((candidate) => candidate.kind === name.kind && !candidate.name.includes('/'));
    if (group === undefined || resource === undefined) result.unknown.push(key);
    else if (!resource.namespaced) result.invalid.push(`${key} is cluster-scoped: only namespaced kinds can be distributed`);
    else result.kinds.push({ group: name.group, kind: name.kind, plural: resource.name, version: group.preferredVersion, versions: group.versions });
  }
  return result;
}
