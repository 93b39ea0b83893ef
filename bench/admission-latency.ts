// 1. Admission latency at a constant arrival rate (bench/admission-load.ts, HTTPS over loopback,
// keep-alive connections): the distribution validator, the namespace webhook and, as the
// baseline, a trivial route on the same server stack with the same certificate.
import { request } from 'node:https';
import { mapBounded } from '../src/bounded.js';
import { WEBHOOK_PATHS } from '../src/k8s/webhook-config.js';
import { review } from '../test/unit/admission/review-builder.js';
import { distribution } from '../test/unit/builders.js';
import { BASELINE_ADMISSION_PATH, BASELINE_PATH, startBaselineServer } from './baseline-server.js';
import type { BenchKube } from './bench-kube.js';
import { ensureLoadGenerator, runLoad, type LoadResult } from './admission-load.js';
import { authored } from './authored.js';
import type { Product } from './product.js';
import { summarize } from './stats.js';
import type { BenchSize } from './sizes.js';

export type Endpoint =
  | 'baseline'
  | 'trivial admission'
  | 'distribution validation'
  | 'namespace (dry-run)'
  | 'pod (copies in place)'
  | 'pod mutation'
  | 'trivial admission, crowded'
  | 'pod mutation, crowded';

/** One load step's figures (those of the load generator, without the samples themselves). */
export interface AdmissionRow extends Omit<LoadResult, 'samplesMs'> {
  endpoint: Endpoint;
  rate: number;
  connections: number;
  durationSeconds: number;
  /** SubjectAccessReviews the product sent to the API server during the run (cache misses). */
  accessReviews: number;
}

export interface AdmissionResult {
  rows: AdmissionRow[];
  sarCacheTtlMs: number;
  targetNamespaces: string[];
  /** The crowded rows' other distributions: how many, and how many excluded names each lists. */
  crowd: { distributions: number; excludedNames: number };
}

interface Target {
  endpoint: Endpoint;
  url: string;
  body: string;
  expect: (response: string) => boolean;
}

const USER = { name: 'bench-admin', groups: ['system:masters', 'system:authenticated'] };
/** A Secret distributed to the first bench namespace, which the pod webhook's pods reference. */
const POD_SECRET = 'bench-admission-pull';

function buildTargets(productPort: number, baselinePort: number, namespaces: string[]): Target[] {
  const rd = distribution('bench-admission').configMap('bench-admission', { key: 'value' }).included(...namespaces).build();
  const podReview = review()
    .pod(namespaces[1] ?? 'default', { imagePullSecrets: [{ name: POD_SECRET }], containers: [{ name: 'app', image: 'registry.example.com/app:1', envFrom: [{ configMapRef: { name: 'app-env' } }] }] })
    .uid('bench')
    .body();
  const allowed = (response: string): boolean => (JSON.parse(response) as { response?: { allowed?: boolean } }).response?.allowed === true;
  const targets: (Omit<Target, 'body'> & { body: object })[] = [
    {
      endpoint: 'baseline',
      url: `https://127.0.0.1:${baselinePort}${BASELINE_PATH}`,
      body: review().namespace('bench-x').dryRun().uid('bench').body(),
      expect: (response) => response === '{"ok":true}',
    },
    {
      endpoint: 'distribution validation',
      url: `https://127.0.0.1:${productPort}${WEBHOOK_PATHS.distributions}`,
      body: review().distribution(authored(rd, USER)).user(USER.name, USER.groups).uid('bench').body(),
      expect: allowed,
    },
    {
      // The common case: the pod references a distributed Secret whose copy is already in place.
      endpoint: 'pod (copies in place)',
      url: `https://127.0.0.1:${productPort}${WEBHOOK_PATHS.pods}`,
      body: podReview,
      expect: allowed,
    },
    {
      // The pod webhooks' baseline: the same review, read, parsed and allowed, nothing else.
      endpoint: 'trivial admission',
      url: `https://127.0.0.1:${baselinePort}${BASELINE_ADMISSION_PATH}`,
      body: podReview,
      expect: allowed,
    },
    {
      // A pod from the registry of the distributed pull Secret, which does not name it yet: the patch adds it.
      endpoint: 'pod mutation',
      url: `https://127.0.0.1:${productPort}${WEBHOOK_PATHS.podMutation}`,
      body: review()
        .pod(namespaces[1] ?? 'default', { containers: [{ name: 'app', image: 'registry.example.com/team/app:1' }] })
        .uid('bench')
        .body(),
      expect: (response) => allowed(response) && (JSON.parse(response) as { response?: { patch?: string } }).response?.patch !== undefined,
    },
    {
      endpoint: 'namespace (dry-run)',
      url: `https://127.0.0.1:${productPort}${WEBHOOK_PATHS.namespaces}`,
      body: review().namespace('bench-admission-new', { team: 'bench' }).dryRun().uid('bench').body(),
      expect: allowed,
    },
  ];
  return targets.map((t) => ({ ...t, body: JSON.stringify(t.body) }));
}

/** One request through TLS verification with the product's CA: proves the endpoint answers what we think it does. */
function preflight(target: Target, ca: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(target.url, { method: 'POST', ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 && target.expect(text) ? resolve() : reject(new Error(`${target.endpoint}: unexpected answer ${res.statusCode ?? '?'} ${text.slice(0, 300)}`))));
    });
    req.on('error', reject);
    req.end(target.body);
  });
}

const SAR_REQUESTS = 'resource_distributor_api_requests_total';

/** Several runs of one endpoint as one: percentiles over every sample, counts added up. */
function pooled(results: readonly LoadResult[]): Omit<LoadResult, 'samplesMs'> {
  const samples = results.flatMap((result) => result.samplesMs);
  const requests = results.reduce((sum, result) => sum + result.requests, 0);
  const seconds = results.reduce((sum, result) => sum + result.requests / Math.max(result.achievedRps, Number.MIN_VALUE), 0);
  return {
    latencyMs: summarize(samples),
    requests,
    achievedRps: seconds > 0 ? requests / seconds : 0,
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    timeouts: results.reduce((sum, result) => sum + result.timeouts, 0),
    non2xx: results.reduce((sum, result) => sum + result.non2xx, 0),
  };
}

export async function runAdmission(options: { kube: BenchKube; product: Product; size: BenchSize; onRow: (row: AdmissionRow) => void }): Promise<AdmissionResult> {
  const { kube, product, size } = options;
  const namespaces = ['default', 'bench-admission-a', 'bench-admission-b'];
  await kube.createNamespaces(namespaces.slice(1), {}, 2);
  const config = JSON.stringify({ auths: { 'registry.example.com': { auth: Buffer.from('robot:bench').toString('base64') } } });
  const pull = distribution(POD_SECRET).secret(POD_SECRET, { '.dockerconfigjson': config }, 'kubernetes.io/dockerconfigjson').included(namespaces[1] ?? 'default').build();
  await kube.createDistribution({ ...pull, metadata: { name: POD_SECRET }, spec: { ...pull.spec, imagePullSecretInjection: 'MatchingImages' } });
  await kube.waitForDistributions('the pod bench Secret copied', (items) => items.some((rd) => rd.metadata.name === POD_SECRET && rd.status?.succeeded === 1), 30_000);
  const bundle = product.certificates;
  const generator = await ensureLoadGenerator();
  const baseline = await startBaselineServer(bundle.serving);
  const rows: AdmissionRow[] = [];
  try {
    const all = buildTargets(product.port, baseline.port, namespaces);
    for (const target of all) await preflight(target, bundle.trust);
    const podEndpoints: readonly Endpoint[] = ['trivial admission', 'pod (copies in place)', 'pod mutation'];
    const sars = async (): Promise<number> => (await product.scrape()).sum(SAR_REQUESTS, { resource: 'subjectaccessreviews' });
    const { durationSeconds, warmupSeconds } = size.admission;
    for (const step of size.admission.steps) {
      for (const target of all.filter((t) => !podEndpoints.includes(t.endpoint))) {
        const reviewsBefore = await sars();
        const { samplesMs: _samples, ...result } = await runLoad(generator, { url: target.url, body: target.body, ca: bundle.trust, connections: step.connections, rate: step.rate, durationSeconds, warmupSeconds });
        const row: AdmissionRow = { endpoint: target.endpoint, rate: step.rate, connections: step.connections, durationSeconds, ...result, accessReviews: (await sars()) - reviewsBefore };
        rows.push(row);
        options.onRow(row);
      }
    }
    // The pod webhooks beside the trivial admission route at the same rate, interleaved round by
    // round so that whatever else the machine does falls on all three alike; samples pooled.
    const { podRounds, podRoundSeconds } = size.admission;
    const interleaved = async (targets: readonly Target[], step: { rate: number; connections: number }): Promise<AdmissionRow[]> => {
      const runs = new Map<Endpoint, LoadResult[]>(targets.map((t) => [t.endpoint, []]));
      const reviewsBefore = await sars();
      const rounds = Array.from({ length: podRounds }, () => targets).flat();
      for (const target of rounds) {
        const spec = { url: target.url, body: target.body, ca: bundle.trust, connections: step.connections, rate: step.rate, durationSeconds: podRoundSeconds, warmupSeconds };
        runs.get(target.endpoint)?.push(await runLoad(generator, spec));
      }
      const accessReviews = (await sars()) - reviewsBefore;
      return targets.map((target) => ({ endpoint: target.endpoint, rate: step.rate, connections: step.connections, durationSeconds: podRounds * podRoundSeconds, ...pooled(runs.get(target.endpoint) ?? []), accessReviews }));
    };
    for (const step of size.admission.podSteps) {
      for (const row of await interleaved(all.filter((t) => podEndpoints.includes(t.endpoint)), step)) {
        rows.push(row);
        options.onRow(row);
      }
    }
    // The same pod mutation, once the cluster holds many injecting distributions that target
    // another namespace, each listing thousands of excluded names (what one tenant can create):
    // the pod's cost must not grow with them.
    await createCrowd(kube, namespaces[2] ?? 'default', size.admission.crowd, size.clientConcurrency);
    const crowded = all.flatMap((t): Target[] => (t.endpoint === 'trivial admission' ? [{ ...t, endpoint: 'trivial admission, crowded' }] : t.endpoint === 'pod mutation' ? [{ ...t, endpoint: 'pod mutation, crowded' }] : []));
    for (const target of crowded) await preflight(target, bundle.trust);
    for (const step of size.admission.podSteps) {
      for (const row of await interleaved(crowded, step)) {
        rows.push(row);
        options.onRow(row);
      }
    }
    // Gone before the sections that follow (memory above all) measure the product.
    await mapBounded(crowdNames(size.admission.crowd), 8, (name) => kube.deleteDistribution(name));
  } finally {
    await baseline.close(1000);
  }
  return { rows, sarCacheTtlMs: product.sarCacheTtlMs, targetNamespaces: namespaces, crowd: size.admission.crowd };
}

const CROWD_PREFIX = 'bench-crowd-';
const crowdNames = (crowd: { distributions: number }): string[] => Array.from({ length: crowd.distributions }, (_, i) => `${CROWD_PREFIX}${i}`);

/** `count` distributions injecting a registry Secret into `namespace` only, each excluding `excludedNames` other names. */
async function createCrowd(kube: BenchKube, namespace: string, crowd: { distributions: number; excludedNames: number }, concurrency: number): Promise<void> {
  const config = JSON.stringify({ auths: { 'registry.example.com': { auth: Buffer.from('robot:crowd').toString('base64') } } });
  const excluded = Array.from({ length: crowd.excludedNames }, (_, i) => `bench-crowd-excluded-${i}`);
  const names = crowdNames(crowd);
  await mapBounded(names, Math.min(concurrency, 8), async (name) => {
    const rd = distribution(name).secret(name, { '.dockerconfigjson': config }, 'kubernetes.io/dockerconfigjson').included(namespace).excluded(...excluded).build();
    await kube.createDistribution({ ...rd, metadata: { name }, spec: { ...rd.spec, imagePullSecretInjection: 'MatchingImages' } });
  });
  await kube.waitForDistributions(
    'the crowd distributions copied',
    (items) => items.filter((rd) => rd.metadata.name.startsWith(CROWD_PREFIX) && rd.status?.succeeded === 1).length === names.length,
    120_000,
  );
}
