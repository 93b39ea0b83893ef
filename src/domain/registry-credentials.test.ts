import { describe, expect, it } from 'vitest';
import { normalizeImage } from './image-reference.js';
import { pathMatch } from './path-match.js';
import { credentialsMatch, parseKey, registryKeys } from './registry-credentials.js';

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');
const dockerConfig = (...keys: string[]): Record<string, string> => ({ '.dockerconfigjson': b64({ auths: Object.fromEntries(keys.map((k) => [k, { auth: b64('user:secret-password') }])) }) });

describe('image references as the kubelet reads them', () => {
  it.each([
    ['nginx', 'docker.io/library/nginx'],
    ['nginx:1.27', 'docker.io/library/nginx'],
    ['library/nginx', 'docker.io/library/nginx'],
    ['docker.io/nginx', 'docker.io/library/nginx'],
    ['index.docker.io/team/app', 'docker.io/team/app'],
    ['team/app@sha256:' + 'a'.repeat(64), 'docker.io/team/app'],
    ['registry.example.com/team/app:1.2', 'registry.example.com/team/app'],
    ['registry.example.com:5000/app:1@sha256:' + 'b'.repeat(64), 'registry.example.com:5000/app'],
    ['localhost:5000/app', 'localhost:5000/app'],
    ['localhost/app', 'localhost/app'],
    ['10.0.0.7:5000/tools/scan', '10.0.0.7:5000/tools/scan'],
    ['[fd00::1]:5000/app', '[fd00::1]:5000/app'],
    ['Registry.Example.com/app', 'Registry.Example.com/app'],
    ['Team/app', 'Team/app'],
    ['team/App', undefined],
    ['nginx:', undefined],
    ['nginx@sha256:short', undefined],
    ['has space', undefined],
    ['', undefined],
  ])('%s -> %s', (image, repository) => {
    expect(normalizeImage(image)).toBe(repository);
  });
});

describe('credential keys as the kubelet indexes them', () => {
  it.each([
    ['https://index.docker.io/v1/', { hostParts: ['index', 'docker', 'io'], port: '', path: '' }],
    ['registry.example.com', { hostParts: ['registry', 'example', 'com'], port: '', path: '' }],
    ['http://registry.example.com:5000/v2/team', { hostParts: ['registry', 'example', 'com'], port: '5000', path: '/team' }],
    ['*.example.com/team/', { hostParts: ['*', 'example', 'com'], port: '', path: '/team/' }],
    ['localhost:5000', { hostParts: ['localhost'], port: '5000', path: '' }],
  ])('%s', (location, key) => {
    expect(parseKey(location)).toEqual(key);
  });

  it.each([
    ['a dockerconfigjson', 'kubernetes.io/dockerconfigjson', dockerConfig('registry.example.com', 'https://index.docker.io/v1/'), 2],
    ['a legacy dockercfg', 'kubernetes.io/dockercfg', { '.dockercfg': b64({ 'registry.example.com': { auth: b64('u:p') } }) }, 1],
    ['malformed JSON', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('{not json') }, 0],
    ['not base64 of an object', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64('[1,2]') }, 0],
    ['auths not an object', 'kubernetes.io/dockerconfigjson', { '.dockerconfigjson': b64({ auths: 'x' }) }, 0],
    ['another Secret type', 'Opaque', dockerConfig('registry.example.com'), 0],
    ['no data', 'kubernetes.io/dockerconfigjson', undefined, 0],
  ])('read from %s: %i keys, never a credential', (_what, type, data, count) => {
    const keys = registryKeys(type, data);
    expect(keys).toHaveLength(count);
    expect(JSON.stringify(keys)).not.toContain('secret-password');
  });
});

describe("the kubelet's matching (keyring_test.go cases and more)", () => {
  it.each([
    ['*.kubernetes.io', 'prefix.kubernetes.io', true],
    ['prefix.*.io', 'prefix.kubernetes.io', true],
    ['prefix.kubernetes.*', 'prefix.kubernetes.io', true],
    ['*-good.kubernetes.io', 'prefix-good.kubernetes.io', true],
    ['*.kubernetes.io/blah', 'prefix.kubernetes.io/blah', true],
    ['prefix.*.io/foo', 'prefix.kubernetes.io/foo/bar', true],
    ['*.kubernetes.io:1111/blah', 'prefix.kubernetes.io:1111/blah', true],
    ['prefix.*.io:1111/foo', 'prefix.kubernetes.io:1111/foo/bar', true],
    ['*.kubernetes.io', 'kubernetes.io', false],
    ['*.*.kubernetes.io', 'prefix.kubernetes.io', false],
    ['*.*.kubernetes.io', 'kubernetes.io', false],
    ['*kubernetes.io', 'a.kubernetes.io', false],
    ['*kubernetes.io', 'kubernetes.io', true],
    ['*.*.*.kubernetes.io', 'a.b.c.kubernetes.io', true],
    ['kubernetes.io', 'kubernetes.com', false],
    ['k*.io', 'quay.io', false],
    ['*.kubernetes.io:1234/blah', 'prefix.kubernetes.io:1111/blah', false],
    ['prefix.*.io/foo', 'prefix.kubernetes.io:1111/foo/bar', false],
    ['registry.example.com/team', 'registry.example.com/teamwork/app', true],
    ['registry.example.com/team', 'registry.example.com/other/app', false],
    ['https://registry.example.com/v2/team', 'registry.example.com/team/app', true],
    ['registry.example.com', 'registry.example.com:5000/app', false],
    ['localhost:5000', 'localhost:5000/app', true],
    ['10.0.0.7:5000', '10.0.0.7:5000/tools/scan', true],
    ['10.0.0.*:5000', '10.0.0.7:5000/tools/scan', true],
    ['[a-c]r.example.com', 'cr.example.com/app', true],
    ['[^a-c]r.example.com', 'cr.example.com/app', false],
    ['[broken.example.com', 'broken.example.com/app', false],
    ['https://index.docker.io/v1/', 'docker.io/library/nginx', true],
    ['index.docker.io', 'docker.io/team/app', true],
    ['https://index.docker.io/v1/', 'registry.example.com/app', false],
    ['docker.io', 'docker.io/library/nginx', true],
  ])('key %s, image %s: %s', (location, repository, expected) => {
    expect(credentialsMatch([parseKey(location)!], repository)).toBe(expected);
  });

  it.each([
    ['*', 'anything', true],
    ['a?c', 'abc', true],
    ['a\\*c', 'a*c', true],
    ['a\\*c', 'abc', false],
    ['a.c', 'abc', false],
    ['trailing\\', 'trailing', false],
  ])('glob %s ~ %s: %s', (pattern, text, expected) => {
    expect(pathMatch(pattern, text)).toBe(expected);
  });
});
