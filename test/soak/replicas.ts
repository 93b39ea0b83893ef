// `--replicas processes`: two replicas of the product as local processes (`node dist/main.js` with
// the image's Node.js flags, local mode, leader election on), behind one TCP proxy that routes new
// connections to the replicas whose /readyz answers, as a Service routes to ready pods. Every line
// they print is kept (for the leak check) and written to a file per replica; every exit is
// recorded with whether the soak caused it; one that exited is replaced, as the kubelet restarts a
// container.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { registerTeardown } from '../control-plane/exit-hooks.js';
import { startTcpProxy, type TcpProxy } from '../e2e/support/tcp-proxy.js';
import type { TextSource } from './check-leaks.js';
import type { ProductSummary, ReplicaRef, SoakReplicas } from './soak-replicas.js';
import { violation, type Violation } from './violation.js';

export interface Exit {
  identity: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The soak killed or stopped it on purpose. */
  expected: boolean;
  at: number;
}

/** The `resource_distributor_api_requests_total` samples of a replica's /metrics text, by `<verb> <resource>`. */
export function apiRequestCounts(metrics: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, labels = '', value = '0'] of metrics.matchAll(/^resource_distributor_api_requests_total\{([^}]*)\} (\S+)$/gm)) {
    const key = `${/verb="([^"]*)"/.exec(labels)?.[1] ?? ''} ${/resource="([^"]*)"/.exec(labels)?.[1] ?? ''}`;
    counts[key] = (counts[key] ?? 0) + Number(value);
  }
  return counts;
}

export interface Replica {
  identity: string;
  slot: number;
  child: ChildProcess;
  port: number;
  lines: string[];
  /** Set before the soak kills or stops it, so that its exit is not counted as a crash. */
  expectExit: boolean;
  exited: Promise<Exit>;
}

export interface ReplicaOptions {
  entry: string;
  nodeFlags: readonly string[];
  env: Record<string, string>;
  logDir: string;
}

/** GET https://<host>:<port><path> of a replica, or undefined when nothing answered in time. */
export function get(port: number, path: string, timeoutMs: number, host = '127.0.0.1', headers: Record<string, string> = {}): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    // A replica the soak runs: this probes, it does not trust.
    const req = request({ host, port, path, headers, rejectUnauthorized: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

function portOf(line: string): number {
  try {
    const parsed = JSON.parse(line) as { port?: unknown };
    return typeof parsed.port === 'number' ? parsed.port : 0;
  } catch {
    return 0;
  }
}

export class ProcessReplicas implements SoakReplicas {
  readonly mode = 'processes' as const;
  readonly live: (Replica | undefined)[] = [undefined, undefined];
  readonly exits: Exit[] = [];
  readonly all: Replica[] = [];
  private readonly ready = new Set<Replica>();
  private probing = true;
  private probes: Promise<void> | undefined;
  private generation = 0;
  private turn = 0;

  private constructor(
    private readonly options: ReplicaOptions,
    readonly proxy: TcpProxy,
  ) {}

  static async create(options: Omit<ReplicaOptions, 'env'> & { env: (proxyPort: number) => Record<string, string> }): Promise<ProcessReplicas> {
    const routing: { to?: ProcessReplicas } = {};
    const proxy = await startTcpProxy(() => routing.to?.pickReady());
    const replicas = new ProcessReplicas({ ...options, env: options.env(proxy.port) }, proxy);
    routing.to = replicas;
    replicas.probes = replicas.probeReadiness();
    // Interrupted (Ctrl-C, a CI timeout) or failing: no replica outlives the soak.
    const unregister = registerTeardown({
      stop: () => replicas.close(),
      killNow: () => {
        for (const r of replicas.live) r?.child.kill('SIGKILL');
      },
    });
    replicas.unregister = unregister;
    return replicas;
  }

  private pickReady(): number | undefined {
    const candidates = this.live.filter((r): r is Replica => r !== undefined && this.ready.has(r));
    return candidates.length === 0 ? undefined : candidates[this.turn++ % candidates.length]?.port;
  }

  /** Keeps `ready` in step with each live replica's /readyz, every 100 ms (a Service's endpoints). */
  private async probeReadiness(): Promise<void> {
    while (this.probing) {
      await Promise.all(
        this.live.map(async (replica) => {
          if (!replica) return;
          if ((await get(replica.port, '/readyz', 1_000))?.status === 200) this.ready.add(replica);
          else this.ready.delete(replica);
        }),
      );
      await sleep(100);
    }
  }

  isReady(replica: Replica): boolean {
    return this.ready.has(replica);
  }

  /** Starts a replica in `slot` and resolves once it is ready behind the proxy. */
  async start(slot: number, timeoutMs = 60_000): Promise<Replica> {
    const identity = `soak-${slot === 0 ? 'a' : 'b'}${this.generation++}`;
    const child = spawn(process.execPath, [...this.options.nodeFlags, this.options.entry], {
      env: { ...process.env, ...this.options.env, POD_NAME: identity },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const file = createWriteStream(join(this.options.logDir, `${identity}.log`));
    const lines: string[] = [];
    let listening: (port: number) => void = () => undefined;
    const port = new Promise<number>((resolve) => (listening = resolve));
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        lines.push(line);
        file.write(`${line}\n`);
        if (line.includes('"admission server listening"')) listening(portOf(line));
      });
    }
    const replica: Replica = { identity, slot, child, port: 0, lines, expectExit: false, exited: undefined as unknown as Promise<Exit> };
    replica.exited = new Promise<Exit>((resolve) =>
      child.once('exit', (code, signal) => {
        const exit: Exit = { identity, code, signal, expected: replica.expectExit, at: Date.now() };
        this.exits.push(exit);
        this.ready.delete(replica);
        file.end();
        resolve(exit);
      }),
    );
    const early = replica.exited.then((exit) => Promise.reject(new Error(`${identity} exited (${String(exit.code ?? exit.signal)}) during its start`)));
    early.catch(() => undefined);
    replica.port = await Promise.race([port, early]);
    this.live[slot] = replica;
    this.all.push(replica);
    const deadline = Date.now() + timeoutMs;
    while (!this.ready.has(replica)) {
      if (Date.now() > deadline) throw new Error(`${identity} not ready within ${timeoutMs} ms`);
      await Promise.race([sleep(50), early]);
    }
    return replica;
  }

  /** SIGKILL (as the OOM killer or a node failure would), then waits for the exit. */
  private async killProcess(replica: Replica): Promise<void> {
    replica.expectExit = true;
    replica.child.kill('SIGKILL');
    await replica.exited;
    if (this.live[replica.slot] === replica) this.live[replica.slot] = undefined;
  }

  /** SIGTERM, as a rolling update stops a pod; resolves with its exit. */
  async stop(replica: Replica): Promise<Exit> {
    replica.expectExit = true;
    replica.child.kill('SIGTERM');
    const timer = setTimeout(() => replica.child.kill('SIGKILL'), 30_000);
    const exit = await replica.exited;
    clearTimeout(timer);
    return exit;
  }

  /** The `resource_distributor_api_requests_total` samples of a replica's /metrics, by `<verb> <resource>`. */
  private async apiRequestsOf(replica: Replica): Promise<Record<string, number> | undefined> {
    const answer = await get(replica.port, '/metrics', 2_000);
    return answer?.status === 200 ? apiRequestCounts(answer.body) : undefined;
  }

  private closing: Promise<Exit[]> | undefined;
  private unregister: () => void = () => undefined;
  private readonly linesChecked = new Map<Replica, number>();

  /** Stops every live replica (SIGTERM) and the proxy; once, however often it is called. */
  private stopAll(): Promise<Exit[]> {
    return (this.closing ??= this.closeOnce());
  }

  current(): Promise<ReplicaRef[]> {
    return Promise.resolve(this.live.filter((r): r is Replica => r !== undefined));
  }

  private liveOne(replica: ReplicaRef): Replica | undefined {
    return this.live.find((r) => r?.identity === replica.identity);
  }

  /** SIGKILL, then a new process in its slot. */
  async kill(replica: ReplicaRef): Promise<void> {
    const victim = this.liveOne(replica);
    if (!victim) return;
    await this.killProcess(victim);
    await this.start(victim.slot);
  }

  async freeze(replica: ReplicaRef, ms: number): Promise<void> {
    const victim = this.liveOne(replica);
    if (!victim?.child.pid) return;
    victim.child.kill('SIGSTOP');
    await sleep(ms);
    victim.child.kill('SIGCONT');
    // Recovered once it answers /readyz again (its endpoint is back).
    const deadline = Date.now() + 30_000;
    while (!this.isReady(victim) && victim.child.exitCode === null && Date.now() < deadline) await sleep(50);
  }

  /** Replicas that exited on their own are replaced, as the kubelet restarts a container. */
  async heal(): Promise<void> {
    for (const slot of [0, 1]) {
      const replica = this.live[slot];
      if (replica && replica.child.exitCode === null && replica.child.signalCode === null) continue;
      await this.start(slot);
    }
  }

  async apiRequests(): Promise<Map<string, Record<string, number>>> {
    const counts = new Map<string, Record<string, number>>();
    for (const replica of this.live) {
      if (!replica) continue;
      const found = await this.apiRequestsOf(replica);
      if (found) counts.set(replica.identity, found);
    }
    return counts;
  }

  newLogLines(): Promise<TextSource[]> {
    return Promise.resolve(
      this.all.map((replica) => {
        const from = this.linesChecked.get(replica) ?? 0;
        this.linesChecked.set(replica, replica.lines.length);
        return { where: `log of ${replica.identity}`, lines: replica.lines.slice(from) };
      }),
    );
  }

  unexpectedExits(): Promise<Violation[]> {
    return Promise.resolve(this.exits.filter((e) => !e.expected).map((e) => violation('replica-exited', e.identity, `exited with ${String(e.code ?? e.signal)} without being killed`)));
  }

  /** A graceful stop exits 0 (README: "Rolling updates and faults"). */
  async stopGracefully(): Promise<Violation[]> {
    const stopped = await this.stopAll();
    return stopped.filter((exit) => exit.code !== 0).map((exit) => violation('replica-stop-failed', exit.identity, `exited with ${String(exit.code ?? exit.signal)} on SIGTERM`));
  }

  summary(): Promise<ProductSummary> {
    const crashed = this.exits.filter((e) => !e.expected);
    return Promise.resolve({ mode: this.mode, started: this.all.length, endedBySoak: this.exits.length - crashed.length, unexpected: crashed.map((e) => `${e.identity}: ${String(e.code ?? e.signal)}`) });
  }

  async close(): Promise<void> {
    await this.stopAll();
  }

  private async closeOnce(): Promise<Exit[]> {
    const stopped = await Promise.all(this.live.filter((r): r is Replica => r !== undefined).map((r) => this.stop(r)));
    this.probing = false;
    await this.probes;
    await this.proxy.close();
    this.unregister();
    return stopped;
  }
}
