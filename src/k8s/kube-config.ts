// Where the API server is and how to authenticate to it: a kubeconfig file (current context), or
// the in-cluster ServiceAccount. Only what a controller needs is read here; credentials computed
// by a plugin (exec, auth-provider) are delegated to @kubernetes/client-node, loaded only then.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { parse } from 'yaml';

export interface Connection {
  /** https://host:port (no trailing slash). */
  server: string;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** insecure-skip-tls-verify */
  insecure: boolean;
  servername?: string;
  /** The Authorization header value for the next request (a rotated token is picked up). */
  authorization(): Promise<string | undefined>;
}

export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

type Fields = Record<string, unknown>;

interface Named {
  name: string;
  fields: Fields;
}

/** Token files are re-read this often, as client-go does: projected ServiceAccount tokens rotate. */
const TOKEN_REFRESH_MS = 60_000;

function str(fields: Fields, key: string): string | undefined {
  const value = fields[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function namedList(root: Fields, key: string, inner: string): Named[] {
  const list = root[key];
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry: unknown) => {
    const item = entry as Fields | null;
    const name = item ? str(item, 'name') : undefined;
    const fields = item?.[inner];
    return name !== undefined && fields !== null && typeof fields === 'object' ? [{ name, fields: fields as Fields }] : [];
  });
}

function pick(list: readonly Named[], name: string | undefined, what: string): Fields {
  const found = list.find((item) => item.name === name);
  if (!found) throw new KubeConfigError(`kubeconfig: ${what} ${JSON.stringify(name ?? '')} not found`);
  return found.fields;
}

/** `<key>-data` (base64) wins over `<key>` (a file path, relative to the kubeconfig's folder). */
function material(fields: Fields, key: string, baseDir: string): Buffer | undefined {
  const data = str(fields, `${key}-data`);
  if (data !== undefined) return Buffer.from(data, 'base64');
  const file = str(fields, key);
  if (file === undefined) return undefined;
  return readFileSync(isAbsolute(file) ? file : join(baseDir, file));
}

/** A bearer token read from a file, re-read once it is older than a minute. */
export function tokenFileAuthorization(path: string, now: () => number = Date.now): () => Promise<string | undefined> {
  let token: string | undefined;
  let readAt = -Infinity;
  return () => {
    if (token === undefined || now() - readAt >= TOKEN_REFRESH_MS) {
      token = readFileSync(path, 'utf8').trim();
      readAt = now();
    }
    return Promise.resolve(`Bearer ${token}`);
  };
}

/** exec and auth-provider users: the official client runs the plugin and caches what it returns. */
function pluginAuthorization(kubeconfigText: string, contextName: string): () => Promise<string | undefined> {
  let load: Promise<{ applyToHTTPSOptions(opts: { headers?: Record<string, unknown> }): Promise<void> }> | undefined;
  return async () => {
    load ??= import('@kubernetes/client-node').then(({ KubeConfig }) => {
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfigText);
      kc.setCurrentContext(contextName);
      return kc;
    });
    const opts: { headers?: Record<string, unknown> } = {};
    await (await load).applyToHTTPSOptions(opts);
    const header = opts.headers?.Authorization ?? opts.headers?.authorization;
    return typeof header === 'string' ? header : undefined;
  };
}

function userAuthorization(user: Fields, baseDir: string, text: string, context: string): () => Promise<string | undefined> {
  const token = str(user, 'token');
  if (token !== undefined) return () => Promise.resolve(`Bearer ${token}`);
  const tokenFile = str(user, 'tokenFile');
  if (tokenFile !== undefined) return tokenFileAuthorization(isAbsolute(tokenFile) ? tokenFile : join(baseDir, tokenFile));
  if (user.exec !== undefined || user['auth-provider'] !== undefined) return pluginAuthorization(text, context);
  const username = str(user, 'username');
  if (username !== undefined) {
    const basic = `Basic ${Buffer.from(`${username}:${str(user, 'password') ?? ''}`).toString('base64')}`;
    return () => Promise.resolve(basic);
  }
  return () => Promise.resolve(undefined);
}

/** The current context (or `contextName`) of a kubeconfig; relative paths resolve against `baseDir`. */
export function connectionFromKubeconfig(text: string, baseDir: string, contextName?: string): Connection {
  const root = (parse(text) ?? {}) as Fields;
  const name = contextName ?? str(root, 'current-context');
  const context = pick(namedList(root, 'contexts', 'context'), name, 'context');
  const cluster = pick(namedList(root, 'clusters', 'cluster'), str(context, 'cluster'), 'cluster');
  const user = str(context, 'user') === undefined ? {} : pick(namedList(root, 'users', 'user'), str(context, 'user'), 'user');
  const server = str(cluster, 'server');
  if (server === undefined) throw new KubeConfigError(`kubeconfig: cluster ${JSON.stringify(str(context, 'cluster'))} has no server`);
  if (!server.startsWith('https://')) throw new KubeConfigError(`kubeconfig: server ${server} is not https`);
  const servername = str(cluster, 'tls-server-name');
  const ca = material(cluster, 'certificate-authority', baseDir);
  const cert = material(user, 'client-certificate', baseDir);
  const key = material(user, 'client-key', baseDir);
  return {
    server: server.replace(/\/+$/, ''),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(servername ? { servername } : {}),
    authorization: userAuthorization(user, baseDir, text, name ?? ''),
  };
}

export function connectionFromKubeconfigFile(path: string): Connection {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new KubeConfigError(`kubeconfig ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  return connectionFromKubeconfig(text, dirname(path));
}

export interface InClusterSettings {
  host: string;
  port: string;
  /** Default /var/run/secrets/kubernetes.io/serviceaccount. */
  accountDir?: string;
}

/** The ServiceAccount mounted into the pod; its token is projected and rotates. */
export function inClusterConnection(settings: InClusterSettings): Connection {
  const dir = settings.accountDir ?? '/var/run/secrets/kubernetes.io/serviceaccount';
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  return {
    server: `https://${host}:${settings.port}`,
    ca: readFileSync(join(dir, 'ca.crt')),
    insecure: false,
    authorization: tokenFileAuthorization(join(dir, 'token')),
  };
}
