// Benchmark sizes. `smoke` is what CI runs (about 3-4 minutes on a 2-core machine, half a minute of
// it the fan-out's OpenKruise peer), `default` (about 28 minutes there, half of it the 10,000 namespaces of the last section) is the workload docs/performance.md quotes: 10 distributions x 100 namespaces
// created at 5/s, then one distribution over 500 namespaces (1,500 copies over 600 namespaces),
// then 5 ObjectSyncs x 1,000 destinations (5,000 copies) rewritten beside an unrelated change,
// the largest distribution, then 10,000 listed namespace names admitted for authors RBAC allows there;
// `large` (fan-out over 3,000 namespaces) is for bigger machines. The largest distribution is the same at every size (the CRD's
// bounds); sizes change only how often it is measured and over how many namespaces.
import { parseArgs } from 'node:util';

export type SizeName = 'smoke' | 'default' | 'large' | 'xl';
// contention, largest and large-author last: their objects are gone when they end, but memory and steady state must not count them.
// large-author very last: the namespace controller takes minutes to delete its namespaces (10,000 at default size), work
// that would run beside any section after it.
export const SECTIONS = ['admission', 'propagation', 'fan-out', 'memory', 'steady-state', 'contention', 'largest', 'large-author'] as const;
/** Run only when named in `--only`: they take long and leave a cluster no other section should share. */
export const OPTIONAL_SECTIONS = ['scale', 'metrics-flood'] as const;
export type SectionName = (typeof SECTIONS)[number] | (typeof OPTIONAL_SECTIONS)[number];

export interface LoadStep {
  /** Requests per second over all connections, evenly spaced (open loop). */
  rate: number;
  connections: number;
}

export interface BenchSize {
  name: SizeName;
  /**
   * `podSteps`: the pod webhooks and their trivial admission route only, in `podRounds`
   * interleaved rounds of `podRoundSeconds` each (after a warm-up each), whose response times are
   * pooled: a p99 compared to within a millisecond must not hang on one row's luck.
   */
  admission: {
    steps: LoadStep[];
    podSteps: LoadStep[];
    podRounds: number;
    podRoundSeconds: number;
    durationSeconds: number;
    warmupSeconds: number;
    /** The crowded pod mutation rows: injecting distributions that target another namespace, each excluding this many names. */
    crowd: { distributions: number; excludedNames: number };
  };
  /** Namespaces created at a fixed rate while `distributions` select them; the same by OpenKruise's kruise-manager on its own plane (unless --no-kruise). */
  propagation: { namespaces: number; distributions: number; ratePerSecond: number };
  /**
   * Namespaces one distribution targets: created `createRounds` times (deleted in between), then
   * updated `firstRounds` times each right after a restart (the first update after a start,
   * reported apart), then `warmUpRounds` times (reported, not counted), then `rounds` times; each
   * round by the product and by each client-go loop shape, and the same by OpenKruise's
   * kruise-manager on its own plane (unless --no-kruise). Each figure is the median of its rounds:
   * a single create or first update is as noisy as any one round.
   */
  fanOut: { namespaces: number; createRounds: number; firstRounds: number; warmUpRounds: number; rounds: number };
  /** How long the converged product is watched doing nothing (periodic sweeps included). */
  steadyState: { idleSeconds: number };
  /**
   * `objectSyncs` ObjectSyncs, each copying its source Secret to the same `destinationsPerSync`
   * namespaces, rewritten `rounds` times while an unrelated distribution changes.
   */
  contention: { objectSyncs: number; destinationsPerSync: number; rounds: number };
  /**
   * One distribution listing `namespaces` names, each namespace granting its author (by a
   * RoleBinding) what the copies need; created and label-updated `rounds` times through the API
   * server by that author and by one granted cluster-wide.
   */
  largeAuthor: { namespaces: number; rounds: number };
  /**
   * `--only scale`: `namespaces` namespaces selected by 10 ConfigMap distributions and one Secret
   * distribution; `newNamespaces` more created at `probeRatePerSecond` at rest and again during
   * an update of every template.
   */
  scale: { namespaces: number; newNamespaces: number; probeRatePerSecond: number };
  /**
   * The largest distribution: admission reviews POSTed (each endpoint), the fleet namespaces the
   * stored one targets, and how many times it and its small baseline are created.
   */
  largest: { admissionRequests: number; namespaces: number; rounds: number };
  /**
   * `--only metrics-flood`: /metrics flooded with random bearer tokens for `seconds` (at most
   * `maxScrapes`) on `connections` connections, at `pacedPerSecond` and then as fast as they go;
   * `probes` namespaces created in each phase.
   */
  metricsFlood: { seconds: number; connections: number; maxScrapes: number; probes: number; pacedPerSecond: number };
  /** Namespaces and objects created at once by the bench itself. */
  clientConcurrency: number;
}

const LARGE: BenchSize = {
  name: 'large',
  admission: {
    steps: [{ rate: 200, connections: 16 }, { rate: 1000, connections: 32 }, { rate: 2000, connections: 64 }],
    podSteps: [{ rate: 500, connections: 16 }],
    podRounds: 4,
    podRoundSeconds: 10,
    durationSeconds: 30,
    warmupSeconds: 5,
    crowd: { distributions: 100, excludedNames: 10_000 },
  },
  propagation: { namespaces: 500, distributions: 10, ratePerSecond: 10 },
  fanOut: { namespaces: 3000, createRounds: 3, firstRounds: 3, warmUpRounds: 2, rounds: 5 },
  steadyState: { idleSeconds: 90 },
  contention: { objectSyncs: 10, destinationsPerSync: 1000, rounds: 3 },
  largeAuthor: { namespaces: 10_000, rounds: 3 },
  scale: { namespaces: 20_000, newNamespaces: 20, probeRatePerSecond: 2 },
  largest: { admissionRequests: 30, namespaces: 300, rounds: 3 },
  metricsFlood: { seconds: 30, connections: 32, maxScrapes: 300_000, probes: 30, pacedPerSecond: 1100 },
  clientConcurrency: 32,
};

const SIZES: Record<SizeName, BenchSize> = {
  smoke: {
    name: 'smoke',
    admission: { steps: [{ rate: 100, connections: 8 }, { rate: 300, connections: 16 }], podSteps: [{ rate: 200, connections: 8 }], podRounds: 1, podRoundSeconds: 4, durationSeconds: 4, warmupSeconds: 1, crowd: { distributions: 10, excludedNames: 1000 } },
    propagation: { namespaces: 20, distributions: 10, ratePerSecond: 10 },
    fanOut: { namespaces: 50, createRounds: 1, firstRounds: 1, warmUpRounds: 1, rounds: 2 },
    steadyState: { idleSeconds: 12 },
    contention: { objectSyncs: 1, destinationsPerSync: 200, rounds: 1 },
    largeAuthor: { namespaces: 300, rounds: 1 },
    scale: { namespaces: 200, newNamespaces: 5, probeRatePerSecond: 2 },
    largest: { admissionRequests: 10, namespaces: 20, rounds: 1 },
    metricsFlood: { seconds: 10, connections: 32, maxScrapes: 100_000, probes: 10, pacedPerSecond: 1100 },
    clientConcurrency: 16,
  },
  default: {
    name: 'default',
    admission: { steps: [{ rate: 200, connections: 16 }, { rate: 1000, connections: 32 }], podSteps: [{ rate: 500, connections: 16 }], podRounds: 4, podRoundSeconds: 10, durationSeconds: 20, warmupSeconds: 3, crowd: { distributions: 100, excludedNames: 10_000 } },
    propagation: { namespaces: 100, distributions: 10, ratePerSecond: 5 },
    fanOut: { namespaces: 500, createRounds: 3, firstRounds: 3, warmUpRounds: 8, rounds: 15 },
    steadyState: { idleSeconds: 60 },
    contention: { objectSyncs: 5, destinationsPerSync: 1000, rounds: 3 },
    largeAuthor: { namespaces: 10_000, rounds: 3 },
    scale: { namespaces: 10_000, newNamespaces: 20, probeRatePerSecond: 2 },
    largest: { admissionRequests: 20, namespaces: 100, rounds: 3 },
    metricsFlood: { seconds: 30, connections: 32, maxScrapes: 300_000, probes: 30, pacedPerSecond: 1100 },
    clientConcurrency: 24,
  },
  large: LARGE,
  // large, with the fan-out over 10,000 namespaces (`--size xl --only fan-out`).
  xl: { ...LARGE, name: 'xl', fanOut: { namespaces: 10_000, createRounds: 1, firstRounds: 1, warmUpRounds: 1, rounds: 5 } },
};

export interface BenchArgs {
  size: BenchSize;
  sections: SectionName[];
  /** Where results go; default bench/results. */
  outDir: string | undefined;
  /** Whether the fan-out runs OpenKruise's kruise-manager as its peer (`--no-kruise`: not, where it cannot be built). */
  kruise: boolean;
}

function isSizeName(value: string): value is SizeName {
  return value in SIZES;
}

function isSection(value: string): value is SectionName {
  return ([...SECTIONS, ...OPTIONAL_SECTIONS] as readonly string[]).includes(value);
}

/**
 * `--size smoke|default|large|xl`, `--only admission,propagation` (default: every section but the
 * optional ones), `--out DIR`, `--scale-namespaces N` (the scale section over N namespaces instead
 * of the size's, for a shorter look at what grows with them), `--no-kruise` (the fan-out without
 * its OpenKruise peer; the report says it was skipped).
 */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: { size: { type: 'string', default: 'default' }, only: { type: 'string' }, out: { type: 'string' }, 'scale-namespaces': { type: 'string' }, 'no-kruise': { type: 'boolean', default: false } },
    strict: true,
  });
  const size = values.size ?? 'default';
  if (!isSizeName(size)) throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}, got ${size}`);
  const only = values.only?.split(',').map((s) => s.trim()).filter((s) => s !== '') ?? [...SECTIONS];
  const unknown = only.filter((s) => !isSection(s));
  if (unknown.length > 0) throw new Error(`--only: unknown section(s) ${unknown.join(', ')}; known: ${[...SECTIONS, ...OPTIONAL_SECTIONS].join(', ')}`);
  const scaleNamespaces = values['scale-namespaces'];
  const kruise = values['no-kruise'] !== true;
  if (scaleNamespaces === undefined) return { size: SIZES[size], sections: only.filter(isSection), outDir: values.out, kruise };
  const namespaces = Number(scaleNamespaces);
  if (!Number.isInteger(namespaces) || namespaces < 1) throw new Error(`--scale-namespaces must be a whole number above 0, got ${scaleNamespaces}`);
  return { size: { ...SIZES[size], scale: { ...SIZES[size].scale, namespaces } }, sections: only.filter(isSection), outDir: values.out, kruise };
}
