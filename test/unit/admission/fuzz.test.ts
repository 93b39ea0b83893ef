// Property-based fuzzing of both webhooks through the admission app's HTTP handling (body reading,
// JSON, AdmissionReview decoding, deadline, answer): arbitrary envelopes and arbitrary
// distribution specs. The unit suite runs FUZZ_RUNS cases per property (default 2,000);
// `npm run fuzz` runs 100,000.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isDnsLabel } from '../../../src/domain/k8s-names.js';
import { post, testApp } from './review-builder.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2_000);
const TIMEOUT_MS = Math.max(60_000, RUNS * 10);
const PATHS = { distributions: '/validate/resourcedistributions', namespaces: '/generate/namespaces' } as const;
const { app, reviewer } = testApp({ bodyLimitBytes: 256 * 1024 });
reviewer.grant('fuzz', ['create', 'update'], 'secrets').grant('fuzz', ['create', 'update'], 'configmaps');

interface Answer {
  status: number;
  body: { apiVersion?: string; kind?: string; response?: { uid?: string; allowed?: boolean; status?: { code?: number; message?: string } }; message?: string };
}

async function send(path: string, body: unknown): Promise<Answer> {
  const res = await post(app, path, typeof body === 'string' ? body : JSON.stringify(body));
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/** Either a valid AdmissionReview answer echoing `uid`, or a 4xx with a message: nothing else. */
function expectWellFormed(answer: Answer, uid: unknown): void {
  if (answer.status === 200) {
    expect(answer.body).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(answer.body.response?.uid).toBe(uid);
    expect(typeof answer.body.response?.allowed).toBe('boolean');
  } else {
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(typeof answer.body.message).toBe('string');
  }
}

const names = fc.constantFrom('team-a', 'team-b', 'default', 'kube-system', 'Bad_Name', '', 'x'.repeat(64), 'ns-1');
const labelish = fc.oneof(fc.constantFrom('team', 'env', 'example.com/tier', '-bad', ''), fc.string({ maxLength: 12 }));
const nameList = fc.array(fc.oneof(fc.record({ name: names }), fc.record({ name: fc.anything() }), fc.anything()), { maxLength: 4 });
const targets = fc.oneof(
  fc.anything(),
  fc.record(
    {
      allNamespaces: fc.oneof(fc.boolean(), fc.anything()),
      includedNamespaces: fc.record({ list: nameList }),
      excludedNamespaces: fc.record({ list: nameList }),
      namespaceLabelSelector: fc.record(
        {
          matchLabels: fc.dictionary(labelish, fc.oneof(labelish, fc.anything()), { maxKeys: 3 }),
          matchExpressions: fc.array(
            fc.record(
              { key: labelish, operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Equals', ''), values: fc.array(labelish, { maxLength: 3 }) },
              { requiredKeys: [] },
            ),
            { maxLength: 3 },
          ),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  ),
);
const resource = fc.oneof(
  fc.anything(),
  fc.record(
    {
      apiVersion: fc.constantFrom('v1', 'apps/v1', ''),
      kind: fc.constantFrom('Secret', 'ConfigMap', 'Pod', ''),
      metadata: fc.oneof(fc.record({ name: fc.oneof(names, fc.anything()) }, { requiredKeys: [] }), fc.anything()),
      type: fc.constantFrom('Opaque', 'kubernetes.io/service-account-token', 'kubernetes.io/tls', 'custom/x'),
      data: fc.dictionary(fc.oneof(labelish, fc.constant('tls.crt')), fc.oneof(fc.base64String({ maxLength: 16 }), fc.string({ maxLength: 8 }), fc.anything()), { maxKeys: 4 }),
      stringData: fc.dictionary(labelish, fc.oneof(fc.string({ maxLength: 8 }), fc.anything()), { maxKeys: 3 }),
      binaryData: fc.dictionary(labelish, fc.base64String({ maxLength: 8 }), { maxKeys: 2 }),
      immutable: fc.oneof(fc.boolean(), fc.anything()),
    },
    { requiredKeys: ['apiVersion', 'kind'] },
  ),
);
const distribution = fc.record(
  {
    apiVersion: fc.constantFrom('apps.kruise.io/v1alpha1', 'v1'),
    kind: fc.constantFrom('ResourceDistribution', 'Other'),
    metadata: fc.record({ name: fc.oneof(names, fc.string({ maxLength: 70 }), fc.anything()) }, { requiredKeys: [] }),
    spec: fc.oneof(fc.anything(), fc.record({ resource, targets, writePolicy: fc.constantFrom('ignore', 'overwrite', 'strict', 'always') }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
// Mostly valid distributions, so that the allowed side of the property is reached often.
const validName = fc.constantFrom('team-a', 'team-b', 'ns-1', 'default');
const plausibleDistribution = fc.record({
  apiVersion: fc.constant('apps.kruise.io/v1alpha1'),
  kind: fc.constant('ResourceDistribution'),
  metadata: fc.record({ name: fc.constantFrom('shared', 'pull-secret', 'Not-Valid') }),
  spec: fc.record(
    {
      resource: fc.oneof(
        fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('ConfigMap'), metadata: fc.record({ name: fc.constantFrom('settings', 'game-demo') }), data: fc.dictionary(fc.constantFrom('a', 'b.conf', 'c_d'), fc.string({ maxLength: 8 }), { maxKeys: 3 }) }),
        fc.record({ apiVersion: fc.constant('v1'), kind: fc.constant('Secret'), metadata: fc.record({ name: fc.constant('creds') }), type: fc.constantFrom('Opaque', 'kubernetes.io/dockerconfigjson'), data: fc.dictionary(fc.constantFrom('token', 'user'), fc.base64String({ maxLength: 12 }), { maxKeys: 2 }) }),
      ),
      targets: fc.record(
        {
          allNamespaces: fc.boolean(),
          includedNamespaces: fc.record({ list: fc.array(fc.record({ name: validName }), { maxLength: 3 }) }),
          excludedNamespaces: fc.record({ list: fc.array(fc.record({ name: validName }), { maxLength: 2 }) }),
          namespaceLabelSelector: fc.record({ matchLabels: fc.dictionary(fc.constantFrom('team', 'env'), fc.constantFrom('a', 'b'), { maxKeys: 2 }) }),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['resource', 'targets'] },
  ),
});

const operation = fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', 'PATCH');
const uid = fc.oneof(fc.uuid(), fc.string({ maxLength: 10 }), fc.anything());
const userInfo = fc.oneof(fc.record({ username: fc.constantFrom('fuzz', 'nobody'), groups: fc.array(fc.string({ maxLength: 6 }), { maxLength: 2 }) }), fc.anything());

function envelope(kind: { group: string; version: string; kind: string }, object: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.record(
    {
      apiVersion: fc.constantFrom('admission.k8s.io/v1', 'admission.k8s.io/v1beta1'),
      kind: fc.constantFrom('AdmissionReview', 'Pod'),
      request: fc.oneof(
        fc.anything(),
        fc.record(
          { uid, kind: fc.oneof(fc.constant(kind), fc.anything()), operation, userInfo, object, oldObject: object, name: fc.oneof(names, fc.anything()), dryRun: fc.oneof(fc.boolean(), fc.anything()) },
          { requiredKeys: ['uid', 'kind', 'operation', 'userInfo'] },
        ),
      ),
    },
    { requiredKeys: ['apiVersion', 'kind'] },
  );
}

const RD_KIND = { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ResourceDistribution' };
const plausibleReview = fc.record({
  apiVersion: fc.constant('admission.k8s.io/v1'),
  kind: fc.constant('AdmissionReview'),
  request: fc.record({
    uid: fc.uuid(),
    kind: fc.constant(RD_KIND),
    operation: fc.constantFrom('CREATE', 'UPDATE'),
    userInfo: fc.constant({ username: 'fuzz', groups: ['system:authenticated'] }),
    object: plausibleDistribution,
    oldObject: plausibleDistribution,
  }),
});
const NS_KIND = { group: '', version: 'v1', kind: 'Namespace' };
const uidOf = (body: unknown): unknown => (body as { request?: { uid?: unknown } } | null)?.request?.uid;

type ListedTargets = { includedNamespaces?: { list?: { name?: unknown }[] }; excludedNamespaces?: { list?: { name?: unknown }[] } };

/** The targets of a CREATE or UPDATE the webhook allowed; undefined otherwise. */
function allowedWriteTargets(body: unknown, answer: Answer): ListedTargets | undefined {
  const request = (body as { request?: { operation?: unknown; object?: { spec?: { targets?: unknown } } } }).request;
  if (answer.status !== 200 || answer.body.response?.allowed !== true) return undefined;
  if (request?.operation !== 'CREATE' && request?.operation !== 'UPDATE') return undefined;
  const targets = request.object?.spec?.targets;
  return targets !== null && typeof targets === 'object' ? (targets) : undefined;
}

/** Every listed name a namespace name, none both included and excluded. */
function expectTargetRules(targets: ListedTargets): void {
  const included = (targets.includedNamespaces?.list ?? []).map((entry) => entry.name);
  const excluded = new Set((targets.excludedNamespaces?.list ?? []).map((entry) => entry.name));
  for (const name of [...included, ...excluded]) expect(typeof name === 'string' && isDnsLabel(name)).toBe(true);
  expect(included.filter((name) => excluded.has(name))).toEqual([]);
}

describe('admission fuzzing', () => {
  it.each(Object.entries(PATHS))('%s: arbitrary bytes and JSON get a well-formed answer', async (_name, path) => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 200 }), fc.json(), fc.jsonValue().map((v) => JSON.stringify(v))), async (text) => {
        const answer = await send(path, text);
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        expectWellFormed(answer, uidOf(parsed));
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT_MS);

  it('distributions: every envelope gets a well-formed answer; an allowed CREATE/UPDATE satisfies the target rules', async () => {
    let allowedWrites = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(envelope(RD_KIND, distribution), envelope(RD_KIND, plausibleDistribution), plausibleReview), async (body) => {
        const answer = await send(PATHS.distributions, body);
        expectWellFormed(answer, uidOf(body));
        const targets = allowedWriteTargets(body, answer);
        if (targets === undefined) return;
        allowedWrites++;
        expectTargetRules(targets);
      }),
      { numRuns: RUNS },
    );
    // The property is only worth something if the generators reach allowed distributions.
    console.log(`fuzz: ${allowedWrites} of ${RUNS} distribution writes allowed`);
    expect(allowedWrites).toBeGreaterThan(RUNS / 100);
  }, TIMEOUT_MS);

  it('namespaces: the webhook never denies', async () => {
    const namespace = fc.record({ metadata: fc.record({ name: names, labels: fc.oneof(fc.dictionary(labelish, fc.anything(), { maxKeys: 3 }), fc.anything()) }, { requiredKeys: [] }) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(envelope(NS_KIND, namespace), async (body) => {
        const answer = await send(PATHS.namespaces, body);
        expectWellFormed(answer, uidOf(body));
        if (answer.status === 200) expect(answer.body.response?.allowed).toBe(true);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT_MS);
});
