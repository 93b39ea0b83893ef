import { describe, expect, it } from 'vitest';
import { emptyModel, type Model } from '../../soak/model.js';
import { applyToModel } from '../../soak/model-update.js';
import { Ledger } from '../../soak/ledger.js';
import { chooseOperation, type ByHand, type ByHandKind, type Operation } from '../../soak/operations.js';
import { meantCopies, planPod } from '../../soak/pod-plan.js';
import { Prng } from '../../soak/prng.js';
import { parseSoakArgs, UsageError } from '../../soak/args.js';
import { requestTotals } from '../../soak/report.js';

function sequence(seed: number, steps: number): { operations: Operation[]; model: Model } {
  const prng = new Prng(seed);
  const model = emptyModel();
  const operations: Operation[] = [];
  for (let i = 0; i < steps; i++) {
    const operation = chooseOperation(model, prng);
    applyToModel(model, operation);
    operations.push(operation);
  }
  return { operations, model };
}

/** Names both included and excluded: admission refuses them, so the soak must never write one. */
function includedAndExcluded(operation: Operation): string[] {
  const targets = 'targets' in operation ? operation.targets : operation.op === 'distribution-create' ? operation.distribution.targets : undefined;
  const included = new Set((targets?.includedNamespaces?.list ?? []).map((e) => e.name));
  return (targets?.excludedNamespaces?.list ?? []).flatMap((e) => (e.name !== undefined && included.has(e.name) ? [e.name] : []));
}

describe('the seeded operations', () => {
  it.each([1, 2, 42])('seed %i replays the same sequence', (seed) => {
    expect(sequence(seed, 300).operations).toEqual(sequence(seed, 300).operations);
  });

  it('another seed gives another sequence', () => {
    expect(sequence(1, 50).operations).not.toEqual(sequence(2, 50).operations);
  });

  it.each([1, 2, 3, 4, 5])('seed %i: every kind of operation within 2,000 steps, within the model bounds, never a name both included and excluded', (seed) => {
    const { operations, model } = sequence(seed, 2_000);
    expect(new Set(operations.map((o) => o.op)).size).toBe(21);
    expect(model.objectSyncs.size).toBeLessThanOrEqual(3);
    expect(model.namespaces.size).toBeLessThanOrEqual(12);
    expect(model.distributions.size).toBeLessThanOrEqual(8);
    expect(operations.flatMap(includedAndExcluded)).toEqual([]);
  });
});

describe('Prng', () => {
  it.each([
    { low: 0, high: 0 },
    { low: 3, high: 10 },
    { low: -2, high: 2 },
  ])('int stays within [$low, $high]', ({ low, high }) => {
    const prng = new Prng(7);
    const seen = new Set(Array.from({ length: 500 }, () => prng.int(low, high)));
    expect(Math.min(...seen)).toBe(low);
    expect(Math.max(...seen)).toBe(high);
  });

  it('never picks a key of weight 0', () => {
    const prng = new Prng(9);
    const picks = new Set(Array.from({ length: 200 }, () => prng.weighted({ a: 1, b: 0, c: 3 })));
    expect([...picks].sort()).toEqual(['a', 'c']);
  });
});

describe('parseSoakArgs', () => {
  it.each([
    { argv: [], uid: 1000, parsed: { minutes: 2, seed: 1, replicas: 'processes' } },
    { argv: [], uid: 0, parsed: { minutes: 2, seed: 1, replicas: 'pods' } },
    { argv: [], uid: 501, parsed: { minutes: 2, seed: 1, replicas: 'processes' } },
    { argv: ['--minutes', '0.5', '--seed', '7'], uid: 1000, parsed: { minutes: 0.5, seed: 7, replicas: 'processes' } },
    { argv: ['--seed', '3', '--out', '/tmp/x'], uid: 1000, parsed: { minutes: 2, seed: 3, replicas: 'processes', outDir: '/tmp/x' } },
    { argv: ['--replicas', 'processes'], uid: 0, parsed: { minutes: 2, seed: 1, replicas: 'processes' } },
    { argv: ['--replicas', 'pods', '--minutes', '30'], uid: 0, parsed: { minutes: 30, seed: 1, replicas: 'pods' } },
  ])('$argv as uid $uid', ({ argv, uid, parsed }) => {
    expect(parseSoakArgs(argv, uid)).toEqual(parsed);
  });

  it.each([
    { argv: ['--minutes', '0'], uid: 0 },
    { argv: ['--seed', '1.5'], uid: 0 },
    { argv: ['--size', 'smoke'], uid: 0 },
    { argv: ['--minutes'], uid: 0 },
    { argv: ['--replicas', 'containers'], uid: 0 },
    { argv: ['--replicas'], uid: 0 },
    { argv: ['--replicas', 'pods'], uid: 1000 },
  ])('refuses $argv as uid $uid', ({ argv, uid }) => {
    expect(() => parseSoakArgs(argv, uid)).toThrow(UsageError);
  });
});

describe('requestTotals', () => {
  it('leaves leader election out and counts writes by verb', () => {
    expect(requestTotals({ 'get leases': 10, 'update leases': 10, 'create secrets': 2, 'get configmaps': 3, 'patch resourcedistributions': 1 })).toEqual({
      byRequest: expect.any(Object),
      total: 6,
      writes: 3,
      lease: 20,
    });
  });
});

describe('Ledger', () => {
  const hand = <K extends ByHandKind>(op: K, data = { k: 'x' }): ByHand<K> => ({ op, distribution: 'rd', namespace: 'a', kind: 'ConfigMap', name: 'c', data });
  const ok = (uid?: string) => ({ result: 'ok' as const, ...(uid ? { uid } : {}) });
  const timing = { startedAt: 0, endedAt: 1 };

  it('an object that is not ours, edited by hand, is expected to hold the new data; a failed edit forgets it', () => {
    const ledger = new Ledger('own');
    ledger.record(1, hand('foreign-create'), ok('u1'), timing);
    ledger.record(2, hand('foreign-edit', { k: 'y' }), ok(), timing);
    expect(ledger.expectations().foreign.map((f) => f.data)).toEqual([{ k: 'y' }]);
    ledger.record(3, hand('foreign-edit', { k: 'z' }), { result: 'failed', message: 'timeout' }, timing);
    expect(ledger.expectations().foreign).toEqual([]);
  });

  it('an object made for adoption is checked in its round only, and not after a change that may replace it', () => {
    const ledger = new Ledger('own');
    ledger.record(1, hand('foreign-adopt'), ok('u1'), timing);
    expect(ledger.expectations().adoptable).toHaveLength(1);
    ledger.intend({ op: 'distribution-targets', name: 'rd', targets: {} }, emptyModel());
    expect(ledger.expectations().adoptable).toEqual([]);
    ledger.record(2, hand('foreign-adopt'), ok('u2'), timing);
    ledger.endRound();
    expect(ledger.expectations().adoptable).toEqual([]);
  });

  it('keeps the refusals of the round with their timing', () => {
    const ledger = new Ledger('own');
    ledger.record(4, { op: 'distribution-delete', name: 'rd', orphan: false, asAuthor: true }, { result: 'failed', message: 'denied' }, { startedAt: 5, endedAt: 9 });
    expect(ledger.refusals).toEqual([{ step: 4, op: 'distribution-delete', asAuthor: true, message: 'denied', startedAt: 5, endedAt: 9 }]);
  });
});

describe('planPod', () => {
  it('references copies the model means the namespace to hold', () => {
    const { model } = sequence(3, 400);
    const prng = new Prng(5);
    for (const ns of model.namespaces.keys()) {
      const meant = meantCopies(model, ns).map((c) => `${c.kind}/${c.name}`);
      const refs = planPod(model, prng, ns).refs.filter((r) => r.name !== 'soak-nothing');
      expect(refs.every((r) => meant.includes(`${r.kind}/${r.name}`))).toBe(true);
    }
  });
});
