import { describe, expect, it } from 'vitest';
import { CORE_REGISTRY } from '../../../src/domain/kinds.js';
import { isDistributable, resolveDistribution } from '../../../src/reconcile/distributable.js';
import { distribution } from '../builders.js';

function nested(levels: number): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

/** A template whose managedFields[0].fieldsV1 nests `levels` deep (the template itself is 4 levels above it). */
function withDepth(levels: number) {
  const rd = distribution('deep').configMap('settings', { a: 'b' }).included('ns-a').build();
  rd.spec.resource.metadata.managedFields = [{ manager: 'kubectl', fieldsV1: nested(levels) }];
  return rd;
}

const noSources = { get: () => ({ synced: true as const, object: undefined }) };

describe('a template nested too deeply is not distributable', () => {
  it.each([
    { levels: 1, distributable: true },
    { levels: 60, distributable: true },
    { levels: 61, distributable: false },
    // As the red team stored it (5,000: every pass overflowed the stack), and far deeper.
    { levels: 5_000, distributable: false },
    { levels: 100_000, distributable: false },
  ])('$levels levels under managedFields: $distributable', ({ levels, distributable }) => {
    const rd = withDepth(levels);
    expect(isDistributable(rd, CORE_REGISTRY)).toBe(distributable);
    expect(resolveDistribution(rd, { sources: noSources, kinds: CORE_REGISTRY }).state).toBe(distributable ? 'ready' : 'invalid');
  });

  it('a source nested too deeply is not either', () => {
    const rd = distribution('from-source').source('platform', 'settings').included('ns-a').build();
    const source = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'platform', managedFields: [{ fieldsV1: nested(5_000) }] }, data: { a: 'b' } };
    expect(resolveDistribution(rd, { sources: { get: () => ({ synced: true, object: source }) }, kinds: CORE_REGISTRY }).state).toBe('invalid');
  });
});
