import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/sizes.js';

describe('parseBenchArgs', () => {
  it.each([
    { argv: [], namespaces: 10_000, sections: 'admission' },
    { argv: ['--size', 'smoke', '--only', 'scale'], namespaces: 200, sections: 'scale' },
    { argv: ['--only', 'scale', '--scale-namespaces', '3000'], namespaces: 3_000, sections: 'scale' },
  ])('$argv → scale over $namespaces namespaces', ({ argv, namespaces, sections }) => {
    const args = parseBenchArgs(argv);
    expect(args.size.scale.namespaces).toBe(namespaces);
    expect(args.sections).toContain(sections);
  });

  it.each([
    { argv: ['--scale-namespaces', '0'], message: '--scale-namespaces must be a whole number above 0, got 0' },
    { argv: ['--scale-namespaces', '2.5'], message: '--scale-namespaces must be a whole number above 0, got 2.5' },
    { argv: ['--size', 'huge'], message: '--size must be one of' },
    { argv: ['--only', 'nope'], message: '--only: unknown section(s) nope' },
  ])('$argv is refused: $message', ({ argv, message }) => {
    expect(() => parseBenchArgs(argv)).toThrow(message);
  });

  it.each([
    { argv: [], kruise: true },
    { argv: ['--size', 'smoke', '--no-kruise'], kruise: false },
    { argv: ['--only', 'fan-out', '--no-kruise', '--scale-namespaces', '5'], kruise: false },
  ])('$argv → the fan-out runs its OpenKruise peer: $kruise', ({ argv, kruise }) => {
    expect(parseBenchArgs(argv).kruise).toBe(kruise);
  });

  it('keeps the size it changes untouched', () => {
    parseBenchArgs(['--scale-namespaces', '7']);
    expect(parseBenchArgs([]).size.scale.namespaces).toBe(10_000);
  });
});
