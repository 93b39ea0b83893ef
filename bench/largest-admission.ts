// 7a. Admission of the largest distribution: one admission review as large as the product reads
// (its body limit, the API server's own request limit), POSTed sequentially to the distribution
// webhook over one keep-alive connection. Baseline: the same bytes POSTed to a route of the same
// server stack that reads the whole body and answers a small JSON, alternating with the product
// so that both see the same machine. The ratio is what parsing and validation cost beyond moving
// the bytes.
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { WEBHOOK_PATHS } from '../src/k8s/webhook-config.js';
import { review } from '../test/unit/admission/review-builder.js';
import { authored } from './authored.js';
import { BASELINE_DRAIN_PATH, startBaselineServer } from './baseline-server.js';
import { API_SERVER_REQUEST_BYTES, crdBounds, largestForAdmission, type Shape } from './largest-shape.js';
import type { Product } from './product.js';
import { ratio, summarize, type Summary } from './stats.js';

export interface LargestAdmissionResult {
  shape: Shape;
  bodyLimitBytes: number;
  /** Measured requests per endpoint (after WARMUP each). */
  requests: number;
  product: Summary;
  baseline: Summary;
  /** product / baseline, per figure. */
  ratio: { p50: number; p99: number; max: number };
  /** The product's own mean, from its admission histogram: body read to verdict. */
  serverMeanMs: number;
  answer: { allowed: boolean; code?: number; message?: string; warnings: number };
  /** SubjectAccessReviews the product sent, warm-up included (a selector needs one per verb, for every namespace; then cached). */
  accessReviews: number;
}

const WARMUP = 2;
const USER = { name: 'bench-admin', groups: ['system:masters', 'system:authenticated'] };
const UID = 'bench-largest';
const DURATION = 'resource_distributor_admission_duration_seconds';
const REQUESTS = 'resource_distributor_api_requests_total';

interface Answer {
  status: number;
  text: string;
  ms: number;
}

/** One POST; timed from the first byte sent to the last byte of the answer received. */
function post(url: string, agent: Agent, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface ReviewAnswer {
  apiVersion?: string;
  kind?: string;
  response?: { uid?: string; allowed?: unknown; status?: { code?: number; message?: string }; warnings?: string[] };
}

/** A 200 carrying an AdmissionReview v1 that echoes our uid, or an error saying what came instead. */
function checkReview(answer: Answer): LargestAdmissionResult['answer'] {
  const fail = (why: string): Error => new Error(`largest admission: ${why}: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
  if (answer.status !== 200) throw fail('not a 200');
  const parsed = JSON.parse(answer.text) as ReviewAnswer;
  const response = parsed.response;
  if (parsed.apiVersion !== 'admission.k8s.io/v1' || parsed.kind !== 'AdmissionReview' || response?.uid !== UID || typeof response.allowed !== 'boolean') {
    throw fail('not an AdmissionReview v1 answering our uid');
  }
  const { code, message } = response.status ?? {};
  return { allowed: response.allowed, ...(code !== undefined ? { code } : {}), ...(message !== undefined ? { message } : {}), warnings: response.warnings?.length ?? 0 };
}

function checkDrained(answer: Answer, bytes: number): void {
  const drained = answer.status === 200 ? (JSON.parse(answer.text) as { bytes?: number }).bytes : undefined;
  if (drained !== bytes) throw new Error(`largest admission baseline: expected ${bytes} bytes read, got HTTP ${answer.status} ${answer.text.slice(0, 200)}`);
}

function histogram(scrape: { sum(name: string, labels?: Record<string, string>): number }): { sum: number; count: number } {
  return { sum: scrape.sum(`${DURATION}_sum`, { webhook: 'distributions' }), count: scrape.sum(`${DURATION}_count`, { webhook: 'distributions' }) };
}

export async function runLargestAdmission(options: { product: Product; requests: number }): Promise<LargestAdmissionResult> {
  const { product, requests } = options;
  const budget = Math.min(product.bodyLimitBytes, API_SERVER_REQUEST_BYTES);
  const { body: text, shape } = largestForAdmission(crdBounds(), budget, (rd) =>
    JSON.stringify(review().distribution(authored(rd, USER)).user(USER.name, USER.groups).uid(UID).body()),
  );
  const body = Buffer.from(text);
  const baselineServer = await startBaselineServer(product.certificates.serving);
  // One connection each, kept alive: the figures are per request, not per TLS handshake.
  const productAgent = new Agent({ keepAlive: true, maxSockets: 1, ca: product.certificates.trust });
  const baselineAgent = new Agent({ keepAlive: true, maxSockets: 1, ca: product.certificates.trust });
  const productUrl = `https://127.0.0.1:${product.port}${WEBHOOK_PATHS.distributions}`;
  const baselineUrl = `https://127.0.0.1:${baselineServer.port}${BASELINE_DRAIN_PATH}`;
  try {
    const start = await product.scrape();
    let answer: LargestAdmissionResult['answer'] | undefined;
    for (let i = 0; i < WARMUP; i++) {
      answer = checkReview(await post(productUrl, productAgent, body));
      checkDrained(await post(baselineUrl, baselineAgent, body), body.length);
    }
    const before = await product.scrape();
    const productMs: number[] = [];
    const baselineMs: number[] = [];
    for (let i = 0; i < requests; i++) {
      const answered = await post(productUrl, productAgent, body);
      answer = checkReview(answered);
      productMs.push(answered.ms);
      const drained = await post(baselineUrl, baselineAgent, body);
      checkDrained(drained, body.length);
      baselineMs.push(drained.ms);
    }
    const after = await product.scrape();
    const [own, ownBefore] = [histogram(after), histogram(before)];
    const productSummary = summarize(productMs);
    const baselineSummary = summarize(baselineMs);
    return {
      shape,
      bodyLimitBytes: product.bodyLimitBytes,
      requests,
      product: productSummary,
      baseline: baselineSummary,
      ratio: {
        p50: ratio(productSummary.p50, baselineSummary.p50),
        p99: ratio(productSummary.p99, baselineSummary.p99),
        max: ratio(productSummary.max, baselineSummary.max),
      },
      serverMeanMs: ratio(own.sum - ownBefore.sum, own.count - ownBefore.count) * 1000,
      answer: answer ?? { allowed: false, warnings: 0 },
      accessReviews: after.sum(REQUESTS, { resource: 'subjectaccessreviews' }) - start.sum(REQUESTS, { resource: 'subjectaccessreviews' }),
    };
  } finally {
    productAgent.destroy();
    baselineAgent.destroy();
    await baselineServer.close(1000);
  }
}
