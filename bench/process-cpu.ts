// CPU time of the processes sharing this machine (the product, kube-apiserver, etcd), from /proc:
// on a machine whose cores the control plane and the product share, a write path's speed is
// decided by who spends the CPU, so the bench reports it beside the times.
import { readdir, readFile } from 'node:fs/promises';
import { median } from './stats.js';

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** The pid of this control plane's server (its command line names the plane's directory) whose binary is `binary`; 0 if none. */
export async function serverPid(planeDir: string, binary: 'kube-apiserver' | 'etcd'): Promise<number> {
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const [command = '', ...args] = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    const name = command.split('/').pop() ?? '';
    if ((name === binary || name.startsWith(`${binary}-v`)) && args.some((arg) => arg.includes(planeDir))) return Number(pid);
  }
  return 0;
}

/** User plus system CPU time of a process since its start, in ms (its own threads, not its children). */
export function cpuMsOfStat(stat: string): number {
  // Fields after the command (which may hold spaces and parentheses): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

export async function processCpuMs(pid: number): Promise<number> {
  if (pid <= 0) return Number.NaN;
  return cpuMsOfStat(await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''));
}

/** The whole machine's busy CPU time (every core, all but idle and iowait) from /proc/stat's first line, in ms. */
export function machineBusyMsOfStat(stat: string): number {
  const [, ...ticks] = (stat.split('\n')[0] ?? '').trim().split(/\s+/).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return ((user + nice + system + irq + softirq + steal) * 1000) / TICKS_PER_SECOND;
}

export interface CpuSpent {
  product: number;
  apiserver: number;
  etcd: number;
  /** Every process on the machine (the bench, the controller manager and the baseline loop included). */
  machine: number;
}

export interface CpuPids {
  product: number;
  apiserver: number;
  etcd: number;
}

async function sample(pids: CpuPids): Promise<CpuSpent> {
  return {
    product: await processCpuMs(pids.product),
    apiserver: await processCpuMs(pids.apiserver),
    etcd: await processCpuMs(pids.etcd),
    machine: machineBusyMsOfStat(await readFile('/proc/stat', 'utf8')),
  };
}

/** Starts counting; the function returned gives the CPU spent by each since then. */
export async function startCpuMeter(pids: CpuPids): Promise<() => Promise<CpuSpent>> {
  const before = await sample(pids);
  return async () => {
    const after = await sample(pids);
    return { product: after.product - before.product, apiserver: after.apiserver - before.apiserver, etcd: after.etcd - before.etcd, machine: after.machine - before.machine };
  };
}

/** Field by field, the median of several rounds. */
export function medianCpu(rounds: readonly CpuSpent[]): CpuSpent {
  const of = (field: keyof CpuSpent): number => median(rounds.map((round) => round[field]));
  return { product: of('product'), apiserver: of('apiserver'), etcd: of('etcd'), machine: of('machine') };
}
