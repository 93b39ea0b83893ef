// 7c. How long one hostile admission request holds everyone else up. Each input (the red-team
// inputs that once held the event loop for seconds, and the largest review there can be) is POSTed
// to the product's distribution webhook while a prober sends trivial admission reviews (a DELETE,
// which the webhook allows at once) back to back on a second connection: the prober's slowest
// answer during the request is how long any other webhook call waited. Baseline: the same, against
// a trivial admission endpoint of the same server stack that parses the same body and allows it.
// The product's own figure: its event-loop delay gauge (prom-client's, reset at each scrape).
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import type { ResourceDistribution, Targets } from '../src/domain/types.js';
import { WEBHOOK_PATHS } from '../src/k8s/webhook-config.js';
import { review } from '../test/unit/admission/review-builder.js';
import { authored } from './authored.js';
import { BASELINE_ADMISSION_PATH, startBaselineServer } from './baseline-server.js';
import { API_SERVER_REQUEST_BYTES, crdBounds, largestForAdmission } from './largest-shape.js';
import type { Product } from './product.js';
import { median } from './stats.js';

export interface LoopHeldRow {
  input: string;
  bytes: number;
  /** Medians over the rounds: the request's answer, the slowest probe during it. */
  product: { answerMs: number; slowestProbeMs: number };
  baseline: { answerMs: number; slowestProbeMs: number };
  /** The longest probe over every round, product and baseline. */
  worstProbeMs: { product: number; baseline: number };
  /** The product's event-loop delay gauge over the rounds (its max). */
  loopDelayMaxMs: number;
}

export interface LoopHeldResult {
  rounds: number;
  /** A probe's answer while nothing else runs (median): what a probe costs by itself. */
  idleProbeMs: { product: number; baseline: number };
  rows: LoopHeldRow[];
}

const USER = { name: 'bench-admin', groups: ['system:masters', 'system:authenticated'] };
const LOOP_DELAY = 'resource_distributor_nodejs_eventloop_lag_max_seconds';

function post(url: string, agent: Agent, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`loop-held: HTTP ${res.statusCode ?? 0} from ${url}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function distribution(name: string, targets: Targets): ResourceDistribution {
  return authored(
    { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ResourceDistribution', metadata: { name }, spec: { resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { a: '1' } }, targets } },
    USER,
  );
}

function reviewOf(rd: ResourceDistribution): Buffer {
  return Buffer.from(JSON.stringify(review().distribution(rd).user(USER.name, USER.groups).body()));
}

/** The inputs: what each is, and its admission review. */
function inputs(bodyLimitBytes: number): { input: string; body: Buffer }[] {
  const teams = Array.from({ length: 10_000 }, (_, i) => `team-${i}`);
  const largest = largestForAdmission(crdBounds(), Math.min(bodyLimitBytes, API_SERVER_REQUEST_BYTES), (rd) => JSON.stringify(review().distribution(authored(rd, USER)).user(USER.name, USER.groups).body()));
  return [
    {
      input: '10,000 names and 10,000 exclusion patterns',
      body: reviewOf(distribution('loop-held-lists', { includedNamespaces: { list: teams.map((name) => ({ name })) }, excludedNamespaces: { list: teams.map((team) => ({ pattern: `${team}-*` })) } })),
    },
    {
      input: 'name pattern a*a*a*a*a*a*a*b, five 63-character names',
      body: reviewOf(distribution('loop-held-glob', { includedNamespaces: { list: Array.from({ length: 5 }, (_, i) => ({ name: `${'a'.repeat(62)}${i}` })) }, excludedNamespaces: { list: [{ pattern: 'a*a*a*a*a*a*a*b' }] } })),
    },
    {
      input: 'the costliest patterns admission allows (4 of *aN*b*), planned over every namespace',
      body: reviewOf(distribution('loop-held-patterns', { includedNamespaces: { list: Array.from({ length: 4 }, (_, i) => ({ pattern: `*a${i}*b*` })) } })),
    },
    { input: `the largest review (${largest.shape.includedEntries} + ${largest.shape.excludedEntries} names, a selector of ${largest.shape.values} values)`, body: Buffer.from(largest.body) },
  ];
}

/** Trivial reviews, one after the other, until `done` settles: every answer's time. */
async function probe(url: string, agent: Agent, done: Promise<unknown>): Promise<number[]> {
  const deleteReview = Buffer.from(JSON.stringify(review().distribution(distribution('probe', {})).user(USER.name, USER.groups).operation('DELETE').body()));
  let finished = false;
  void done.finally(() => (finished = true));
  const times: number[] = [];
  while (!finished) times.push(await post(url, agent, deleteReview));
  return times;
}

interface Side {
  bigUrl: string;
  probeUrl: string;
  bigAgent: Agent;
  probeAgent: Agent;
}

async function oneRound(side: Side, body: Buffer): Promise<{ answerMs: number; slowestProbeMs: number }> {
  const answer = post(side.bigUrl, side.bigAgent, body);
  const probes = await probe(side.probeUrl, side.probeAgent, answer);
  return { answerMs: await answer, slowestProbeMs: Math.max(0, ...probes) };
}

export async function runLoopHeld(options: { product: Product; rounds: number }): Promise<LoopHeldResult> {
  const { product, rounds } = options;
  const baselineServer = await startBaselineServer(product.certificates.serving);
  const agent = (): Agent => new Agent({ keepAlive: true, maxSockets: 1, ca: product.certificates.trust });
  const productSide: Side = { bigUrl: `https://127.0.0.1:${product.port}${WEBHOOK_PATHS.distributions}`, probeUrl: `https://127.0.0.1:${product.port}${WEBHOOK_PATHS.distributions}`, bigAgent: agent(), probeAgent: agent() };
  const baselineUrl = `https://127.0.0.1:${baselineServer.port}${BASELINE_ADMISSION_PATH}`;
  const baselineSide: Side = { bigUrl: baselineUrl, probeUrl: baselineUrl, bigAgent: agent(), probeAgent: agent() };
  try {
    const idle = async (side: Side): Promise<number> => median(await probe(side.probeUrl, side.probeAgent, new Promise((resolve) => setTimeout(resolve, 500))));
    const idleProbeMs = { product: await idle(productSide), baseline: await idle(baselineSide) };
    const rows: LoopHeldRow[] = [];
    for (const { input, body } of inputs(product.bodyLimitBytes)) {
      // A warm-up each: access answers are cached after the first, as they are for an author who writes again.
      await oneRound(productSide, body);
      await oneRound(baselineSide, body);
      await product.scrape();
      const ours: { answerMs: number; slowestProbeMs: number }[] = [];
      const theirs: { answerMs: number; slowestProbeMs: number }[] = [];
      for (let i = 0; i < rounds; i++) {
        ours.push(await oneRound(productSide, body));
        theirs.push(await oneRound(baselineSide, body));
      }
      const delay = (await product.scrape()).sum(LOOP_DELAY) * 1000;
      const summary = (runs: typeof ours): LoopHeldRow['product'] => ({ answerMs: median(runs.map((r) => r.answerMs)), slowestProbeMs: median(runs.map((r) => r.slowestProbeMs)) });
      rows.push({
        input,
        bytes: body.length,
        product: summary(ours),
        baseline: summary(theirs),
        worstProbeMs: { product: Math.max(...ours.map((r) => r.slowestProbeMs)), baseline: Math.max(...theirs.map((r) => r.slowestProbeMs)) },
        loopDelayMaxMs: delay,
      });
    }
    return { rounds, idleProbeMs, rows };
  } finally {
    for (const side of [productSide, baselineSide]) {
      side.bigAgent.destroy();
      side.probeAgent.destroy();
    }
    await baselineServer.close(1000);
  }
}
