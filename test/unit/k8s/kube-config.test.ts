import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import {
  connectionFromKubeconfig,
  connectionFromKubeconfigFile,
  inClusterConnection,
  KubeConfigError,
  tokenFileAuthorization,
  type Connection,
} from '../../../src/k8s/kube-config.js';

// Contents are arbitrary bytes: the loader passes them on without parsing PEM, so distinct
// markers are enough to tell which source each buffer came from.
const CA = 'ca from file\n';
const CERT = 'client cert from file\n';
const KEY = 'client key from file\n';
const b64 = (text: string): string => Buffer.from(text).toString('base64');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kube-config-test-'));
  mkdirSync(join(dir, 'pki'));
  writeFileSync(join(dir, 'pki', 'ca.crt'), CA);
  writeFileSync(join(dir, 'pki', 'client.crt'), CERT);
  writeFileSync(join(dir, 'pki', 'client.key'), KEY);
  // The trailing newline is what `kubectl create token > file` leaves; it must not reach the header.
  writeFileSync(join(dir, 'token'), 'file-token\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Fields = Record<string, unknown>;

interface Layout {
  cluster?: Fields;
  user?: Fields;
  /** Omit the context's user entirely (anonymous, or client certs only through the cluster). */
  noUser?: boolean;
}

/** One context `main` → cluster `main` → user `main`, plus whatever `extra` adds. */
function kubeconfig({ cluster = {}, user = {}, noUser = false }: Layout, extra: Fields = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'main',
    clusters: [{ name: 'main', cluster: { server: 'https://main.example:6443', ...cluster } }],
    users: [{ name: 'main', user }],
    contexts: [{ name: 'main', context: noUser ? { cluster: 'main' } : { cluster: 'main', user: 'main' } }],
    ...extra,
  });
}

const text = (buffer: Buffer | undefined): string | undefined => buffer?.toString('utf8');

function material(connection: Connection): { ca?: string; cert?: string; key?: string } {
  return { ca: text(connection.ca), cert: text(connection.cert), key: text(connection.key) };
}

describe('connectionFromKubeconfig: TLS material', () => {
  it.each<[string, () => Layout, string, { ca?: string; cert?: string; key?: string }]>([
    [
      '*-data fields are base64-decoded',
      () => ({
        cluster: { 'certificate-authority-data': b64('inline ca') },
        user: { 'client-certificate-data': b64('inline cert'), 'client-key-data': b64('inline key') },
      }),
      '/nonexistent',
      { ca: 'inline ca', cert: 'inline cert', key: 'inline key' },
    ],
    [
      'relative paths resolve against baseDir, not the working directory',
      () => ({
        cluster: { 'certificate-authority': 'pki/ca.crt' },
        user: { 'client-certificate': 'pki/client.crt', 'client-key': 'pki/client.key' },
      }),
      '<dir>',
      { ca: CA, cert: CERT, key: KEY },
    ],
    [
      'absolute paths ignore baseDir',
      () => ({
        cluster: { 'certificate-authority': join(dir, 'pki/ca.crt') },
        user: { 'client-certificate': join(dir, 'pki/client.crt'), 'client-key': join(dir, 'pki/client.key') },
      }),
      '/nonexistent',
      { ca: CA, cert: CERT, key: KEY },
    ],
    [
      // The path points nowhere: reading it would throw, so this also proves it is not read.
      '*-data wins over a path',
      () => ({
        cluster: { 'certificate-authority-data': b64('inline ca'), 'certificate-authority': 'missing/ca.crt' },
        user: { 'client-certificate-data': b64('inline cert'), 'client-certificate': 'missing/client.crt' },
      }),
      '<dir>',
      { ca: 'inline ca', cert: 'inline cert', key: undefined },
    ],
    [
      // A cluster relying on the system trust store, with token auth.
      'nothing given leaves them unset',
      () => ({ user: { token: 't' } }),
      '<dir>',
      { ca: undefined, cert: undefined, key: undefined },
    ],
  ])('%s', (_, layout, baseDir, expected) => {
    const connection = connectionFromKubeconfig(kubeconfig(layout()), baseDir === '<dir>' ? dir : baseDir);
    expect(material(connection)).toEqual(expected);
  });

  it('fails on a referenced file that does not exist rather than connecting without it', () => {
    expect(() => connectionFromKubeconfig(kubeconfig({ cluster: { 'certificate-authority': 'missing.crt' } }), dir)).toThrow(/ENOENT/);
  });

  it('reads a kubeconfig file with paths relative to its own folder', () => {
    const sub = join(dir, 'sub');
    mkdirSync(sub, { recursive: true });
    const path = join(sub, 'config');
    writeFileSync(path, kubeconfig({ cluster: { 'certificate-authority': '../pki/ca.crt' }, user: { tokenFile: '../token' } }));
    const connection = connectionFromKubeconfigFile(path);
    expect(text(connection.ca)).toBe(CA);
    return expect(connection.authorization()).resolves.toBe('Bearer file-token');
  });

  it('names the file when a kubeconfig file cannot be read', () => {
    const path = join(dir, 'no-such-config');
    expect(() => connectionFromKubeconfigFile(path)).toThrow(KubeConfigError);
    expect(() => connectionFromKubeconfigFile(path)).toThrow(path);
  });
});

describe('connectionFromKubeconfig: context selection', () => {
  // Two complete contexts whose clusters and users differ, so a mix-up shows in both fields.
  const twoContexts = stringify({
    'current-context': 'dev',
    clusters: [
      { name: 'dev-cluster', cluster: { server: 'https://dev.example:6443' } },
      { name: 'prod-cluster', cluster: { server: 'https://prod.example:6443/' } },
    ],
    users: [
      { name: 'dev-user', user: { token: 'dev-token' } },
      { name: 'prod-user', user: { token: 'prod-token' } },
    ],
    contexts: [
      { name: 'dev', context: { cluster: 'dev-cluster', user: 'dev-user' } },
      { name: 'prod', context: { cluster: 'prod-cluster', user: 'prod-user' } },
    ],
  });

  it.each<[string, string | undefined, string, string]>([
    ['current-context when none is named', undefined, 'https://dev.example:6443', 'Bearer dev-token'],
    // Also: the trailing slash of the server is dropped, so paths can be appended as they are.
    ['the named context over current-context', 'prod', 'https://prod.example:6443', 'Bearer prod-token'],
  ])('uses %s', async (_, contextName, server, authorization) => {
    const connection = connectionFromKubeconfig(twoContexts, dir, contextName);
    expect(connection.server).toBe(server);
    expect(await connection.authorization()).toBe(authorization);
  });

  it.each<[string, string, string | undefined, RegExp]>([
    ['an unknown named context', twoContexts, 'staging', /context "staging" not found/],
    ['no current-context and none named', stringify({ clusters: [], contexts: [{ name: 'a', context: { cluster: 'a' } }] }), undefined, /context "" not found/],
    ['an empty file', '', undefined, /context "" not found/],
    [
      "a context whose cluster isn't listed",
      stringify({ 'current-context': 'a', contexts: [{ name: 'a', context: { cluster: 'gone', user: 'u' } }], users: [{ name: 'u', user: {} }] }),
      undefined,
      /cluster "gone" not found/,
    ],
    ["a context whose user isn't listed", kubeconfig({}, { users: [] }), undefined, /user "main" not found/],
    ['a cluster without a server', kubeconfig({ cluster: { server: undefined } }), undefined, /cluster "main" has no server/],
    ['a plain-http server', kubeconfig({ cluster: { server: 'http://main.example:8080' } }), undefined, /server http:\/\/main\.example:8080 is not https/],
  ])('rejects %s with a KubeConfigError naming it', (_, config, contextName, message) => {
    const load = (): Connection => connectionFromKubeconfig(config, dir, contextName);
    expect(load).toThrow(KubeConfigError);
    expect(load).toThrow(message);
  });
});

describe('connectionFromKubeconfig: TLS settings', () => {
  it.each<[string, Fields, boolean]>([
    ['true', { 'insecure-skip-tls-verify': true }, true],
    ['false', { 'insecure-skip-tls-verify': false }, false],
    ['absent', {}, false],
  ])('insecure-skip-tls-verify %s', (_, cluster, insecure) => {
    expect(connectionFromKubeconfig(kubeconfig({ cluster }), dir).insecure).toBe(insecure);
  });

  it.each<[string, Fields, string | undefined]>([
    // The name the certificate is checked against when the server is addressed by IP or through a tunnel.
    ['given', { server: 'https://10.0.0.1:6443', 'tls-server-name': 'kubernetes.default.svc' }, 'kubernetes.default.svc'],
    ['absent', {}, undefined],
  ])('tls-server-name %s', (_, cluster, servername) => {
    expect(connectionFromKubeconfig(kubeconfig({ cluster }), dir).servername).toBe(servername);
  });
});

describe('connectionFromKubeconfig: user credentials', () => {
  it.each<[string, Layout, string | undefined]>([
    ['a token', { user: { token: 'abc.def' } }, 'Bearer abc.def'],
    ['a tokenFile relative to baseDir, trimmed', { user: { tokenFile: 'token' } }, 'Bearer file-token'],
    ['a token over a tokenFile', { user: { token: 'inline', tokenFile: 'missing-token' } }, 'Bearer inline'],
    ['username and password', { user: { username: 'admin', password: 'p@ss:word' } }, `Basic ${b64('admin:p@ss:word')}`],
    ['a username without a password', { user: { username: 'admin' } }, `Basic ${b64('admin:')}`],
    ['client certificates only', { user: { 'client-certificate-data': b64('c'), 'client-key-data': b64('k') } }, undefined],
    ['a context without a user', { noUser: true }, undefined],
  ])('%s', async (_, layout, authorization) => {
    const connection = connectionFromKubeconfig(kubeconfig(layout), dir);
    expect(await connection.authorization()).toBe(authorization);
  });
});

describe('tokenFileAuthorization', () => {
  const MINUTE = 60_000;

  it.each<[string, number, string]>([
    ['keeps the cached token just before a minute has passed', MINUTE - 1, 'Bearer first'],
    ['re-reads the file once a minute has passed', MINUTE, 'Bearer second'],
    ['re-reads the file long after', 10 * MINUTE, 'Bearer second'],
  ])('%s', async (_, elapsed, expected) => {
    const path = join(dir, `rotating-${elapsed}`);
    writeFileSync(path, 'first\n');
    let now = 1_000_000;
    const authorization = tokenFileAuthorization(path, () => now);
    expect(await authorization()).toBe('Bearer first');

    writeFileSync(path, 'second\n');
    now += elapsed;
    expect(await authorization()).toBe(expected);
  });

  it('counts the minute from the last read, not the first', async () => {
    const path = join(dir, 'rotating-twice');
    writeFileSync(path, 'one');
    let now = 0;
    const authorization = tokenFileAuthorization(path, () => now);
    await authorization();
    writeFileSync(path, 'two');
    now = 60_000;
    expect(await authorization()).toBe('Bearer two');
    writeFileSync(path, 'three');
    now = 119_999;
    expect(await authorization()).toBe('Bearer two');
    now = 120_000;
    expect(await authorization()).toBe('Bearer three');
  });
});

describe('inClusterConnection', () => {
  let accountDir: string;
  beforeAll(() => {
    accountDir = join(dir, 'serviceaccount');
    mkdirSync(accountDir);
    writeFileSync(join(accountDir, 'ca.crt'), 'cluster ca');
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each<[string, string, string, string]>([
    ['an IPv4 host', '10.96.0.1', '443', 'https://10.96.0.1:443'],
    ['an IPv6 host, bracketed', 'fd00:10:96::1', '443', 'https://[fd00:10:96::1]:443'],
    ['a host name', 'kubernetes.default.svc', '6443', 'https://kubernetes.default.svc:6443'],
  ])('builds the server URL for %s', (_, host, port, server) => {
    writeFileSync(join(accountDir, 'token'), 'sa-token');
    const connection = inClusterConnection({ host, port, accountDir });
    expect(connection.server).toBe(server);
    // Must parse as a URL with that host, which an unbracketed IPv6 address would not.
    expect(new URL(connection.server).port).toBe(port === '443' ? '' : port);
    expect(text(connection.ca)).toBe('cluster ca');
    expect(connection.insecure).toBe(false);
  });

  it('picks up the rotated projected token after a minute, not before', async () => {
    // inClusterConnection takes no clock: fake Date before it captures Date.now.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2030-01-01T00:00:00Z') });
    writeFileSync(join(accountDir, 'token'), 'old-token\n');
    const connection = inClusterConnection({ host: '10.96.0.1', port: '443', accountDir });
    expect(await connection.authorization()).toBe('Bearer old-token');

    writeFileSync(join(accountDir, 'token'), 'new-token\n');
    vi.advanceTimersByTime(59_999);
    expect(await connection.authorization()).toBe('Bearer old-token');
    vi.advanceTimersByTime(1);
    expect(await connection.authorization()).toBe('Bearer new-token');
  });
});
