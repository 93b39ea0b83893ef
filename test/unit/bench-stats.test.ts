import { describe, expect, it } from 'vitest';
import { percentile, ratio, round, summarize } from '../../bench/stats.js';

describe('percentile', () => {
  it.each([
    { sorted: [5], p: 0, expected: 5 },
    { sorted: [5], p: 50, expected: 5 },
    { sorted: [5], p: 100, expected: 5 },
    { sorted: [1, 2, 3, 4], p: 0, expected: 1 },
    { sorted: [1, 2, 3, 4], p: 50, expected: 2.5 },
    { sorted: [1, 2, 3, 4], p: 100, expected: 4 },
    { sorted: [1, 2, 3, 4, 5], p: 50, expected: 3 },
    { sorted: [1, 2, 3, 4, 5], p: 25, expected: 2 },
    { sorted: [10, 20], p: 90, expected: 19 },
    { sorted: [10, 20], p: 99, expected: 19.9 },
    // 1..100: rank 0.99 * 99 = 98.01, between 99 and 100
    { sorted: Array.from({ length: 100 }, (_, i) => i + 1), p: 99, expected: 99.01 },
    { sorted: Array.from({ length: 100 }, (_, i) => i + 1), p: 50, expected: 50.5 },
    { sorted: [2, 2, 2, 9], p: 50, expected: 2 },
  ])('p$p of $sorted is $expected', ({ sorted, p, expected }) => {
    expect(percentile(sorted, p)).toBeCloseTo(expected, 10);
  });

  it('is NaN for no samples', () => {
    expect(percentile([], 50)).toBeNaN();
  });

  it.each([-1, 101, Number.NaN])('rejects p = %s', (p) => {
    expect(() => percentile([1, 2], p)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('sorts numerically, not as strings, and leaves the input alone', () => {
    const samples = [10, 9, 100, 1, 2];
    const summary = summarize(samples);
    const expected = { count: 5, min: 1, mean: 24.4, p50: 9, p90: 64, p99: 96.4, max: 100 };
    for (const [key, value] of Object.entries(expected)) expect(summary[key as keyof typeof expected]).toBeCloseTo(value, 10);
    expect(samples).toEqual([10, 9, 100, 1, 2]);
  });

  it('summarises one sample as itself', () => {
    expect(summarize([3.5])).toEqual({ count: 1, min: 3.5, mean: 3.5, p50: 3.5, p90: 3.5, p99: 3.5, max: 3.5 });
  });

  it('gives NaN figures and a zero count for no samples', () => {
    const summary = summarize([]);
    expect(summary.count).toBe(0);
    for (const key of ['min', 'mean', 'p50', 'p90', 'p99', 'max'] as const) expect(summary[key]).toBeNaN();
  });

  it('keeps the tail of a skewed latency distribution', () => {
    const samples = [...Array.from({ length: 990 }, () => 1), ...Array.from({ length: 10 }, () => 50)];
    const summary = summarize(samples);
    expect(summary.p50).toBe(1);
    expect(summary.p90).toBe(1);
    expect(summary.p99).toBeCloseTo(1 + 49 * 0.01, 10);
    expect(summary.max).toBe(50);
  });
});

describe('round and ratio', () => {
  it.each([
    { value: 1.23456, digits: 2, expected: 1.23 },
    { value: 1.235, digits: 1, expected: 1.2 },
    { value: 1999.6, digits: 0, expected: 2000 },
  ])('round($value, $digits) = $expected', ({ value, digits, expected }) => {
    expect(round(value, digits)).toBe(expected);
  });

  it('divides, and gives NaN for a zero denominator', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeNaN();
  });
});
