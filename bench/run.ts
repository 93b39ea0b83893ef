// npm run bench [-- --size smoke|default|large] [--only admission,propagation,...] [--out DIR] [--no-kruise]
// Starts a local control plane (etcd, kube-apiserver, kube-controller-manager), builds the product
// and runs it as users do (`node dist/main.js`, local mode) against it, runs the sections in order, prints each section's table as it finishes,
// writes bench/results/<timestamp>.json (after every section) and bench/results/latest-<size>.md, and
// stops everything it started, failure or not.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { applyManifestFiles, CRD_DIR, startControlPlane, type ControlPlane } from '../test/control-plane/index.js';
import { runAdmission } from './admission-latency.js';
import { BenchKube } from './bench-kube.js';
import { runContention } from './contention.js';
import { runFanOut } from './fan-out.js';
import { Fleet } from './fleet.js';
import type { KruisePeerResult } from './kruise-peer.js';
import { runLargeAuthor } from './large-author.js';
import { runLargest } from './largest.js';
import { machineInfo } from './machine.js';
import { runMetricsFlood } from './metrics-flood.js';
import { runMemory, type MemorySample } from './memory.js';
import { buildProduct, startProduct, type Product, type ProductOptions } from './product.js';
import { writeWriterKubeconfig } from './writer-identity.js';
import { runPropagation } from './propagation.js';
import { runScale } from './scale.js';
import { renderMachine, renderReport, renderSection, writeJson, writeMarkdown, type BenchResult, type SectionResults } from './report.js';
import { OPTIONAL_SECTIONS, parseBenchArgs, SECTIONS, type BenchSize, type SectionName } from './sizes.js';
import { runSteadyState } from './steady-state.js';

const say = (line: string): void => console.error(`[bench] ${line}`);

interface World {
  plane: ControlPlane;
  /** The kubeconfig the product and the Go write loops authenticate with (see writer-identity.ts). */
  writerKubeconfigPath: string;
  kube: BenchKube;
  fleet: Fleet;
  size: BenchSize;
  product: Product;
  /** The product's memory right after its start, before it distributed anything. */
  idle: MemorySample;
  /** Whether the propagation and the fan-out run their OpenKruise peers (not with --no-kruise). */
  kruise: boolean;
}

/** The product stopped and started again as users run it (same flags): later sections and the teardown see the new process. */
async function restartProduct(world: World, options: ProductOptions = {}): Promise<Product> {
  await world.product.stop();
  world.product = await startProduct(world.plane.kubeConfig, world.writerKubeconfigPath, { replacing: world.product, ...options });
  return world.product;
}

/** The OpenKruise peer a section ran beside it, if any. */
function peerOf(name: SectionName, sections: SectionResults): KruisePeerResult<unknown> | undefined {
  if (name === 'propagation') return sections.propagation?.kruise;
  return name === 'fan-out' ? sections['fan-out']?.kruise : undefined;
}

async function runSection(name: SectionName, world: World, sections: SectionResults): Promise<void> {
  const { kube, fleet, size, product } = world;
  switch (name) {
    case 'admission':
      sections.admission = await runAdmission({
        kube,
        product,
        size,
        onRow: (row) => say(`admission ${row.endpoint} @ ${row.rate}/s: p50 ${row.latencyMs.p50.toFixed(2)} ms, p99 ${row.latencyMs.p99.toFixed(2)} ms, max ${row.latencyMs.max.toFixed(2)} ms`),
      });
      return;
    case 'propagation':
      sections.propagation = await runPropagation({ kube, product, size, kruise: world.kruise });
      return;
    case 'fan-out':
      // It restarts the product right before its first update (see fan-out.ts).
      sections['fan-out'] = await runFanOut({ kube, product, fleet, size, kubeconfigPath: world.writerKubeconfigPath, planeDir: world.plane.dir, restart: () => restartProduct(world), kruise: world.kruise });
      return;
    case 'memory':
      sections.memory = await runMemory({ product, fleet, idle: world.idle, namespaces: await kube.countNamespaces() });
      return;
    case 'steady-state':
      sections['steady-state'] = await runSteadyState({ product, size, distributions: (await kube.listDistributions()).length });
      return;
    case 'contention':
      sections.contention = await runContention({ kube, product, size });
      return;
    case 'largest':
      sections.largest = await runLargest({ kube, product, fleet, size });
      return;
    case 'large-author':
      sections['large-author'] = await runLargeAuthor({ kube, product, ...size.largeAuthor, concurrency: size.clientConcurrency });
      return;
    case 'scale': {
      // It restarts the product: the new process is the one later sections and the teardown see.
      const { plane, writerKubeconfigPath } = world;
      const scaled = await runScale({ kube, product, size, planeDir: plane.dir, kubeconfigPath: writerKubeconfigPath, start: () => startProduct(plane.kubeConfig, writerKubeconfigPath, { replacing: product }) });
      world.product = scaled.product;
      sections.scale = scaled.result;
      return;
    }
    case 'metrics-flood': {
      // Restarted with RD_METRICS_AUTH, as in a cluster: later sections and the teardown see this process.
      await restartProduct(world, { metricsAuth: true });
      sections['metrics-flood'] = await runMetricsFlood({ kube, product: world.product, size });
      return;
    }
  }
}

/** Runs a section and prints it; a failed peer leaves the section's own rows standing and fails it all the same. */
async function runReported(name: SectionName, world: World, sections: SectionResults): Promise<void> {
  await runSection(name, world, sections);
  console.log(`${renderSection(name, sections)}\n`);
  const peer = peerOf(name, sections);
  if (peer?.state === 'failed') throw new Error(`the OpenKruise peer failed: ${peer.reason}`);
}

/** A run of only some sections is kept apart from the full table of its size; one section's run is named after it. */
function tableName(size: string, order: readonly string[]): string {
  if (order.length === 1) return `${size}-${order[0] ?? ''}`;
  return order.length === SECTIONS.length && order.every((name) => (SECTIONS as readonly string[]).includes(name)) ? size : `${size}-partial`;
}

async function main(): Promise<number> {
  const args = parseBenchArgs(process.argv.slice(2));
  const outDir = args.outDir ?? fileURLToPath(new URL('./results', import.meta.url));
  const order = [...SECTIONS, ...OPTIONAL_SECTIONS].filter((s) => args.sections.includes(s));
  const result: BenchResult = { size: args.size.name, startedAt: new Date().toISOString(), sections: {}, failures: [] };
  const jsonFile = `${result.startedAt.replace(/[:.]/g, '-')}.json`;
  const save = (): Promise<string> => writeJson(outDir, jsonFile, result);
  let plane: ControlPlane | undefined;
  let product: Product | undefined;
  let world: World | undefined;

  say(`size ${args.size.name}, sections ${order.join(', ')}`);
  try {
    say('building the product (npm run build)');
    await buildProduct();
    plane = await startControlPlane({ log: (line) => say(line), beforeControllerManager: (kc) => applyManifestFiles(kc, [CRD_DIR]) });
    const kube = new BenchKube(plane.kubeConfig);
    result.machine = await machineInfo(plane.kubeConfig);
    console.log(`${renderMachine(result.machine)}\n`);
    const writerKubeconfigPath = await writeWriterKubeconfig(plane.kubeConfig, plane.dir);
    product = await startProduct(plane.kubeConfig, writerKubeconfigPath);
    world = { plane, writerKubeconfigPath, kube, fleet: new Fleet(kube, args.size.clientConcurrency), size: args.size, product, idle: await product.memory(), kruise: args.kruise };

    for (const name of order) {
      const started = performance.now();
      say(`${name}: started`);
      try {
        await runReported(name, world, result.sections);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        result.failures.push({ section: name, message });
        say(`${name}: FAILED: ${message}`);
      }
      say(`${name}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      await save();
    }
  } catch (error) {
    result.failures.push({ section: 'setup', message: error instanceof Error ? error.message : String(error) });
    say(`setup FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    world?.kube.close();
    await stopAll(latest(world, product), plane, result);
  }

  result.finishedAt = new Date().toISOString();
  result.loadAverageAtEnd = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  const report = renderReport(result, order);
  console.log(report);
  say(`results: ${await save()}, ${await writeMarkdown(outDir, tableName(result.size, order), report)}`);
  return result.failures.length > 0 ? 1 : 0;
}

/** The product running now: a section may have replaced the one started first (see 'scale'). */
function latest(world: World | undefined, started: Product | undefined): Product | undefined {
  return world?.product ?? started;
}

async function stopAll(product: Product | undefined, plane: ControlPlane | undefined, result: BenchResult): Promise<void> {
  for (const [what, stop] of [
    ['product', () => product?.stop()],
    ['control plane', () => plane?.stop()],
  ] as const) {
    try {
      await stop();
    } catch (error) {
      result.failures.push({ section: 'teardown', message: `${what}: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
