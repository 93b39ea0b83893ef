import { describe, expect, it } from 'vitest';
import { cpuMsOfStat, machineBusyMsOfStat, medianCpu } from '../../bench/process-cpu.js';

describe('cpuMsOfStat', () => {
  it.each([
    { what: 'a plain command', stat: '4242 (etcd) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 12 0 100 0 0', ms: 18_010 },
    { what: 'a command with spaces and parentheses', stat: '7 (node (main) x) R 1 7 7 0 -1 0 0 0 0 0 3 2 0 0 20 0 1 0 5 0 0', ms: 50 },
    { what: 'a process gone (empty stat)', stat: '', ms: Number.NaN },
  ])('$what', ({ stat, ms }) => {
    expect(cpuMsOfStat(stat)).toBe(ms);
  });
});

describe('machineBusyMsOfStat', () => {
  it.each([
    // user nice system idle iowait irq softirq steal
    { what: 'idle and iowait left out', stat: 'cpu  100 5 50 9000 300 1 2 3 0 0\ncpu0 50 2 25 4500 150 0 1 1 0 0\n', ms: 1_610 },
    { what: 'a machine that did nothing', stat: 'cpu  0 0 0 500 0 0 0 0 0 0\n', ms: 0 },
  ])('$what', ({ stat, ms }) => {
    expect(machineBusyMsOfStat(stat)).toBe(ms);
  });
});

describe('medianCpu', () => {
  it('takes each field\'s median on its own', () => {
    const rounds = [
      { product: 1, apiserver: 30, etcd: 5, machine: 50 },
      { product: 3, apiserver: 10, etcd: 7, machine: 40 },
      { product: 2, apiserver: 20, etcd: 6, machine: 60 },
    ];
    expect(medianCpu(rounds)).toEqual({ product: 2, apiserver: 20, etcd: 6, machine: 50 });
  });
});
