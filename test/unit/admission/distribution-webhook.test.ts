import { describe, expect, it } from 'vitest';
import { CORE_KINDS, createKindRegistry } from '../../../src/domain/kinds.js';
import { base64, distribution } from '../builders.js';
import { admit, post, review, testApp, type ReviewResponse } from './review-builder.js';
import { WEBHOOK_PATHS } from '../../../src/k8s/webhook-config.js';

describe('distribution webhook: domain rules', () => {
  it.each([
    {
      name: 'an unsupported kind',
      rd: distribution('bad-kind').configMap('settings', { a: 'b' }).field('kind', 'Pod').included('team-a').build(),
      line: 'spec.resource.kind: "Pod" is not supported: use Secret or ConfigMap (allowed by RD_ALLOWED_KINDS)',
    },
    {
      name: 'a namespace both included and excluded',
      rd: distribution('both').configMap('settings', { a: 'b' }).included('team-a').excluded('team-a').build(),
      line: 'spec.targets.includedNamespaces.list[0].name: "team-a" is both included and excluded: remove it from one of the lists',
    },
    {
      name: 'a forbidden Secret type',
      rd: distribution('token').secret('token', { token: 'x' }, 'kubernetes.io/service-account-token').included('team-a').build(),
      line: 'spec.resource.type: Secrets of type "kubernetes.io/service-account-token" are never distributed',
    },
    {
      name: 'an invalid namespace name',
      rd: distribution('bad-ns').configMap('settings', { a: 'b' }).included('Team_A').build(),
      line: 'spec.targets.includedNamespaces.list[0].name: "Team_A" is not a valid namespace name',
    },
  ])('denies $name with a line naming the field', async ({ rd, line }) => {
    const { app, reviewer } = testApp();
    const response = await admit(app, 'distributions', review().distribution(rd));
    expect(response.allowed).toBe(false);
    expect(response.status).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(response.status?.message.split('\n')).toContainEqual(expect.stringContaining(line));
    expect(reviewer.checks).toEqual([]);
  });

  it('reports every problem at once, one line each', async () => {
    const { app } = testApp();
    const rd = distribution('many').configMap('settings', { a: 'b' }).field('apiVersion', 'v2').included('x_y').writePolicy('sometimes' as 'ignore').build();
    const response = await admit(app, 'distributions', review().distribution(rd));
    const lines = response.status?.message.split('\n') ?? [];
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.every((line) => /^[\w.[\]"-]+: /.test(line))).toBe(true);
  });

  it('denies a change of the template kind on UPDATE', async () => {
    const { app } = testApp();
    const old = distribution('immutable').configMap('settings', { a: 'b' }).included('team-a').build();
    const changed = distribution('immutable').secret('settings', { a: 'b' }).included('team-a').build();
    const response = await admit(app, 'distributions', review().distribution(changed).operation('UPDATE').oldObject(old));
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toContain('spec.resource.kind: is immutable');
  });

  it('allows a source of a type never distributed, with a warning in the right words', async () => {
    const { app, reviewer } = testApp({ findSource: () => Promise.resolve({ apiVersion: 'v1', kind: 'Secret', type: 'helm.sh/release.v1' }) });
    reviewer.grant('admin', ['get'], 'secrets');
    const rd = distribution('from-release').source('platform', 'release', 'Secret').included('team-a').build();
    const response = await admit(app, 'distributions', review().distribution(rd));
    expect(response.allowed).toBe(true);
    expect(response.warnings).toContain('spec.source: source Secret platform/release exists but is of type helm.sh/release.v1, which is never distributed: nothing is copied from it');
  });

  it('allows a valid distribution and passes on the domain warnings', async () => {
    const { app } = testApp();
    const rd = distribution('warned').configMap('settings', { a: 'b' }).included('team-a', 'missing-ns', 'kube-system').build();
    const response = await admit(app, 'distributions', review().distribution(rd));
    expect(response.allowed).toBe(true);
    expect(response.status).toBeUndefined();
    expect(response.warnings).toEqual([
      'namespace "kube-system" is never a target and is ignored',
      'namespace "missing-ns" does not exist yet: copied when it appears',
    ]);
  });

  it('never blocks DELETE, even of an invalid object, and asks nobody', async () => {
    const { app, reviewer } = testApp();
    const rd = distribution('going').configMap('settings').field('kind', 'Pod').build();
    const response = await admit(app, 'distributions', review().distribution(rd).operation('DELETE').user('nobody'));
    expect(response).toEqual({ uid: expect.any(String), allowed: true });
    expect(reviewer.checks).toEqual([]);
  });

  it('does not block the update that removes the finalizers of a distribution being deleted', async () => {
    const { app } = testApp();
    const rd = distribution('old-invalid').configMap('settings').field('kind', 'Pod').build();
    rd.metadata.deletionTimestamp = '2024-05-01T10:00:00Z';
    const response = await admit(app, 'distributions', review().distribution(rd).operation('UPDATE').oldObject(rd).user('nobody'));
    expect(response.allowed).toBe(true);
  });
});

describe('distribution webhook: Secret data never leaves in a denial', () => {
  const SECRET = 's3cr3t-VALUE-never-shown';
  const secretTemplate = (fields: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, ...fields });

  it.each([
    { what: 'data that is not base64', fields: { data: { password: SECRET } } },
    { what: 'a data value that is not a string', fields: { data: { password: { nested: SECRET } } } },
    { what: 'data that is a list', fields: { data: [SECRET] } },
    { what: 'data that is a string', fields: { data: SECRET } },
    { what: 'a stringData value that is a number', fields: { stringData: { a: 1, password: [SECRET] } } },
    { what: 'binaryData in a Secret', fields: { binaryData: { password: base64(SECRET) } } },
    { what: 'an invalid key', fields: { data: { 'bad key!': base64(SECRET) } } },
    { what: 'a dockerconfigjson that is not JSON', fields: { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': base64(SECRET) } } },
    { what: 'a basic-auth Secret missing its keys', fields: { type: 'kubernetes.io/basic-auth', stringData: { other: SECRET } } },
    { what: 'an oversized Secret', fields: { stringData: { password: SECRET.repeat(60_000) } } },
  ])('denies $what without quoting the data', async ({ fields }) => {
    const { app, logs } = testApp({ bodyLimitBytes: 8 * 1024 * 1024 });
    const rd = distribution('leaky').template(secretTemplate(fields)).included('team-a').build();
    const response = await admit(app, 'distributions', review().distribution(rd));
    expect(response.allowed).toBe(false);
    const everything = JSON.stringify([response, logs]);
    for (const form of [SECRET, base64(SECRET), SECRET.slice(0, 12)]) expect(everything).not.toContain(form);
  });
});

describe('distribution webhook: the author must be allowed to write every copy', () => {
  it('denies with one line per namespace where the user may not write, code 403', async () => {
    const { app, reviewer } = testApp();
    reviewer.grant('alice', ['create', 'update'], 'secrets', 'team-a').grant('alice', ['create'], 'secrets', 'team-b');
    const rd = distribution('creds').secret('creds', { token: 't' }).included('team-a', 'team-b', 'team-c').build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('alice', ['devs']));
    expect(response.allowed).toBe(false);
    expect(response.status).toEqual({
      code: 403,
      reason: 'Forbidden',
      message: [
        'spec.targets: user "alice" may not update secrets in namespace "team-b"',
        'spec.targets: user "alice" may not create, update secrets in namespace "team-c"',
      ].join('\n'),
    });
    // First the cluster-wide question for each verb (denied), then one per namespace and verb.
    expect(reviewer.checks).toHaveLength(8);
    expect(reviewer.checks[0]).toEqual({
      subject: { username: 'alice', groups: ['devs'] },
      verb: 'create',
      group: '',
      resource: 'secrets',
      namespace: '',
    });
    expect(reviewer.checks[2]).toMatchObject({ verb: 'create', namespace: 'team-a' });
  });

  // overwrite recreates a foreign object an update cannot change (delete + create): an author who
  // may not delete there must not get that done on their behalf.
  it.each([
    { policy: 'ignore', allowed: true, message: undefined },
    { policy: 'overwrite', allowed: false, message: 'spec.targets: user "erin" may not delete secrets in namespace "team-a"' },
  ] as const)('with writePolicy $policy, an author who may not delete is allowed: $allowed', async ({ policy, allowed, message }) => {
    const { app, reviewer } = testApp();
    reviewer.grant('erin', ['create', 'update'], 'secrets', 'team-a');
    const rd = distribution('creds').secret('creds', { token: 't' }).included('team-a').writePolicy(policy).build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('erin'));
    expect(response.allowed).toBe(allowed);
    expect(response.status?.message).toBe(message);
  });

  it('skips namespaces that are never targeted', async () => {
    const { app, reviewer } = testApp({ forbiddenNamespaces: ['locked'] });
    reviewer.grant('bob', ['create', 'update'], 'configmaps', 'team-a');
    const rd = distribution('cfg').configMap('cfg', { a: 'b' }).included('team-a', 'locked', 'kube-system').build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('bob'));
    expect(response.allowed).toBe(true);
    expect(new Set(reviewer.checks.map((c) => c.namespace))).toEqual(new Set(['team-a']));
  });

  it.each([
    { targets: 'allNamespaces', build: () => distribution('all').secret('s', { k: 'v' }).allNamespaces().build() },
    { targets: 'a label selector', build: () => distribution('sel').secret('s', { k: 'v' }).matchLabels({ env: 'prod' }).build() },
  ])('checks cluster-wide for $targets', async ({ build }) => {
    const { app, reviewer } = testApp();
    reviewer.grant('carol', ['create', 'update'], 'secrets', 'team-a');
    const response = await admit(app, 'distributions', review().distribution(build()).user('carol'));
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe(
      'spec.targets: user "carol" may not create, update secrets in every namespace (required by allNamespaces or namespaceLabelSelector)',
    );
    expect(reviewer.checks.map((c) => c.namespace)).toEqual(['', '']);
  });

  it('checks the new targets on UPDATE', async () => {
    const { app, reviewer } = testApp();
    reviewer.grant('dave', ['create', 'update'], 'configmaps', 'team-a');
    const old = distribution('moving').configMap('cfg', { a: 'b' }).included('team-a').build();
    const moved = distribution('moving').configMap('cfg', { a: 'b' }).included('team-a', 'team-z').build();
    const response = await admit(app, 'distributions', review().distribution(moved).operation('UPDATE').oldObject(old).user('dave'));
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe('spec.targets: user "dave" may not create, update configmaps in namespace "team-z"');
    expect(reviewer.checks.filter((c) => c.verb === 'update').map((c) => c.namespace)).toEqual(['team-a', 'team-z']);
  });

  it.each([
    {
      change: 'narrowed to her namespace',
      old: () => distribution('shared').configMap('cfg', { a: 'b' }).included('team-a', 'team-b', 'team-c').build(),
      next: () => distribution('shared').configMap('cfg', { mine: 'x' }).included('team-a').build(),
      lines: ['may not delete configmaps in namespace "team-b"', 'may not delete configmaps in namespace "team-c"'],
    },
    {
      change: 'all namespaces narrowed to a list',
      old: () => distribution('shared').configMap('cfg', { a: 'b' }).allNamespaces().build(),
      next: () => distribution('shared').configMap('cfg', { a: 'b' }).included('team-a').build(),
      lines: ['may not delete configmaps in every namespace (the change narrows open-ended targets)'],
    },
    {
      change: 'a list widened to a selector',
      old: () => distribution('shared').configMap('cfg', { a: 'b' }).included('team-a', 'team-b').build(),
      next: () => distribution('shared').configMap('cfg', { a: 'b' }).matchLabels({ team: 'a' }).build(),
      lines: ['may not delete configmaps in namespace "team-b"'],
    },
  ])('on UPDATE, needs delete wherever the change stops distributing: $change', async ({ old, next, lines }) => {
    const { app, reviewer } = testApp();
    reviewer.grant('alice', ['create', 'update', 'delete'], 'configmaps', 'team-a').grant('alice', ['create', 'update'], 'configmaps');
    const response = await admit(app, 'distributions', review().distribution(next()).operation('UPDATE').oldObject(old()).user('alice'));
    expect(response.allowed).toBe(false);
    expect(response.status?.code).toBe(403);
    for (const line of lines) expect(response.status?.message).toContain(`spec.targets: user "alice" ${line}, where this change stops distributing and would delete the copy`);
  });

  it('on UPDATE, needs delete where the source moves into a target namespace (its copy there would go)', async () => {
    const { app, reviewer } = testApp();
    reviewer.grant('alice', ['get', 'create', 'update', 'delete'], 'configmaps', 'team-a').grant('alice', ['get', 'create', 'update'], 'configmaps', 'team-b');
    const old = distribution('moved').source('team-a', 'cfg').included('team-a', 'team-b').build();
    const next = distribution('moved').source('team-b', 'cfg').included('team-a', 'team-b').build();
    const response = await admit(app, 'distributions', review().distribution(next).operation('UPDATE').oldObject(old).user('alice'));
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe(
      'spec.source.namespace: user "alice" may not delete configmaps in namespace "team-b", where the source moves: the source\'s namespace is never a target, so the copy there would be deleted',
    );
    reviewer.grant('alice', ['delete'], 'configmaps', 'team-b');
    const allowedNow = await admit(app, 'distributions', review().distribution(next).operation('UPDATE').oldObject(old).user('alice'));
    expect(allowedNow.allowed).toBe(true);
  });

  it('admits a narrowing UPDATE by an author who may delete where it stops', async () => {
    const { app, reviewer } = testApp();
    reviewer.grant('admin2', ['create', 'update', 'delete'], 'configmaps');
    const old = distribution('shared').configMap('cfg', { a: 'b' }).allNamespaces().build();
    const next = distribution('shared').configMap('cfg', { a: 'b' }).included('team-a').build();
    const response = await admit(app, 'distributions', review().distribution(next).operation('UPDATE').oldObject(old).user('admin2'));
    expect(response.allowed).toBe(true);
    expect(reviewer.checks.map((c) => `${c.verb} ${c.namespace}`).sort()).toEqual(['create team-a', 'delete ', 'update team-a']);
  });

  it('asks nothing for an UPDATE that leaves the spec as it is (a label, an annotation)', async () => {
    const { app, reviewer } = testApp();
    const old = distribution('many').configMap('cfg', { a: 'b' }).included(...Array.from({ length: 1000 }, (_, i) => `ns-${i}`)).build();
    const labelled = structuredClone(old);
    labelled.metadata.labels = { foo: 'bar' };
    const response = await admit(app, 'distributions', review().distribution(labelled).operation('UPDATE').oldObject(old).user('nobody'));
    expect(response.allowed).toBe(true);
    expect(reviewer.checks).toEqual([]);
  });

  it('gives a denied author no warnings (they would tell which namespaces exist)', async () => {
    const { app, reviewer } = testApp({ namespaceExists: () => false });
    reviewer.grant('mallory', ['create', 'update'], 'configmaps', 'team-a');
    const rd = distribution('probe').configMap('cfg', { a: 'b' }).included('team-a', 'future-ns').build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('mallory'));
    expect(response.allowed).toBe(false);
    expect(response.warnings).toBeUndefined();
    const invalid = distribution('probe').configMap('cfg', { a: 'b' }).included('future-ns', 'Bad_Name').build();
    const refused = await admit(app, 'distributions', review().distribution(invalid).user('mallory'));
    expect(refused.allowed).toBe(false);
    expect(refused.warnings).toBeUndefined();
  });

  it('reserves the names of ObjectSyncs\' distributions for new distributions, not for existing ones', async () => {
    const { app } = testApp();
    const rd = distribution('objectsync-0123456789abcdef').configMap('cfg', { a: 'b' }).included('team-a').build();
    const created = await admit(app, 'distributions', review().distribution(rd));
    expect(created.allowed).toBe(false);
    expect(created.status?.message).toBe('metadata.name: "objectsync-" names are reserved for the distributions of ObjectSyncs: choose another name');
    const changed = distribution('objectsync-0123456789abcdef').configMap('cfg', { a: 'c' }).included('team-a').build();
    expect((await admit(app, 'distributions', review().distribution(changed).operation('UPDATE').oldObject(rd))).allowed).toBe(true);
  });

  it('names at most ten namespaces, and stops asking once the denial is certain', async () => {
    const { app, reviewer } = testApp();
    const namespaces = Array.from({ length: 2000 }, (_, i) => `team-${String(i).padStart(2, '0')}`);
    const rd = distribution('wide').configMap('cfg', { a: 'b' }).included(...namespaces).build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('eve'));
    const lines = response.status?.message.split('\n') ?? [];
    expect(lines.slice(0, 10).every((line) => line.startsWith('spec.targets: user "eve" may not create, update configmaps in namespace "team-'))).toBe(true);
    expect(lines[10]).toMatch(/^spec\.targets: user "eve" may not write configmaps in \d+ more target namespaces$/);
    // The verdict was known after eleven denied namespaces: the rest were not asked about.
    expect(lines[11]).toMatch(/^spec\.targets: \d+ more checks were not made once the request was known to be denied$/);
    // 2 cluster-wide questions, then per namespace until eleven are denied (and those in flight): not 4,000.
    expect(reviewer.checks.length).toBeLessThan(40);
  });

  it('asks once cluster-wide for an author who holds the rights everywhere, however many namespaces are listed', async () => {
    const { app, reviewer } = testApp();
    reviewer.grant('root', ['create', 'update'], 'configmaps');
    const namespaces = Array.from({ length: 2000 }, (_, i) => `t-${i}`);
    const rd = distribution('wide').configMap('cfg', { a: 'b' }).included(...namespaces).build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('root'));
    expect(response.allowed).toBe(true);
    expect(reviewer.checks.map((c) => `${c.verb} ${c.namespace}`)).toEqual(['create ', 'update ']);
  });

  it('has no say over objects it is not registered for', async () => {
    const { app, reviewer } = testApp();
    const response = await admit(app, 'distributions', review().namespace('misrouted').user('nobody'));
    expect(response.allowed).toBe(true);
    expect(reviewer.checks).toEqual([]);
  });

  it('answers errored (HTTP 200, code 500, uid echoed) when the authorization check fails', async () => {
    const { app, reviewer } = testApp();
    reviewer.failWith = new Error('connect ECONNREFUSED');
    const builder = review().distribution(distribution('x').configMap('c', { a: 'b' }).included('team-a').build());
    const response = await admit(app, 'distributions', builder);
    expect(response).toEqual({
      uid: builder.requestUid,
      allowed: false,
      status: { code: 500, reason: 'InternalError', message: 'internal error while reviewing the request' },
    });
  });

  it('stops sending the queued access reviews once the deadline has answered the request', async () => {
    let started = 0;
    const slow = { review: () => (started++, new Promise<{ allowed: boolean }>((resolve) => setTimeout(() => resolve({ allowed: true }), 300))) };
    const { app } = testApp({ accessReviewer: slow, deadlinesMs: { distributions: 100, namespaces: 100 } });
    const namespaces = Array.from({ length: 100 }, (_, i) => `team-${i}`);
    const response = await admit(app, 'distributions', review().distribution(distribution('x').configMap('c', { a: 'b' }).included(...namespaces).build()));
    expect(response.status?.code).toBe(504);
    // The two cluster-wide questions asked first finish; none of the 200 per-namespace ones is sent.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(started).toBe(2);
  });
});

describe('distribution webhook: kinds beyond Secret and ConfigMap (RD_ALLOWED_KINDS)', () => {
  const kinds = createKindRegistry([
    ...CORE_KINDS,
    { group: 'networking.k8s.io', kind: 'NetworkPolicy', plural: 'networkpolicies', version: 'v1', versions: ['v1'] },
    { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', plural: 'rolebindings', version: 'v1', versions: ['v1'] },
  ]);
  const roleBinding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'ci-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'Group', name: 'ci', apiGroup: 'rbac.authorization.k8s.io' }],
  };

  it('asks for the kind of its group, and admits what the author may write', async () => {
    const { app, reviewer } = testApp({ kinds });
    reviewer.grant('gina', ['create', 'update'], 'networkpolicies', 'team-a');
    const policy = { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', metadata: { name: 'deny-all' }, spec: { podSelector: {} } };
    const rd = distribution('deny-all').template(policy).included('team-a').build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('gina'));
    expect(response.allowed).toBe(true);
    expect(reviewer.checks.map((c) => `${c.verb} ${c.group}/${c.resource}`)).toEqual(['create networking.k8s.io/networkpolicies', 'update networking.k8s.io/networkpolicies']);
  });

  it('denies a RoleBinding whose role the author may not bind in a target', async () => {
    const { app, reviewer } = testApp({ kinds });
    reviewer.grant('frank', ['create', 'update'], 'rolebindings');
    reviewer.grant('frank', ['bind'], 'clusterroles', 'team-a');
    const rd = distribution('ci-admin').template(roleBinding).included('team-a', 'team-b').build();
    const response = await admit(app, 'distributions', review().distribution(rd).user('frank'));
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toBe('spec.resource.roleRef: user "frank" may not bind clusterroles "admin" in namespace "team-b"');
    expect(reviewer.checks.filter((c) => c.verb === 'bind')).toContainEqual(expect.objectContaining({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'admin', namespace: 'team-b' }));
  });

  it('admits a RoleBinding whose role the author may bind everywhere it goes', async () => {
    const { app, reviewer } = testApp({ kinds });
    reviewer.grant('frank', ['create', 'update'], 'rolebindings').grant('frank', ['bind'], 'clusterroles');
    const rd = distribution('ci-admin').template(roleBinding).included('team-a', 'team-b').build();
    expect((await admit(app, 'distributions', review().distribution(rd).user('frank'))).allowed).toBe(true);
  });

  it('denies a kind the configuration does not allow, naming the allowed ones', async () => {
    const { app } = testApp({ kinds });
    const rd = distribution('pods').template({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }).included('team-a').build();
    const response = await admit(app, 'distributions', review().distribution(rd));
    expect(response.status?.message).toBe(
      'spec.resource.kind: "Pod" is not supported: use Secret, ConfigMap, NetworkPolicy.networking.k8s.io or RoleBinding.rbac.authorization.k8s.io (allowed by RD_ALLOWED_KINDS)',
    );
  });
});

describe('distribution webhook: templates nested too deeply', () => {
  const DEEP = '"__deep__"';
  /** JSON text nesting `levels` objects: the value itself cannot be built and serialised (that recursion is the point). */
  const nestedJson = (levels: number): string => `${'{"a":'.repeat(levels)}"x"${'}'.repeat(levels)}`;

  /** A review whose template's metadata.managedFields[0].fieldsV1 nests `levels` deep, as raw text. */
  function deepReview(levels: number, operation: 'CREATE' | 'UPDATE' = 'CREATE', deleting = false): { body: string; uid: string } {
    const rd = distribution('deep').configMap('settings', { a: 'b' }).included('team-a').build();
    rd.spec.resource.metadata.managedFields = [{ manager: 'kubectl', fieldsV1: '__deep__' }];
    if (deleting) rd.metadata.deletionTimestamp = '2024-05-01T10:00:00Z';
    const builder = review().distribution(rd).operation(operation);
    if (operation === 'UPDATE') builder.oldObject(rd);
    return { body: JSON.stringify(builder.body()).replaceAll(DEEP, nestedJson(levels)), uid: builder.requestUid };
  }

  async function answer(body: string): Promise<{ status: number; response?: ReviewResponse['response'] }> {
    const { app } = testApp({ bodyLimitBytes: 1024 * 1024 });
    const res = await post(app, WEBHOOK_PATHS.distributions, body);
    return res.status === 200 ? { status: 200, response: ((await res.json()) as ReviewResponse).response } : { status: res.status };
  }

  it.each([5_000, 9_000, 100_000])('denies a template %i levels deep with the field and the limit (not a 500)', async (levels) => {
    const { body, uid } = deepReview(levels);
    const { status, response } = await answer(body);
    expect(status).toBe(200);
    expect(response).toEqual({ uid, allowed: false, status: { code: 422, reason: 'Invalid', message: 'spec.resource: nested deeper than 64 levels: a Kubernetes object needs far fewer' } });
  });

  it('denies an UPDATE that keeps a template too deep (the comparison with the old spec is never made)', async () => {
    const { response } = await answer(deepReview(9_000, 'UPDATE').body);
    expect(response?.allowed).toBe(false);
    expect(response?.status?.message).toBe('spec.resource: nested deeper than 64 levels: a Kubernetes object needs far fewer');
  });

  it('lets a distribution stored too deep before the rule lose its finalizers while it is deleted', async () => {
    const { response } = await answer(deepReview(9_000, 'UPDATE', true).body);
    expect(response?.allowed).toBe(true);
  });

  it('admits a template at the limit', async () => {
    // managedFields[0].fieldsV1 is at level 5 of the template (template, metadata, managedFields, [0], fieldsV1).
    const { response } = await answer(deepReview(64 - 4).body);
    expect(response?.allowed).toBe(true);
    const { response: over } = await answer(deepReview(64 - 3).body);
    expect(over?.allowed).toBe(false);
  });
});

describe('distribution webhook: large requests decided in slices of the event loop', () => {
  const LARGE_BODY = 8 * 2 ** 20;
  const teams = (count: number): string[] => Array.from({ length: count }, (_, i) => `team-${i}`);
  const cases = [
    { name: 'a valid distribution, with warnings and a plan', rd: () => distribution('warned').configMap('settings', { a: 'b' }).included('team-a', 'missing-ns', 'kube-system').build(), user: 'admin' },
    { name: 'an invalid one', rd: () => distribution('both').configMap('settings', { a: 'b' }).included('team-a').excluded('team-a').build(), user: 'admin' },
    { name: 'an author who may not write', rd: () => distribution('creds').secret('creds', { token: 't' }).included('team-a', 'team-b').build(), user: 'alice' },
    {
      name: '10,000 names and 10,000 exclusion patterns',
      rd: () => distribution('large').configMap('settings', { a: 'b' }).included(...teams(10_000)).patterns([], teams(10_000).map((team) => `${team}-*`)).build(),
      user: 'admin',
    },
    {
      name: 'names an exclusion pattern removes',
      rd: () => distribution('removed').configMap('settings', { a: 'b' }).included(...teams(20)).patterns([], ['team-1*']).build(),
      user: 'admin',
    },
  ];

  it.each(cases)('$name: the same answer whether or not it pauses at every step', async ({ rd, user }) => {
    const build = (): ReturnType<typeof review> => review().distribution(rd()).user(user).uid('same');
    const app = (sliceMs?: number): ReturnType<typeof testApp>['app'] => testApp({ bodyLimitBytes: LARGE_BODY, ...(sliceMs === undefined ? {} : { sliceMs }) }).app;
    const [whole, sliced] = await Promise.all([admit(app(), 'distributions', build()), admit(app(0), 'distributions', build())]);
    expect(sliced).toEqual(whole);
  });

  it('lets the loop serve others between its steps', async () => {
    const { app } = testApp({ sliceMs: 0, bodyLimitBytes: LARGE_BODY });
    const rd = distribution('large').configMap('settings', { a: 'b' }).included(...teams(10_000)).patterns([], teams(10_000).map((team) => `${team}-*`)).build();
    const order: string[] = [];
    const answered = admit(app, 'distributions', review().distribution(rd)).then(() => order.push('answered'));
    // Scheduled after the request began: it runs before the answer only if the request paused.
    setImmediate(() => order.push('served'));
    await answered;
    expect(order).toEqual(['served', 'answered']);
  });
});
