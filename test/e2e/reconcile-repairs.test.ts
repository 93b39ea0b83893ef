// Every change that matters to a distribution reaches it when it happens, not at the sweep: an
// object under a distributed name appearing, changing or going in a target namespace (a conflict
// that clears, a foreign object deleted, one annotated for adoption), for ResourceDistributions
// and ObjectSyncs alike; another distribution's copy going away; a write a policy refused, once the
// policy is gone. The sweep is set an hour apart, so that it can be no part of any repair here.
// Each change is made a few times; how soon it was repaired is printed (the median and the worst),
// and the worst must stay well within PROMPT_MS. Last, what watching distributed names costs
// (connections, memory per name), as docs/repairs.md states it.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { createClusterApi } from '../../src/k8s/client-cluster-api.js';
import { createNamedObjects } from '../../src/k8s/named-objects.js';
import { createLogger } from '../../src/log.js';
import { kubeClientOf } from '../kube-client.js';
import { ANNOTATION_ADOPT, ANNOTATION_FROM, LABEL_DISTRIBUTION, type Resource } from '../../src/domain/types.js';
import { condition, configMapOf, distributionOf } from './fixtures/kube.js';
import { createObjectSync, deleteObjectSync, objectSyncCondition, objectSyncWhen } from './fixtures/object-syncs.js';
import { useReconcileSuite } from './fixtures/reconcile-suite.js';
import { uniqueName, waitFor } from './support/cluster.js';

const suite = useReconcileSuite({ objectSyncs: true, settings: { sweepIntervalMs: 3_600_000 } });
const { kube } = suite;

/** Far below the sweep (an hour here, 5 minutes by default). */
const PROMPT_MS = 10_000;
/** How many times each change is made. */
const TRIES = 3;
const NAME = 'shared';

/** ObjectSyncs made here, by namespace: deleted while the controller still runs (their finalizer would hold their namespace). */
const objectSyncs: string[] = [];
afterAll(async () => {
  for (const namespace of objectSyncs) await deleteObjectSync(kube, namespace, NAME).catch(() => undefined);
});

const measured = new Map<string, number[]>();
afterAll(() => {
  const rows = [...measured].map(([change, times]) => {
    const sorted = [...times].sort((a, b) => a - b);
    return `| ${change} | ${sorted[Math.floor(sorted.length / 2)] ?? 0} ms | ${sorted.at(-1) ?? 0} ms |`;
  });
  console.log(['| change | median | worst |', '|---|---|---|', ...rows].join('\n'));
});

/** Makes the change, then waits until `repaired` holds: how long that took, recorded under `change`. */
async function timed(change: string, make: () => Promise<void>, repaired: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  await make();
  await waitFor(async () => ((await repaired()) ? true : undefined), { what: `repair after: ${change}`, timeoutMs: PROMPT_MS, intervalMs: 25 });
  const elapsed = Date.now() - start;
  measured.set(change, [...(measured.get(change) ?? []), elapsed]);
  return elapsed;
}

const fromOf = (object: Resource | undefined): string | undefined => object?.metadata.annotations?.[ANNOTATION_FROM];
const copyBy = (namespace: string, distribution: string) => async (): Promise<boolean> => fromOf(await kube.get('ConfigMap', namespace, NAME)) === distribution;
const only = (namespace: string) => ({ includedNamespaces: { list: [{ name: namespace }] } });

async function namespace(prefix: string, labels: Record<string, string> = {}): Promise<string> {
  return (await kube.createNamespace(prefix, labels)).metadata!.name!;
}

/** A distribution of ConfigMap `shared` into `ns`. */
async function distribute(prefix: string, ns: string, data: Record<string, string>): Promise<string> {
  const name = uniqueName(prefix);
  await kube.createDistribution(distributionOf(name, configMapOf(NAME, data), only(ns)));
  return name;
}

async function conflicted(name: string): Promise<void> {
  await kube.waitForStatus(name, (s, rd) => s.succeeded === 0 && condition(rd, 'ConflictOccurred')?.status === 'True');
}

/** A ConfigMap `shared` someone else made in `ns`, and a distribution of the same name there, in conflict with it. */
async function foreignThenDistributed(prefix: string): Promise<{ ns: string; rd: string; foreign: Resource }> {
  const ns = await namespace(prefix);
  const foreign = await kube.put(configMapOf(NAME, { owner: 'someone else' }, { namespace: ns }));
  const rd = await distribute(`rd-${prefix}`, ns, { owner: 'distribution' });
  await conflicted(rd);
  return { ns, rd, foreign };
}

describe('repairs at once: ResourceDistribution', () => {
  it('a conflict clears when the other distribution is deleted and its copy goes', async () => {
    for (let i = 0; i < TRIES; i++) {
      const ns = await namespace('repair-gone');
      const first = await distribute('rd-first', ns, { who: 'first' });
      await kube.waitForObject('ConfigMap', ns, NAME, (o) => fromOf(o) === first);
      const second = await distribute('rd-second', ns, { who: 'second' });
      await conflicted(second);

      await timed('another distribution deleted (its copy goes)', () => kube.deleteDistribution(first), copyBy(ns, second));
      await kube.waitForStatus(second, (s, rd) => s.succeeded === 1 && condition(rd, 'ConflictOccurred')?.status === 'False', PROMPT_MS);
    }
  });

  it('a conflict clears when the other distribution stops targeting the namespace', async () => {
    for (let i = 0; i < TRIES; i++) {
      const ns = await namespace('repair-untarget');
      const elsewhere = await namespace('repair-elsewhere');
      const first = await distribute('rd-first', ns, { who: 'first' });
      await kube.waitForObject('ConfigMap', ns, NAME, (o) => fromOf(o) === first);
      const second = await distribute('rd-second', ns, { who: 'second' });
      await conflicted(second);

      const untarget = async (): Promise<void> => void (await kube.updateDistribution(first, (rd) => (rd.spec.targets = only(elsewhere))));
      await timed("another distribution's copy removed (no longer targeted)", untarget, copyBy(ns, second));
    }
  });

  it('a foreign object deleted by hand is replaced by the copy', async () => {
    for (let i = 0; i < TRIES; i++) {
      const { ns, rd } = await foreignThenDistributed('repair-foreign');
      await timed('foreign object deleted (ResourceDistribution)', () => kube.remove('ConfigMap', ns, NAME), copyBy(ns, rd));
      await kube.waitForStatus(rd, (s) => s.succeeded === 1, PROMPT_MS);
    }
  });

  it('a foreign object annotated for adoption, without the label, is taken over in place', async () => {
    for (let i = 0; i < TRIES; i++) {
      const { ns, rd, foreign } = await foreignThenDistributed('repair-adopt');
      const annotate = async (): Promise<void> => void (await kube.put({ ...foreign, metadata: { ...foreign.metadata, resourceVersion: undefined, annotations: { [ANNOTATION_ADOPT]: rd } } }));
      await timed('foreign object annotated for adoption (ResourceDistribution)', annotate, copyBy(ns, rd));
      const adopted = await kube.get('ConfigMap', ns, NAME);
      expect(adopted?.metadata.uid).toBe(foreign.metadata.uid);
      expect(adopted?.data).toEqual({ owner: 'distribution' });
    }
  });
});

describe('repairs at once: ObjectSync', () => {
  /** An ObjectSync of ConfigMap `shared` from its own namespace into `target`, where someone else's `shared` stands. */
  async function syncIntoForeign(prefix: string): Promise<{ source: string; target: string; foreign: Resource; from: () => Promise<string | undefined> }> {
    const source = await namespace(`${prefix}-src`);
    const target = await namespace(prefix);
    await kube.put(configMapOf(NAME, { k: 'source' }, { namespace: source }));
    const foreign = await kube.put(configMapOf(NAME, { owner: 'someone else' }, { namespace: target }));
    objectSyncs.push(source);
    await createObjectSync(kube, source, NAME, { group: '', kind: 'ConfigMap', name: NAME }, [{ namespace: target }]);
    await objectSyncWhen(kube, source, NAME, (os) => objectSyncCondition(os, 'ConflictOccurred')?.status === 'True');
    return { source, target, foreign, from: async () => fromOf(await kube.get('ConfigMap', target, NAME)) };
  }

  const ours = (from: string | undefined): boolean => from?.startsWith('objectsync-') === true;

  it('a foreign object deleted by hand is replaced by the copy', async () => {
    for (let i = 0; i < TRIES; i++) {
      const { source, target, from } = await syncIntoForeign('repair-os-foreign');
      await timed('foreign object deleted (ObjectSync)', () => kube.remove('ConfigMap', target, NAME), async () => ours(await from()));
      await objectSyncWhen(kube, source, NAME, (os) => objectSyncCondition(os, 'Ready')?.status === 'True', PROMPT_MS);
      await deleteObjectSync(kube, source, NAME);
    }
  });

  it('a foreign object annotated for adoption with the ObjectSync, without any label, is taken over in place', async () => {
    for (let i = 0; i < TRIES; i++) {
      const { source, target, foreign, from } = await syncIntoForeign('repair-os-adopt');
      const annotate = async (): Promise<void> =>
        void (await kube.put({ ...foreign, metadata: { ...foreign.metadata, resourceVersion: undefined, annotations: { [ANNOTATION_ADOPT]: `${source}/${NAME}` } } }));
      await timed('foreign object annotated for adoption (ObjectSync)', annotate, async () => ours(await from()));
      const adopted = await kube.get('ConfigMap', target, NAME);
      expect(adopted?.metadata.uid).toBe(foreign.metadata.uid);
      expect(adopted?.data).toEqual({ k: 'source' });
      await deleteObjectSync(kube, source, NAME);
    }
  });

  it('an ObjectSync of a kind that is not allowed gets a status that says so', async () => {
    const source = await namespace('repair-os-kind');
    const target = await namespace('repair-os-kind');
    objectSyncs.push(source);
    await createObjectSync(kube, source, NAME, { group: 'batch', kind: 'CronJob', name: 'nightly' }, [{ namespace: target }]);
    const os = await objectSyncWhen(kube, source, NAME, (found) => objectSyncCondition(found, 'NotDistributable')?.status === 'True', PROMPT_MS);
    expect(objectSyncCondition(os, 'NotDistributable')?.message).toContain('kind CronJob of batch/v1 is not allowed (RD_ALLOWED_KINDS)');
    expect(objectSyncCondition(os, 'Ready')?.status).toBe('False');
  });
});

describe('repairs at once: a write a policy refused', () => {
  const admission = kube.kc.makeApiClient(AdmissionregistrationV1Api);
  const GUARD = 'resource-distributor-test/guarded-by';

  /** A ValidatingAdmissionPolicy refusing ConfigMaps named `shared` in namespaces labelled for it, in force. */
  async function guarded(ns: string, policy: string): Promise<void> {
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name: policy },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { [GUARD]: policy } },
          },
          validations: [{ expression: `object.metadata.name != '${NAME}'`, message: `ConfigMaps named ${NAME} are refused here` }],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({ body: { metadata: { name: policy }, spec: { policyName: policy, validationActions: ['Deny'] } } });
    // In force once a write of that name is refused.
    await waitFor(
      async () => {
        const refused = await kube.put(configMapOf(NAME, { probe: 'yes' }, { namespace: ns })).then(
          async () => {
            await kube.remove('ConfigMap', ns, NAME);
            return false;
          },
          () => true,
        );
        return refused ? true : undefined;
      },
      { what: `policy ${policy} in force`, timeoutMs: 30_000 },
    );
  }

  async function unguarded(policy: string): Promise<void> {
    await admission.deleteValidatingAdmissionPolicyBinding({ name: policy }).catch(() => undefined);
    await admission.deleteValidatingAdmissionPolicy({ name: policy }).catch(() => undefined);
  }

  it('is made once the policy is removed, and the failure is reported meanwhile', async () => {
    for (let i = 0; i < TRIES; i++) {
      const policy = uniqueName('rd-e2e-guard');
      const ns = await namespace('repair-policy', { [GUARD]: policy });
      try {
        await guarded(ns, policy);
        const rd = await distribute('rd-guarded', ns, { v: '1' });
        const failed = await kube.waitForStatus(rd, (s, found) => s.failed === 1 && condition(found, 'CreateResourceFailed')?.status === 'True');
        expect(condition(failed, 'CreateResourceFailed')?.message).toContain('refused by an admission policy: retried with backoff');
        // Refused for a while: the first retries come and go before the policy does.
        await new Promise((resolve) => setTimeout(resolve, 2_000));

        await timed('a policy that refused the write removed', () => unguarded(policy), copyBy(ns, rd));
        await kube.waitForStatus(rd, (s, found) => s.succeeded === 1 && condition(found, 'CreateResourceFailed')?.status === 'False', PROMPT_MS);
      } finally {
        await unguarded(policy);
      }
    }
  });
});

describe('what watching distributed names costs', () => {
  /** Names watched; the first WITH_OBJECTS of them have one object each in one namespace. */
  const N = 1000;
  const WITH_OBJECTS = 100;

  it('lists what else stands under a name (no label of ours) as its identity and version alone, page by page', async () => {
    const ns = await namespace('repair-listed');
    const [name, other] = [uniqueName('listed'), uniqueName('listed')];
    // Labelled as a copy, but tied to no distribution (no owner reference): the controller leaves it be.
    const copy = { labels: { [LABEL_DISTRIBUTION]: 'rd-listed', team: 'a' }, annotations: { note: 'x'.repeat(1024) } };
    const foreign = { labels: { team: 'a' }, annotations: { note: 'x'.repeat(1024) } };
    const namespaces = [ns, await namespace('repair-listed'), await namespace('repair-listed')].sort();
    const [labelled, ...unlabelled] = namespaces;
    for (const each of [name, other]) {
      await kube.put(configMapOf(each, { v: '1' }, { ...copy, namespace: labelled }));
      for (const where of unlabelled) await kube.put(configMapOf(each, { v: '1' }, { ...foreign, namespace: where }));
    }
    const client = kubeClientOf(kube.kc);
    try {
      // One object a page: what each page holds is trimmed before the next is asked for.
      const listed = await createClusterApi(client, { pageSize: 1 }).listNamed?.('ConfigMap', name);
      const held = listed?.items.map((item) => item.metadata).sort((a, b) => (a.namespace ?? '').localeCompare(b.namespace ?? ''));
      // A copy is the watch of copies' to see: not listed here.
      expect(held).toEqual(unlabelled.map((where) => ({ name, namespace: where, uid: expect.any(String), resourceVersion: expect.any(String) })));
    } finally {
      client.close();
    }
  });

  it('one watch (one connection) per distributed name; memory follows the names and the objects under them, metadata only', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const ns = await namespace('repair-cost');
    const names = Array.from({ length: N }, (_, i) => `cost-${i}`);
    const withObjects = names.slice(0, WITH_OBJECTS);
    for (let i = 0; i < WITH_OBJECTS; i += 20) await Promise.all(withObjects.slice(i, i + 20).map((name) => kube.put(configMapOf(name, { v: 'x'.repeat(1024) }, { namespace: ns }))));
    const client = kubeClientOf(kube.kc);
    const named = createNamedObjects({ api: createClusterApi(client), log: createLogger({ level: 'silent', destination: process.stderr }), onChange: () => undefined });
    try {
      gc();
      const before = process.memoryUsage();
      const opened = client.connectionsOpened();
      named.follow(names.map((name) => ({ kind: 'ConfigMap', name, distributions: [`rd-${name}`] })));
      await waitFor(() => Promise.resolve(named.size().objects >= WITH_OBJECTS ? true : undefined), { what: `${N} names listed`, timeoutMs: 60_000 });
      // Every watch is open once it has sent its request: wait until every connection is.
      await waitFor(() => Promise.resolve(client.connectionsOpened() - opened >= N ? true : undefined), { what: `${N} watch connections`, timeoutMs: 60_000 });
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      gc();
      const watching = process.memoryUsage();
      const connections = client.connectionsOpened() - opened;
      const size = named.size();
      // Stopped: the watches' connections close, the stores go.
      named.follow([]);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      gc();
      const stopped = process.memoryUsage();
      const kib = (bytes: number): number => Math.round(bytes / N / 102.4) / 10;
      console.log(
        `names watched: ${size.names}, objects held: ${size.objects}, connections opened: ${connections}; per name: ` +
          `heap ${kib(watching.heapUsed - before.heapUsed)} KiB while watching (${kib(watching.heapUsed - stopped.heapUsed)} KiB freed when stopped), ` +
          `rss ${kib(watching.rss - before.rss)} KiB while watching`,
      );
      expect(size).toEqual({ names: N, objects: WITH_OBJECTS });
      // One per watch, plus the few of the request pool the lists used.
      expect(connections).toBeGreaterThanOrEqual(N);
      expect(connections).toBeLessThanOrEqual(N + 8);
    } finally {
      named.stop();
      client.close();
    }
  });
});
