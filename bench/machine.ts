import { readFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { VersionApi, type KubeConfig } from '@kubernetes/client-node';
import { kubernetesVersion } from '../test/control-plane/binaries.js';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  kubernetes: string;
  /** 1-minute load average when the run started: other work on the machine skews every figure. */
  loadAverageAtStart: number;
}

async function cpuModel(): Promise<string> {
  try {
    const text = await readFile('/proc/cpuinfo', 'utf8');
    const line = text.split('\n').find((l) => l.startsWith('model name'));
    if (line) return line.split(':').slice(1).join(':').trim();
  } catch {
    // not Linux: fall back to what Node reports
  }
  return cpus()[0]?.model ?? 'unknown';
}

export async function machineInfo(kc: KubeConfig): Promise<MachineInfo> {
  const version = await kc.makeApiClient(VersionApi).getCode();
  // Binaries built from the Go module carry no version stamp (v0.0.0-master): ask the module instead.
  const kubernetes = version.gitVersion.startsWith('v0.0.0') ? `${await kubernetesVersion()} (built from source)` : version.gitVersion;
  return {
    cpuModel: await cpuModel(),
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    kubernetes,
    loadAverageAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
