// node --max-semi-space-size=8 --import tsx bench/large-author-profile.ts [--names 10000] [--requests 40] [--rows create,label]
// (add --cpu-prof to profile). Section 8's cluster-wide author, in this process alone: the
// admission app over the controller's caches of a generated cluster (bench/synthetic-cluster.ts)
// holding the listed namespaces, and a dry-run create of one distribution listing them all, by an
// author whom the RBAC cache grants cluster-wide (the access answers come at once, as the
// product's grants-first reviewer gives them). Also the label-only update of that distribution.
// Prints p50 / p90 / max of the in-process time (request to answer, body parse included); the API
// server's own work and the network are not here: see `npm run bench -- --only large-author`.
import { performance } from 'node:perf_hooks';
import { cpuUsage } from 'node:process';
import { parseArgs } from 'node:util';
import { createAdmissionApp } from '../src/admission/app.js';
import { compileSpecValidator } from '../src/domain/schema.js';
import type { ResourceDistribution } from '../src/domain/types.js';
import type { AccessAnswer, AccessReviewer } from '../src/k8s/access-review.js';
import { loadCrdSchema } from '../src/k8s/crd-schema.js';
import { WEBHOOK_PATHS } from '../src/k8s/webhook-config.js';
import { createLogger } from '../src/log.js';
import { createMetrics } from '../src/metrics.js';
import { review } from '../test/unit/admission/review-builder.js';
import { distribution } from '../test/unit/builders.js';
import { summarize } from './stats.js';
import { simulatedController } from './simulated-controller.js';
import { SyntheticCluster } from './synthetic-cluster.js';

const { values } = parseArgs({ options: { names: { type: 'string', default: '10000' }, requests: { type: 'string', default: '40' }, rows: { type: 'string', default: 'create,label' } } });
const names = Number(values.names);
const requests = Number(values.requests);
const GRANTED: AccessAnswer = { allowed: true };

/** As section 8 lists them: a ConfigMap template of a few hundred bytes, every namespace by name. */
function listing(name: string, namespaces: readonly string[]): ResourceDistribution {
  const rd = distribution(name)
    .configMap('bench-large-author', { 'settings.properties': 'feature.a=on\nfeature.b=off\nlimit=100\n', endpoint: 'https://service.example.internal:8443/api' })
    .included(...namespaces)
    .build();
  return { ...rd, metadata: { name } };
}

async function main(): Promise<void> {
  const cluster = new SyntheticCluster({ namespaces: names, teams: 100, allNamespaces: 0, selectors: 0, lists: 0, listedNames: 0 });
  // Named as section 8 names them (the request's size is theirs too).
  const named = (i: number): string => `bench-large-author-ns-${String(i).padStart(4, '0')}`;
  const listNamespaces: typeof cluster.api.listNamespaces = async () => {
    const list = await cluster.api.listNamespaces();
    const items = list.items.map((ns, i) => ({ ...ns, metadata: { ...ns.metadata, name: named(i), labels: { 'kubernetes.io/metadata.name': named(i) } } }));
    // Parsed, as the API server's answer is: flat strings, not the concatenations that made them.
    return { ...list, items: JSON.parse(JSON.stringify(items)) as typeof items };
  };
  const controller = simulatedController({ ...cluster.api, listNamespaces }, 'profile');
  await controller.start();
  await controller.idle();
  // The RBAC cache's answer for a cluster-wide grant: at once, no access review sent.
  const clusterWide: AccessReviewer = { review: () => Promise.resolve(GRANTED), cached: () => GRANTED };
  const app = createAdmissionApp({
    log: createLogger({ level: 'warn' }),
    metrics: createMetrics(),
    schema: compileSpecValidator(loadCrdSchema()),
    accessReviewer: clusterWide,
    namespaceExists: (name) => controller.namespaceExists(name),
    previewPlan: (rd) => controller.previewPlan(rd),
    onNamespaceAdmitted: () => undefined,
    forbiddenNamespaces: [],
    readiness: () => ({ caches: controller.synced() }),
    bodyLimitBytes: 3 * 2 ** 20,
  });
  const listed = Array.from({ length: names }, (_, i) => named(i));
  const created = listing('bench-large-author-dry', listed);
  const user = (r: ReturnType<typeof review>): ReturnType<typeof review> => r.user('bench-large-author-cluster', ['system:authenticated']).uid('profile');
  const bodies = {
    create: JSON.stringify(user(review().distribution(created)).body()),
    label: JSON.stringify(
      user(review().distribution({ ...created, metadata: { ...created.metadata, labels: { round: '1' } } }).operation('UPDATE').oldObject(created)).body(),
    ),
  };
  for (const [row, body] of Object.entries(bodies).filter(([row]) => values.rows.split(',').includes(row))) {
    const samples: number[] = [];
    const cpu: number[] = [];
    let answer = '';
    for (let i = 0; i < requests; i++) {
      const [started, used] = [performance.now(), cpuUsage()];
      const response = await app.request(WEBHOOK_PATHS.distributions, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      answer = await response.text();
      samples.push(performance.now() - started);
      const { user, system } = cpuUsage(used);
      cpu.push((user + system) / 1000);
    }
    // The first few warm the code up.
    const { p50, p90, max } = summarize(samples.slice(Math.min(5, requests - 1)));
    const cpuP50 = summarize(cpu.slice(Math.min(5, requests - 1))).p50;
    const { response } = JSON.parse(answer) as { response: { allowed: boolean; warnings?: string[] } };
    console.log(`${row} (${(body.length / 1024).toFixed(1)} KiB): p50 ${p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, max ${max.toFixed(1)} ms (CPU p50 ${cpuP50.toFixed(1)} ms, the process's threads); allowed ${response.allowed}`);
    for (const warning of response.warnings ?? []) console.log(`  warning: ${warning}`);
  }
  await controller.stop();
}

await main();
