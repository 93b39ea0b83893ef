// npx tsx bench/transport.ts [--objects 1000] [--rounds 6] [--parallelism 16,32,64] [--out FILE]
// The same writes through three transports, nothing else running: N ConfigMaps (one per
// namespace) replaced with P writes in flight by the product's own HTTP client (kept-alive
// HTTP/1.1 connections, one request each at a time), by client-go's (the bench's Go write loop:
// one HTTP/2 connection), and by node:http2 (one session). For each: the wall time of a round and
// the CPU per write of kube-apiserver and of the writer itself. Rounds of every transport and
// parallelism alternate, in an order reversed every other round. Tells what the product's write
// path costs the API server compared with client-go's, apart from the controller around it.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { cpuUsage } from 'node:process';
import { parseArgs } from 'node:util';
import { mapBounded } from '../src/bounded.js';
import { createKubeClient, type KubeClient } from '../src/k8s/kube-client.js';
import { connectionFromKubeconfigFile, type Connection } from '../src/k8s/kube-config.js';
import { ensureBenchProgram, startControlPlane } from '../test/control-plane/index.js';
import { BenchKube, numberedNames } from './bench-kube.js';
import { processCpuMs, serverPid } from './process-cpu.js';
import { runGoLoop } from './fan-out.js';
import { median } from './stats.js';

const { values } = parseArgs({
  options: { objects: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '6' }, parallelism: { type: 'string', default: '16,32,64' }, out: { type: 'string' } },
});
const objects = Number(values.objects);
const rounds = Number(values.rounds);
const parallelisms = values.parallelism.split(',').map(Number);

const NAME = 'bench-transport';
const LABEL = 'bench.resource-distributor.io/transport';
const DATA = { 'settings.properties': 'feature.a=on\nfeature.b=off\nlimit=100\n', endpoint: 'https://service-1.example.internal:8443/api' };

/** One round of one transport: its wall time and the writer's own CPU. */
type Writer = (revision: number) => Promise<{ ms: number; cpuMs: number }>;

function configMap(namespace: string, revision: number): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME, namespace, labels: { [LABEL]: 'x' } }, data: { ...DATA, revision: String(revision) } };
}

const path = (namespace: string): string => `/api/v1/namespaces/${namespace}/configmaps/${NAME}`;

/** A writer in this process: one `put` per namespace, `parallelism` at a time, timed with this process's CPU. */
function inProcess(namespaces: readonly string[], parallelism: number, put: (namespace: string, revision: number) => Promise<unknown>): Writer {
  return async (revision) => {
    const cpu = cpuUsage();
    const started = performance.now();
    await mapBounded(namespaces, parallelism, (ns) => put(ns, revision));
    const spent = cpuUsage(cpu);
    return { ms: performance.now() - started, cpuMs: (spent.user + spent.system) / 1000 };
  };
}

function ownPool(connection: Connection, namespaces: readonly string[], parallelism: number): { write: Writer; close(): void } {
  const client: KubeClient = createKubeClient(connection, { maxConnections: parallelism, timeoutMs: 60_000 });
  const write = inProcess(namespaces, parallelism, (ns, revision) => client.request('PUT', path(ns), { body: configMap(ns, revision) }));
  return { write, close: () => client.close() };
}

function nodeHttp2(connection: Connection, namespaces: readonly string[], parallelism: number): { write: Writer; close(): void } {
  const session: ClientHttp2Session = connect(connection.server, { ca: connection.ca, cert: connection.cert, key: connection.key });
  const put = (namespace: string, text: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'PUT', ':path': path(namespace), 'content-type': 'application/json', accept: 'application/json' });
      const chunks: Buffer[] = [];
      let status = 0;
      stream.on('response', (headers) => (status = Number(headers[':status'])));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        // Parsed as the other writers parse their answers, so that their CPU compares.
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (status < 300) resolve();
        else reject(new Error(`PUT ${namespace}: HTTP ${status}`));
      });
      stream.on('error', reject);
      stream.end(text);
    });
  const write = inProcess(namespaces, parallelism, (ns, revision) => put(ns, JSON.stringify(configMap(ns, revision))));
  return { write, close: () => session.close() };
}

function clientGo(binary: string, args: readonly string[], parallelism: number): Writer {
  return async (revision) => {
    const answer = await runGoLoop(binary, [...args, '-concurrency', String(parallelism), '-mode', 'update', '-revision', String(revision)]);
    return { ms: answer.wallMs, cpuMs: answer.cpuMs };
  };
}

interface Samples {
  ms: number[];
  apiserverMs: number[];
  writerMs: number[];
}

function table(results: Map<string, Samples>): string {
  const rows = [...results].map(([name, s]) => {
    const perWrite = (values: number[]): string => `${((median(values) / objects) * 1000).toFixed(0)} µs`;
    return `| ${name} | ${median(s.ms).toFixed(0)} ms (${Math.min(...s.ms).toFixed(0)}-${Math.max(...s.ms).toFixed(0)}) | ${perWrite(s.apiserverMs)} | ${perWrite(s.writerMs)} |`;
  });
  return ['| transport, writes in flight | round (median, min-max) | kube-apiserver CPU per write | writer CPU per write |', '|---|---|---|---|', ...rows].join('\n');
}

async function main(): Promise<void> {
  const plane = await startControlPlane({ log: (line) => console.error(`[control-plane] ${line}`) });
  const closers: (() => void)[] = [];
  try {
    const namespaces = numberedNames('bench-transport', 0, objects);
    await new BenchKube(plane.kubeConfig).createNamespaces(namespaces, {}, 16);
    const binary = await ensureBenchProgram('write-loop', { log: (line) => console.error(`[bench] ${line}`) });
    const dir = await mkdtemp(join(tmpdir(), 'rd-bench-transport-'));
    await writeFile(join(dir, 'namespaces'), `${namespaces.join('\n')}\n`);
    await writeFile(join(dir, 'payload.json'), JSON.stringify(DATA));
    const args = ['-kubeconfig', plane.kubeconfigPath, '-namespaces', join(dir, 'namespaces'), '-name', NAME, '-label', `${LABEL}=x`, '-payload', join(dir, 'payload.json')];
    await runGoLoop(binary, [...args, '-concurrency', '16', '-mode', 'create', '-revision', '1']);
    const connection = connectionFromKubeconfigFile(plane.kubeconfigPath);
    const writers: [string, Writer][] = [];
    for (const p of parallelisms) {
      const pool = ownPool(connection, namespaces, p);
      const h2 = nodeHttp2(connection, namespaces, p);
      closers.push(() => pool.close(), () => h2.close());
      writers.push([`product's client (HTTP/1.1), ${p}`, pool.write], [`client-go (HTTP/2), ${p}`, clientGo(binary, args, p)], [`node:http2, ${p}`, h2.write]);
    }
    const apiserver = await serverPid(plane.dir, 'kube-apiserver');
    let revision = 2;
    // Every writer once before the measured rounds: connections opened, code warmed up.
    for (const [, write] of writers) await write(revision++);
    const results = new Map<string, Samples>(writers.map(([name]) => [name, { ms: [], apiserverMs: [], writerMs: [] }]));
    for (let round = 0; round < rounds; round++) {
      for (const [name, write] of round % 2 === 0 ? writers : [...writers].reverse()) {
        const before = await processCpuMs(apiserver);
        const { ms, cpuMs } = await write(revision++);
        const samples = results.get(name) as Samples;
        samples.ms.push(ms);
        samples.apiserverMs.push((await processCpuMs(apiserver)) - before);
        samples.writerMs.push(cpuMs);
        console.error(`[bench] round ${round + 1}/${rounds}: ${name} ${ms.toFixed(0)} ms`);
      }
    }
    const report = [
      `# Transports: ${objects} ConfigMaps replaced, ${rounds} rounds each`,
      '',
      `Run ${new Date().toISOString()}: \`npx tsx bench/transport.ts --objects ${objects} --rounds ${rounds} --parallelism ${parallelisms.join(',')}\`. See the script's header for the method.`,
      '',
      table(results),
      '',
    ].join('\n');
    console.log(report);
    if (values.out !== undefined) await writeFile(values.out, report);
  } finally {
    for (const close of closers) close();
    await plane.stop();
  }
}

await main();
