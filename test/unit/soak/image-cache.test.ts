import { describe, expect, it } from 'vitest';
import { inBuildContext, imageKey } from '../../control-plane/product-image-cache.js';

describe('the image cache key', () => {
  const dockerignore = '# Only package files, src/ and the CRD go into the image.\n*\n!package.json\n!src/\n!webhook-config/crd/\nsrc/**/*.test.ts\n';
  it.each([
    ['package.json', true],
    ['README.md', false],
    ['src/main.ts', true],
    ['src/reconcile/queue.ts', true],
    ['src/reconcile/queue.test.ts', false],
    ['src/main.test.ts', false],
    ['webhook-config/crd/rd.yaml', true],
    ['webhook-config/kustomization.yaml', false],
    ['test/soak/run.ts', false],
  ])('%s in the build context: %s', (path, included) => {
    expect(inBuildContext(dockerignore, path)).toBe(included);
  });

  const files: [{ path: string; content: string }, { path: string; content: string }] = [
    { path: 'b', content: 'two' },
    { path: 'a', content: 'one' },
  ];
  it('is the same for the same inputs in any order, and changes with any of them', () => {
    const key = imageKey(files, ['v20.19.0']);
    expect(imageKey([...files].reverse(), ['v20.19.0'])).toBe(key);
    const [two] = files;
    expect(imageKey([{ path: 'a', content: 'one!' }, two], ['v20.19.0'])).not.toBe(key);
    expect(imageKey([{ path: 'c', content: 'one' }, two], ['v20.19.0'])).not.toBe(key);
    expect(imageKey(files, ['v20.20.0'])).not.toBe(key);
  });
});
