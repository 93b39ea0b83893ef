// What the cluster's RBAC objects grant a user, evaluated here as the API server's RBAC authorizer
// does, so that an author allowed by RoleBindings in thousands of namespaces is recognised without
// a SubjectAccessReview per namespace and verb. Only ever used to allow: what RBAC does not grant
// is still asked of the API server (another authorizer may grant it).

export interface RbacRule {
  verbs: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
}

export interface RbacRole {
  metadata: { name?: string; namespace?: string };
  rules?: readonly RbacRule[] | null;
}

export interface RbacSubject {
  kind: string;
  name: string;
  namespace?: string;
}

export interface RbacBinding {
  metadata: { name?: string; namespace?: string };
  roleRef: { kind: string; name: string };
  subjects?: readonly RbacSubject[] | null;
}

export interface RbacObjects {
  roles: readonly RbacRole[];
  clusterRoles: readonly RbacRole[];
  roleBindings: readonly RbacBinding[];
  clusterRoleBindings: readonly RbacBinding[];
}

/** The question, as an access check asks it; an empty namespace means every namespace. */
export interface RbacQuestion {
  verb: string;
  group: string;
  resource: string;
  namespace: string;
  name?: string;
}

/** Who asks: a user name and the groups the authenticator gave it. */
export interface RbacUser {
  username: string;
  groups: readonly string[];
}

/** The rules granted to one user: everywhere, and per namespace. */
export interface Grants {
  cluster: readonly RbacRule[];
  byNamespace: ReadonlyMap<string, readonly RbacRule[]>;
}

interface IndexedBinding {
  /** Undefined for a ClusterRoleBinding. */
  namespace: string | undefined;
  rules: readonly RbacRule[];
}

export interface RbacIndex {
  /** Bindings by subject key (`user:<name>` or `group:<name>`). */
  bySubject: ReadonlyMap<string, readonly IndexedBinding[]>;
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** A subject as the user name or group it stands for; undefined for a kind RBAC does not know. */
function subjectKey(subject: RbacSubject, bindingNamespace: string | undefined): string | undefined {
  if (subject.kind === 'User') return `user:${subject.name}`;
  if (subject.kind === 'Group') return `group:${subject.name}`;
  if (subject.kind !== 'ServiceAccount') return undefined;
  // As the authorizer does: a ServiceAccount subject without a namespace means the binding's.
  const namespace = subject.namespace || bindingNamespace;
  return namespace === undefined ? undefined : `user:${SERVICE_ACCOUNT_PREFIX}${namespace}:${subject.name}`;
}

function rulesByName(roles: readonly RbacRole[], keyOf: (role: RbacRole) => string): Map<string, readonly RbacRule[]> {
  return new Map(roles.map((role) => [keyOf(role), role.rules ?? []]));
}

/** The bindings of every subject, each with the rules of the role it references (none when that role does not exist). */
export function indexRbac(objects: RbacObjects): RbacIndex {
  const clusterRoles = rulesByName(objects.clusterRoles, (role) => role.metadata.name ?? '');
  const roles = rulesByName(objects.roles, (role) => `${role.metadata.namespace ?? ''}/${role.metadata.name ?? ''}`);
  const bySubject = new Map<string, IndexedBinding[]>();
  const add = (binding: RbacBinding, namespace: string | undefined): void => {
    const { kind, name } = binding.roleRef;
    // A ClusterRoleBinding can only reference a ClusterRole; a RoleBinding either kind.
    const rules = kind === 'ClusterRole' ? clusterRoles.get(name) : namespace === undefined ? undefined : roles.get(`${namespace}/${name}`);
    if (rules === undefined || rules.length === 0) return;
    for (const subject of binding.subjects ?? []) {
      const key = subjectKey(subject, namespace);
      if (key === undefined) continue;
      const list = bySubject.get(key) ?? [];
      list.push({ namespace, rules });
      bySubject.set(key, list);
    }
  };
  for (const binding of objects.clusterRoleBindings) add(binding, undefined);
  for (const binding of objects.roleBindings) if (binding.metadata.namespace) add(binding, binding.metadata.namespace);
  return { bySubject };
}

/** Every rule the user holds, through its name and each of its groups. */
export function grantsOf(index: RbacIndex, user: RbacUser): Grants {
  const cluster: RbacRule[] = [];
  const byNamespace = new Map<string, RbacRule[]>();
  for (const key of [`user:${user.username}`, ...user.groups.map((group) => `group:${group}`)]) {
    for (const binding of index.bySubject.get(key) ?? []) {
      if (binding.namespace === undefined) cluster.push(...binding.rules);
      else byNamespace.set(binding.namespace, [...(byNamespace.get(binding.namespace) ?? []), ...binding.rules]);
    }
  }
  return { cluster, byNamespace };
}

const matches = (values: readonly string[] | undefined, value: string): boolean => values !== undefined && (values.includes('*') || values.includes(value));

/** As RBAC matches a resource request: verb, group, resource, and the names a rule is limited to. */
export function ruleAllows(rule: RbacRule, question: RbacQuestion): boolean {
  if (!matches(rule.verbs, question.verb) || !matches(rule.apiGroups, question.group) || !matches(rule.resources, question.resource)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (question.name !== undefined && names.includes(question.name));
}

/** Does RBAC grant it? A question for every namespace is granted only by cluster-wide rules. */
export function grantsAllow(grants: Grants, question: RbacQuestion): boolean {
  if (grants.cluster.some((rule) => ruleAllows(rule, question))) return true;
  if (question.namespace === '') return false;
  return (grants.byNamespace.get(question.namespace) ?? []).some((rule) => ruleAllows(rule, question));
}
