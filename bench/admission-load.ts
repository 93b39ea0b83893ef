// The webhooks' load generator: test/control-plane/admission-load (Go), a process of its own so
// that it shares neither an event loop nor a garbage collector with the server it measures. It
// sends at a constant arrival rate (open loop) as an API server does when objects arrive, not in
// bursts, and returns every 2xx response time; percentiles come from bench/stats.ts.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBenchProgram } from '../test/control-plane/index.js';
import { summarize, type Summary } from './stats.js';

export interface LoadSpec {
  url: string;
  body: string;
  /** PEM of the CA the server's certificate chains to (the generator verifies it). */
  ca: string;
  connections: number;
  /** Requests per second, evenly spaced. */
  rate: number;
  durationSeconds: number;
  warmupSeconds: number;
}

export interface LoadResult {
  latencyMs: Summary;
  requests: number;
  achievedRps: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** Every 2xx response time, so that runs can be pooled. */
  samplesMs: number[];
}

interface GeneratorOutput {
  requests: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  achievedRps: number;
  samplesMs: number[];
  firstError: string;
}

/**
 * The generator may use one core: on a small machine the server under test must not lose its own
 * core to the load, which in a cluster comes from another machine.
 */
const GENERATOR_ENV = { GOMAXPROCS: '1' };

export function ensureLoadGenerator(): Promise<string> {
  return ensureBenchProgram('admission-load', { log: (line) => console.error(`[bench] ${line}`) });
}

export async function runLoad(binary: string, spec: LoadSpec): Promise<LoadResult> {
  const dir = await mkdtemp(join(tmpdir(), 'rd-admission-load-'));
  try {
    const body = join(dir, 'body.json');
    const ca = join(dir, 'ca.pem');
    await Promise.all([writeFile(body, spec.body), writeFile(ca, spec.ca)]);
    const args = [
      `-url=${spec.url}`,
      `-body=${body}`,
      `-ca=${ca}`,
      `-rate=${spec.rate}`,
      `-connections=${spec.connections}`,
      `-duration=${spec.durationSeconds}s`,
      `-warmup=${spec.warmupSeconds}s`,
    ];
    const timeout = (spec.durationSeconds + spec.warmupSeconds + 60) * 1000;
    const { stdout } = await promisify(execFile)(binary, args, { env: { ...process.env, ...GENERATOR_ENV }, timeout, maxBuffer: 256 * 1024 * 1024 });
    const output = JSON.parse(stdout) as GeneratorOutput;
    if (output.firstError !== '') console.error(`[bench] ${spec.url}: ${output.errors} request errors, the first: ${output.firstError}`);
    return {
      latencyMs: summarize(output.samplesMs),
      requests: output.requests,
      achievedRps: output.achievedRps,
      errors: output.errors,
      timeouts: output.timeouts,
      non2xx: output.non2xx,
      samplesMs: output.samplesMs,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
