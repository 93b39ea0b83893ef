// The load generator, in a process of its own so that it does not share an event loop with the
// server it measures. Reads a LoadSpec (JSON) from argv[2], runs autocannon at a fixed overall
// rate (after a short warm-up whose numbers are dropped), and prints one LoadResult JSON line.
// Every response time is kept (autocannon's own histogram has 1 ms resolution; loopback
// admission takes about that), so percentiles come from bench/stats.ts.
import autocannon from 'autocannon';
import { summarize, type Summary } from './stats.js';

export interface LoadSpec {
  url: string;
  body: string;
  connections: number;
  rate: number;
  durationSeconds: number;
  warmupSeconds: number;
  /** Also return every 2xx response time, so that runs can be pooled. */
  keepSamples?: boolean;
}

export interface LoadResult {
  latencyMs: Summary;
  requests: number;
  achievedRps: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Every 2xx response time, when the spec asks for them. */
  samplesMs?: number[];
}

function run(spec: LoadSpec, durationSeconds: number, onResponse?: (statusCode: number, ms: number) => void): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: spec.body,
        connections: spec.connections,
        overallRate: spec.rate,
        duration: durationSeconds,
        timeout: 10,
      },
      (error, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)),
    );
    if (onResponse) instance.on('response', (_client, statusCode, _bytes, responseTime) => onResponse(statusCode, responseTime));
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '') as LoadSpec;
  if (spec.warmupSeconds > 0) await run(spec, spec.warmupSeconds);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const result = await run(spec, spec.durationSeconds, (statusCode, ms) => {
    statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
    if (statusCode >= 200 && statusCode < 300) latencies.push(ms);
  });
  const output: LoadResult = {
    latencyMs: summarize(latencies),
    requests: result.requests.total,
    achievedRps: result.requests.total / spec.durationSeconds,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    statusCodes,
    ...(spec.keepSamples === true ? { samplesMs: latencies } : {}),
  };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

// The parent closes our stdin when it goes away, whatever the reason: never outlive it.
process.stdin.on('end', () => process.exit(2));
process.stdin.resume();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
