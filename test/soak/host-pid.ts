// The host pid of a container's main process, found through the container runtime's cgroup: the
// kubelet (cgroupfs driver) names a container's cgroup after its id, the one its pod's status
// gives (`containerd://<id>`), and the container's main process is pid 1 of its pid namespace
// (the last entry of its NSpid line). Signals sent to that pid from the machine reach the process
// as the OOM killer's or a node failure's would.
import { readdir, readFile } from 'node:fs/promises';

/** `containerd://<id>` (a pod status' containerID) to `<id>`. */
export function containerIdOf(containerID: string): string {
  return containerID.slice(containerID.indexOf('://') + 3);
}

/** The pids of a process in each pid namespace it belongs to, outermost first (the NSpid line of /proc/<pid>/status). */
export function namespacePids(status: string): number[] {
  const line = /^NSpid:\s*(.*)$/m.exec(status)?.[1] ?? '';
  return line.split(/\s+/).filter(Boolean).map(Number);
}

/** Whether a /proc/<pid>/cgroup text puts the process in the cgroup of container `id` (in any hierarchy). */
export function inContainerCgroup(cgroup: string, id: string): boolean {
  if (id === '') return false;
  return cgroup.split('\n').some((line) => {
    const path = line.split(':').slice(2).join(':');
    return path.split('/').at(-1) === id;
  });
}

export interface ProcessInfo {
  pid: number;
  /** /proc/<pid>/cgroup */
  cgroup: string;
  /** /proc/<pid>/status */
  status: string;
}

/** The main process of container `id`: in its cgroup, and pid 1 of its own pid namespace. */
export function mainProcessOf(processes: readonly ProcessInfo[], id: string): number | undefined {
  return processes.find((p) => {
    const pids = namespacePids(p.status);
    return pids.length > 1 && pids.at(-1) === 1 && inContainerCgroup(p.cgroup, id);
  })?.pid;
}

/** Reads /proc and returns the host pid of container `containerID`'s main process, if it runs. */
export async function hostPidOf(containerID: string): Promise<number | undefined> {
  const id = containerIdOf(containerID);
  const processes: ProcessInfo[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [cgroup, status] = await Promise.all([readFile(`/proc/${entry}/cgroup`, 'utf8'), readFile(`/proc/${entry}/status`, 'utf8')]).catch(() => ['', '']);
    // Only candidates are kept: the cgroup names the container.
    if (cgroup.includes(id)) processes.push({ pid: Number(entry), cgroup, status });
  }
  return mainProcessOf(processes, id);
}
