// The cluster's RBAC objects (Roles, ClusterRoles and their bindings), listed and watched so that
// admission can tell at once that RBAC grants an author what a distribution needs (see
// domain/rbac.ts). Only their rules, role references and subjects are kept.
import { LRUCache } from 'lru-cache';
import { grantsAllow, grantsOf, indexRbac, type Grants, type RbacBinding, type RbacIndex, type RbacRole } from '../domain/rbac.js';
import type { Logger } from '../log.js';
import type { AccessCheck } from './access-review.js';
import type { ListResult } from './cluster-api.js';
import { startWatch } from './client-watch.js';
import type { KubeClient } from './kube-client.js';
import { Reflector } from './reflector.js';
import { Store, type Stored } from './store.js';

const RBAC_PATH = '/apis/rbac.authorization.k8s.io/v1';
const PAGE = 500;

export interface RbacCache {
  /** True only when RBAC, as last seen, grants it; false while the caches are not synced yet. */
  allows(check: AccessCheck): boolean;
  start(): void;
  stop(): void;
  readonly synced: boolean;
}

type RbacObject = Stored & Partial<RbacRole> & Partial<RbacBinding>;

/** What is kept: a ClusterRole's annotations (kubectl's last-applied copy of it) are not. */
function trimmed(object: RbacObject): RbacObject {
  const { name, namespace, uid, resourceVersion } = object.metadata;
  return { metadata: { name, namespace, uid, resourceVersion }, rules: object.rules ?? [], ...(object.roleRef ? { roleRef: object.roleRef, subjects: object.subjects ?? [] } : {}) };
}

async function listAll(client: KubeClient, path: string): Promise<ListResult<RbacObject>> {
  const items: RbacObject[] = [];
  let token: string | undefined;
  let resourceVersion = '';
  do {
    const page = await client.request<{ items: RbacObject[]; metadata?: { resourceVersion?: string; continue?: string } }>('GET', path, { query: { limit: PAGE, continue: token } });
    items.push(...page.items);
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
    token = page.metadata?.continue || undefined;
  } while (token);
  return { items, resourceVersion };
}

const RESOURCES = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'] as const;
type RbacResource = (typeof RESOURCES)[number];

export function createRbacCache(client: KubeClient, options: { log: Logger; watchTimeoutSeconds?: number }): RbacCache {
  const stores = Object.fromEntries(RESOURCES.map((resource) => [resource, new Store<RbacObject>()])) as Record<RbacResource, Store<RbacObject>>;
  let index: RbacIndex | undefined;
  // Per user (name and groups): what RBAC grants it, until the next change of any RBAC object.
  const grants = new LRUCache<string, Grants>({ max: 1000 });
  const changed = (): void => {
    index = undefined;
    grants.clear();
  };
  const reflectors = RESOURCES.map(
    (resource) =>
      new Reflector<RbacObject>({
        resource,
        store: stores[resource],
        transform: trimmed,
        list: () => listAll(client, `${RBAC_PATH}/${resource}`),
        watch: (watchOptions, callbacks) => startWatch(client, `${RBAC_PATH}/${resource}`, watchOptions, callbacks),
        onChange: changed,
        log: options.log,
        ...(options.watchTimeoutSeconds === undefined ? {} : { watchTimeoutSeconds: options.watchTimeoutSeconds }),
      }),
  );
  const synced = (): boolean => reflectors.every((reflector) => reflector.synced);

  function grantsFor(check: AccessCheck): Grants {
    index ??= indexRbac({
      roles: stores.roles.list(),
      clusterRoles: stores.clusterroles.list(),
      roleBindings: stores.rolebindings.list() as RbacBinding[],
      clusterRoleBindings: stores.clusterrolebindings.list() as RbacBinding[],
    });
    const key = JSON.stringify([check.subject.username, [...check.subject.groups].sort()]);
    let found = grants.get(key);
    if (found === undefined) {
      found = grantsOf(index, check.subject);
      grants.set(key, found);
    }
    return found;
  }

  return {
    allows: (check) => synced() && grantsAllow(grantsFor(check), check),
    start: () => reflectors.forEach((reflector) => reflector.start()),
    stop: () => reflectors.forEach((reflector) => reflector.stop()),
    get synced() {
      return synced();
    },
  };
}
