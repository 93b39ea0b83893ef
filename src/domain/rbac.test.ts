import { describe, expect, it } from 'vitest';
import { grantsAllow, grantsOf, indexRbac, ruleAllows, type RbacBinding, type RbacObjects, type RbacQuestion, type RbacRule, type RbacUser } from './rbac.js';

const configMapWriter: RbacRule = { verbs: ['create', 'update'], apiGroups: [''], resources: ['configmaps'] };
const edit: RbacRule[] = [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps', 'secrets'] }];

function binding(kind: 'RoleBinding' | 'ClusterRoleBinding', roleRef: RbacBinding['roleRef'], subjects: RbacBinding['subjects'], namespace?: string): RbacBinding {
  return { metadata: { name: `${kind}-${roleRef.name}`, ...(kind === 'RoleBinding' ? { namespace } : {}) }, roleRef, subjects };
}

const objects: RbacObjects = {
  clusterRoles: [
    { metadata: { name: 'edit' }, rules: edit },
    { metadata: { name: 'empty' }, rules: [] },
    { metadata: { name: 'reader' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['registry'] }] },
  ],
  roles: [{ metadata: { name: 'writer', namespace: 'team-b' }, rules: [configMapWriter] }],
  roleBindings: [
    binding('RoleBinding', { kind: 'ClusterRole', name: 'edit' }, [{ kind: 'User', name: 'alice' }], 'team-a'),
    binding('RoleBinding', { kind: 'Role', name: 'writer' }, [{ kind: 'Group', name: 'team-b-devs' }], 'team-b'),
    // A Role of another namespace cannot be referenced: it is looked up in the binding's.
    binding('RoleBinding', { kind: 'Role', name: 'writer' }, [{ kind: 'User', name: 'alice' }], 'team-c'),
    binding('RoleBinding', { kind: 'ClusterRole', name: 'edit' }, [{ kind: 'ServiceAccount', name: 'deployer' }], 'team-d'),
    binding('RoleBinding', { kind: 'ClusterRole', name: 'missing' }, [{ kind: 'User', name: 'alice' }], 'team-e'),
  ],
  clusterRoleBindings: [
    binding('ClusterRoleBinding', { kind: 'ClusterRole', name: 'reader' }, [{ kind: 'User', name: 'bob' }]),
    binding('ClusterRoleBinding', { kind: 'ClusterRole', name: 'edit' }, [{ kind: 'Group', name: 'platform' }]),
    binding('ClusterRoleBinding', { kind: 'ClusterRole', name: 'empty' }, [{ kind: 'User', name: 'carol' }]),
  ],
};

const index = indexRbac(objects);
const write = (namespace: string, verb = 'create'): RbacQuestion => ({ verb, group: '', resource: 'configmaps', namespace });
const user = (username: string, ...groups: string[]): RbacUser => ({ username, groups });

describe('RBAC evaluated as the authorizer does', () => {
  it.each([
    ['a ClusterRole bound in a namespace grants there', user('alice'), write('team-a'), true],
    ['... and nowhere else', user('alice'), write('team-x'), false],
    ['... nor every namespace at once', user('alice'), write(''), false],
    ['a Role through a group', user('dave', 'team-b-devs'), write('team-b', 'update'), true],
    ['a Role grants only its verbs', user('dave', 'team-b-devs'), write('team-b', 'delete'), false],
    ["a RoleBinding to a Role of another namespace's name grants nothing", user('alice'), write('team-c'), false],
    ['a ServiceAccount subject without a namespace is of the binding\'s', user('system:serviceaccount:team-d:deployer'), write('team-d'), true],
    ['a binding to a role that does not exist grants nothing', user('alice'), write('team-e'), false],
    ['a ClusterRoleBinding grants everywhere, and every namespace at once', user('erin', 'platform'), write(''), true],
    ['resourceNames limit a rule to those names', user('bob'), { verb: 'get', group: '', resource: 'secrets', namespace: 'x', name: 'registry' }, true],
    ['... and never grant without a name', user('bob'), { verb: 'get', group: '', resource: 'secrets', namespace: 'x' }, false],
    ['... nor another name', user('bob'), { verb: 'get', group: '', resource: 'secrets', namespace: 'x', name: 'other' }, false],
    ['an empty role grants nothing', user('carol'), write('team-a'), false],
    ['a user nobody bound', user('mallory', 'system:authenticated'), write('team-a'), false],
  ])('%s', (_what, who, question, expected) => {
    expect(grantsAllow(grantsOf(index, who), question)).toBe(expected);
  });

  it.each([
    ['* verbs', { verbs: ['*'], apiGroups: [''], resources: ['secrets'] }, true],
    ['* groups', { verbs: ['create'], apiGroups: ['*'], resources: ['secrets'] }, true],
    ['* resources', { verbs: ['create'], apiGroups: [''], resources: ['*'] }, true],
    ['another group', { verbs: ['create'], apiGroups: ['apps'], resources: ['secrets'] }, false],
    ['no groups at all (a non-resource rule)', { verbs: ['create'], resources: ['secrets'] }, false],
    ['a subresource only', { verbs: ['create'], apiGroups: [''], resources: ['secrets/status'] }, false],
  ])('a rule with %s', (_what, rule: RbacRule, expected) => {
    expect(ruleAllows(rule, { verb: 'create', group: '', resource: 'secrets', namespace: 'x' })).toBe(expected);
  });
});
