import { describe, expect, it } from 'vitest';
import { parseSelectorText } from './label-selector-text.js';

describe('label selector text', () => {
  it.each([
    // replicator's README example for replicate-to-matching
    ['my-label=value,my-other-label,my-other-label notin (foo,bar)', {
      matchLabels: { 'my-label': 'value' },
      matchExpressions: [{ key: 'my-other-label', operator: 'Exists' }, { key: 'my-other-label', operator: 'NotIn', values: ['foo', 'bar'] }],
    }],
    // reflector's README examples for the …-selector annotations
    ['env=production', { matchLabels: { env: 'production' } }],
    ['team in (a,b)', { matchExpressions: [{ key: 'team', operator: 'In', values: ['a', 'b'] }] }],
    ['env==prod', { matchLabels: { env: 'prod' } }],
    ['env!=prod', { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }],
    ['!legacy', { matchExpressions: [{ key: 'legacy', operator: 'DoesNotExist' }] }],
    ['example.com/tier in (a, b), env=', { matchLabels: { env: '' }, matchExpressions: [{ key: 'example.com/tier', operator: 'In', values: ['a', 'b'] }] }],
  ])('reads %j', (text, selector) => {
    expect(parseSelectorText(text)).toEqual({ selector });
  });

  it.each([
    ['replicas>1', 'numeric comparisons'],
    ['a=b,', 'empty requirement'],
    ['a=b,a=c', 'matches nothing'],
    ['bad key=x', 'not a label key'],
    ['a=b c', 'not a label key'],
    ['a in (x y)', 'not a label value'],
  ])('refuses %j, saying why', (text, why) => {
    const reading = parseSelectorText(text);
    expect('problem' in reading ? reading.problem : '').toContain(why);
  });
});
