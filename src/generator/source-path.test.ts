import { describe, expect, it } from 'vitest';
import { isWithin, sourcePath } from './source-path.js';

describe('files of a kustomization', () => {
  it.each([
    ['application.properties', '/work/app/application.properties'],
    ['./config/app.properties', '/work/app/config/app.properties'],
    ['config/../app.properties', '/work/app/app.properties'],
    ['/work/app/abs.txt', '/work/app/abs.txt'],
    ['..app', '/work/app/..app'],
  ])('%s is read from %s', (path, full) => {
    expect(sourcePath('/work/app', path)).toBe(full);
  });

  it.each(['../other/secret.txt', '/etc/passwd', 'config/../../app2/x', '/work/app2/x'])('%s is outside the directory', (path) => {
    expect(() => sourcePath('/work/app', path)).toThrow(`"${path}" is outside the kustomization directory /work/app: files are read only from within it`);
  });

  it('remote files are not read', () => {
    expect(() => sourcePath('/work/app', 'https://example.com/app.properties')).toThrow('remote files are not read');
  });

  it.each([
    ['/work/app', '/work/app', true],
    ['/work/app', '/work/app/a/b', true],
    ['/work/app', '/work/apple', false],
    ['/work/app', '/work', false],
  ])('%s holds %s: %s', (root, path, within) => {
    expect(isWithin(root, path)).toBe(within);
  });
});
