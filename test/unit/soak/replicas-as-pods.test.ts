import { describe, expect, it } from 'vitest';
import { emptyCriLogState, readCriLog } from '../../soak/cri-log.js';
import { containerIdOf, inContainerCgroup, mainProcessOf, namespacePids, type ProcessInfo } from '../../soak/host-pid.js';
import { checkRestarts, instancesStarted, type ReplicaObservation, type Signalled } from '../../soak/restarts.js';

const ID = 'c0ffee'.padEnd(64, '0');
const OTHER = 'beef'.padEnd(64, '1');
const cgroupOf = (id: string): string =>
  [`12:pids:/rd-node-abc123/kubepods/burstable/pod1234-5678/${id}`, `4:memory:/rd-node-abc123/kubepods/burstable/pod1234-5678/${id}`, '1:name=systemd:/'].join('\n');
const statusOf = (nspid: string): string => `Name:\tnode\nTgid:\t4242\nNSpid:\t${nspid}\nPPid:\t4200\n`;

describe('host pid of a container', () => {
  it.each([
    ['containerd://abc', 'abc'],
    ['cri-o://def', 'def'],
  ])('containerIdOf(%s) is %s', (containerID, id) => {
    expect(containerIdOf(containerID)).toBe(id);
  });

  it.each([
    { status: statusOf('4242\t77\t1'), pids: [4242, 77, 1] },
    { status: statusOf('4242'), pids: [4242] },
    { status: 'Name:\tkthreadd\n', pids: [] },
  ])('namespacePids: $pids', ({ status, pids }) => {
    expect(namespacePids(status)).toEqual(pids);
  });

  it.each([
    { cgroup: cgroupOf(ID), id: ID, inside: true },
    { cgroup: cgroupOf(ID), id: OTHER, inside: false },
    // The pod's cgroup (the sandbox's parent) is not the container's.
    { cgroup: '12:pids:/rd-node-abc123/kubepods/burstable/pod1234-5678', id: ID, inside: false },
    { cgroup: `12:pids:/rd-node-abc123/kubepods/burstable/pod1234-5678/${ID}-extra`, id: ID, inside: false },
    { cgroup: cgroupOf(ID), id: '', inside: false },
  ])('inContainerCgroup $inside', ({ cgroup, id, inside }) => {
    expect(inContainerCgroup(cgroup, id)).toBe(inside);
  });

  const processes: ProcessInfo[] = [
    // The shim: outside the container's pid namespace, in another cgroup.
    { pid: 100, cgroup: '12:pids:/rd-node-abc123', status: statusOf('100\t5') },
    // A child the product forked: in the container's cgroup, not its pid 1.
    { pid: 4243, cgroup: cgroupOf(ID), status: statusOf('4243\t78\t2') },
    { pid: 4242, cgroup: cgroupOf(ID), status: statusOf('4242\t77\t1') },
    { pid: 5000, cgroup: cgroupOf(OTHER), status: statusOf('5000\t90\t1') },
    // pid 1 of the node's namespace (no namespace below it), whatever its cgroup says.
    { pid: 3000, cgroup: cgroupOf(ID), status: statusOf('3000') },
  ];
  it.each([
    { id: ID, pid: 4242 },
    { id: OTHER, pid: 5000 },
    { id: 'f'.repeat(64), pid: undefined },
  ])('mainProcessOf $id: $pid', ({ id, pid }) => {
    expect(mainProcessOf(processes, id)).toBe(pid);
  });
});

describe('readCriLog', () => {
  it.each([
    { name: 'whole records', chunks: ['2026-11-26T09:00:00.1Z stdout F {"msg":"a"}\n2026-11-26T09:00:00.2Z stderr F b\n'], lines: ['{"msg":"a"}', 'b'] },
    { name: 'a record cut between two reads', chunks: ['2026-11-26T09:00:00.1Z stdout F {"ms', 'g":"a"}\n'], lines: ['{"msg":"a"}'] },
    { name: 'partial records joined up to the full one', chunks: ['2026-11-26T09:00:00.1Z stdout P abc\n2026-11-26T09:00:00.1Z stdout P def\n', '2026-11-26T09:00:00.1Z stdout F ghi\n'], lines: ['abcdefghi'] },
    { name: 'an empty line', chunks: ['2026-11-26T09:00:00.1Z stdout F \n'], lines: [''] },
    { name: 'a line not in the format is kept whole', chunks: ['not a record\n'], lines: ['not a record'] },
  ])('$name', ({ chunks, lines }) => {
    let state = emptyCriLogState();
    const read: string[] = [];
    for (const chunk of chunks) {
      const result = readCriLog(chunk, state);
      read.push(...result.lines);
      state = result.state;
    }
    expect(read).toEqual(lines);
  });
});

const observed = (uid: string, restartCount: number, lastTerminated?: ReplicaObservation['lastTerminated']): ReplicaObservation => ({ pod: `rd-${uid}`, uid, restartCount, ...(lastTerminated ? { lastTerminated } : {}) });
const killed = (uid: string, id: string): Signalled => ({ uid, containerId: `containerd://${id}`, signal: 'SIGKILL' });
const termed = (uid: string, id: string): Signalled => ({ uid, containerId: `containerd://${id}`, signal: 'SIGTERM' });
const ended = (id: string, exitCode: number, reason = 'Error') => ({ containerId: `containerd://${id}`, exitCode, reason });

describe('checkRestarts', () => {
  const installed = new Map([
    ['a', 'rd-a'],
    ['b', 'rd-b'],
  ]);
  it.each([
    { name: 'never restarted', observed: [observed('a', 0), observed('b', 0)], signalled: [], rules: [] },
    { name: 'restarted once per kill', observed: [observed('a', 2, ended('a2', 137)), observed('b', 0)], signalled: [killed('a', 'a1'), killed('a', 'a2')], rules: [] },
    { name: 'a restart the soak did not cause', observed: [observed('a', 2, ended('a2', 1)), observed('b', 0)], signalled: [killed('a', 'a1')], rules: ['replica-exited', 'replica-exited'] },
    { name: 'killed in one pod, restarted in the other', observed: [observed('a', 0), observed('b', 1, ended('b1', 137))], signalled: [killed('a', 'a1')], rules: ['replica-exited', 'replica-exited'] },
    { name: 'OOM-killed after a kill: the count matches, the instance does not', observed: [observed('a', 1, ended('a9', 137, 'OOMKilled')), observed('b', 0)], signalled: [killed('a', 'a1'), killed('a', 'a2')], rules: ['replica-exited'] },
    { name: 'exited 0 on SIGTERM', observed: [observed('a', 1, ended('a1', 0, 'Completed')), observed('b', 1, ended('b1', 0, 'Completed'))], signalled: [termed('a', 'a1'), termed('b', 'b1')], rules: [] },
    { name: 'exited 1 on SIGTERM', observed: [observed('a', 1, ended('a1', 1)), observed('b', 0)], signalled: [termed('a', 'a1')], rules: ['replica-stop-failed'] },
    { name: 'ended otherwise before the SIGKILL took it', observed: [observed('a', 1, ended('a1', 2)), observed('b', 0)], signalled: [killed('a', 'a1')], rules: ['replica-exited'] },
    { name: 'a pod gone and one that replaced it', observed: [observed('a', 0), observed('c', 0)], signalled: [], rules: ['replica-gone', 'replica-replaced'] },
  ])('$name', ({ observed: seen, signalled, rules }) => {
    expect(checkRestarts(installed, seen, signalled).map((v) => v.rule)).toEqual(rules);
  });

  it('counts each pod’s first instance and one per restart', () => {
    expect(instancesStarted([observed('a', 3), observed('b', 0)])).toBe(5);
  });
});
