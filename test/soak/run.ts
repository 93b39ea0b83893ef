// npm run soak -- --minutes N --seed S [--replicas pods|processes] [--out DIR]
// A chaos soak: a control plane of its own, two replicas of the product (pods on a node of its own
// as root, else processes), seeded random operations and faults for N minutes, an independent
// checker after each quiet period. Prints the report and writes it to
// bench/results/soak-<N>m-seed<S>.md; exits 1 if any promise was broken.
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../control-plane/index.js';
import { parseSoakArgs, UsageError, type SoakArgs } from './args.js';
import { Ledger } from './ledger.js';
import { emptyModel } from './model.js';
import { Prng } from './prng.js';
import { emptyTally, renderReport, requestTotals, type Convergence, type SoakResult } from './report.js';
import { runRound, sampleWebhooks, type SoakState } from './rounds.js';
import type { ReplicaMode } from './args.js';
import { startPodWorld } from './pod-world.js';
import { LEASE, OWN_NAMESPACE, startProcessWorld, type SoakWorld } from './setup.js';
import type { ProductSummary } from './soak-replicas.js';
import { checkLeaks } from './check-leaks.js';

async function startWorld(log: (line: string) => void, mode: ReplicaMode): Promise<SoakWorld> {
  const logDir = await mkdtemp(join(tmpdir(), 'rd-soak-logs-'));
  return mode === 'pods' ? startPodWorld(log, logDir) : startProcessWorld(log, logDir);
}

const say = (line: string): void => console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

function sumRequests(requests: ReadonlyMap<string, Record<string, number>>): Record<string, number> {
  const total: Record<string, number> = {};
  for (const counts of requests.values()) for (const [verb, n] of Object.entries(counts)) total[verb] = (total[verb] ?? 0) + n;
  return total;
}

async function soak(world: SoakWorld, args: SoakArgs, state: SoakState): Promise<{ convergences: Convergence[]; product: ProductSummary }> {
  const convergences: Convergence[] = [];
  const until = Date.now() + args.minutes * 60_000;
  await sampleWebhooks(state);
  while (Date.now() < until) convergences.push(await runRound(state));
  // A graceful stop exits 0 (README: "Rolling updates and faults"); what the replicas printed
  // until then is checked too.
  const stopped = await world.replicas.stopGracefully();
  const leaks = checkLeaks(state.ledger.values, await world.replicas.newLogLines());
  state.ledger.report([...stopped, ...leaks], state.round, state.step);
  return { convergences, product: await world.replicas.summary() };
}

async function main(): Promise<number> {
  const args = parseSoakArgs(process.argv.slice(2));
  const startedAt = new Date();
  const ledger = new Ledger(OWN_NAMESPACE);
  say(`seed ${args.seed}, ${args.minutes} min, replicas as ${args.replicas}`);
  const world = await startWorld(say, args.replicas);
  const setupSeconds = (Date.now() - startedAt.getTime()) / 1000;
  const journal = createWriteStream(join(world.logDir, 'ops.jsonl'));
  say(`setup done in ${setupSeconds.toFixed(0)} s; replica logs in ${world.logDir}`);
  const state: SoakState = {
    world,
    faults: { plane: world.plane, apiProxy: world.apiProxy, replicas: world.replicas, coordination: world.coordination, lease: LEASE, log: say },
    model: emptyModel(),
    prng: new Prng(args.seed),
    ledger,
    step: 0,
    round: 0,
    requests: new Map(),
    webhookSamples: [],
    sampling: Promise.resolve(),
    log: say,
    journal: (line) => journal.write(`${line}\n`),
    pods: [],
    tally: emptyTally(),
  };
  let outcome: { convergences: Convergence[]; product: ProductSummary };
  try {
    outcome = await soak(world, args, state);
  } finally {
    await world.stop();
    journal.end();
  }
  const { convergences, product } = outcome;
  const result: SoakResult = {
    seed: args.seed,
    minutes: args.minutes,
    startedAt: startedAt.toISOString(),
    setupSeconds,
    wallSeconds: (Date.now() - startedAt.getTime()) / 1000,
    rounds: state.round,
    steps: state.step,
    operations: [...ledger.operations],
    failures: ledger.failures,
    convergences,
    violations: [...ledger.violations.values()],
    product,
    apiRequests: requestTotals(sumRequests(state.requests)),
    logDir: world.logDir,
    settings: world.settings,
    tally: state.tally,
  };
  const report = renderReport(result);
  console.log(report);
  const outDir = args.outDir ?? join(REPO_ROOT, 'bench', 'results');
  await mkdir(outDir, { recursive: true });
  const file = join(outDir, `soak-${args.minutes}m-seed${args.seed}.md`);
  await writeFile(file, report);
  say(`report: ${file}`);
  return result.violations.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof UsageError ? error.message : error);
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
