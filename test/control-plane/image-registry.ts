import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { registerTeardown } from './exit-hooks.js';
import { freePorts, httpGet, waitUntilReady } from './network.js';
import { startRelay, type Relay } from './node-network.js';
import { ensureDebianPackages } from './node-packages.js';
import { createCertificateAuthority, issueServingCert } from './pki.js';
import { startProcess } from './processes.js';

const run = promisify(execFile);

/** Debian's docker-registry (the CNCF distribution registry 2.8) and htpasswd for its bcrypt password file. */
const REGISTRY_PACKAGES = {
  owner: "the image registry's",
  packages: ['docker-registry', 'apache2-utils'],
  files: ['/usr/bin/docker-registry', '/usr/bin/htpasswd'],
} as const;

export interface LocalRegistry {
  /** `127.0.0.1:<port>`: the prefix of its image names. */
  host: string;
  dir: string;
  /** Its CA certificate (PEM), and a folder holding it as `ca.crt` (buildah's --cert-dir). */
  caCert: string;
  certDir: string;
  username: string;
  password: string;
  /** `<relayFrom>:<port>`: where a node reaches it (StartRegistryOptions.relayFrom), if asked. */
  nodeHost?: string;
  /** Stops it and removes its folder; rejects if its process or folder is left. */
  stop(): Promise<void>;
  leftovers(): Promise<string[]>;
}

function registryConfig(dir: string, port: number): string {
  // YAML is a superset of JSON: the registry reads this as its configuration file.
  return JSON.stringify({
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: join(dir, 'data') }, delete: { enabled: true } },
    http: {
      addr: `127.0.0.1:${port}`,
      secret: randomBytes(16).toString('hex'),
      tls: { certificate: join(dir, 'tls.crt'), key: join(dir, 'tls.key') },
    },
    auth: { htpasswd: { realm: 'rd-registry', path: join(dir, 'htpasswd') } },
  });
}

export interface StartRegistryOptions {
  /**
   * A machine address that nodes reach (the machine end of a node's link): a relay there forwards
   * to the registry, and its certificate names that address too. A node's 127.0.0.1 is its own.
   */
  relayFrom?: string;
}

/**
 * A private image registry on 127.0.0.1 for one test run: TLS with a CA of its own, every request
 * authenticated (htpasswd, bcrypt), images stored in its temp folder.
 */
export async function startRegistry(log: (line: string) => void, options: StartRegistryOptions = {}): Promise<LocalRegistry> {
  await ensureDebianPackages(REGISTRY_PACKAGES, log);
  const dir = await mkdtemp(join(tmpdir(), 'rd-registry-'));
  const [port] = await freePorts(1);
  const host = `127.0.0.1:${String(port)}`;
  const username = 'rd-pusher';
  const password = randomBytes(12).toString('hex');
  const ca = await createCertificateAuthority('rd-registry-ca');
  const serving = await issueServingCert(ca, '127.0.0.1', [], options.relayFrom ? [options.relayFrom] : []);
  const certDir = join(dir, 'certs');
  await mkdir(certDir);
  const { stdout: htpasswd } = await run('htpasswd', ['-nbB', username, password]);
  await Promise.all([
    writeFile(join(certDir, 'ca.crt'), ca.cert),
    writeFile(join(dir, 'tls.crt'), serving.cert),
    writeFile(join(dir, 'tls.key'), serving.key, { mode: 0o600 }),
    writeFile(join(dir, 'htpasswd'), htpasswd),
    writeFile(join(dir, 'config.yml'), registryConfig(dir, port ?? 0)),
  ]);
  const registry = startProcess('registry', '/usr/bin/docker-registry', ['serve', join(dir, 'config.yml')], dir);
  // Also when the test process exits or is interrupted before stop() (its folder with it).
  const unregister = registerTeardown({
    stop: () => stop(),
    killNow: () => {
      registry.killNow();
      rmSync(dir, { recursive: true, force: true });
    },
  });
  let relay: Relay | undefined;
  const leftovers = async (): Promise<string[]> => {
    const left = registry.hasExited() ? [] : [`process ${String(registry.pid)} (registry)`];
    return (await stat(dir).then(() => true, () => false)) ? [...left, `folder ${dir}`] : left;
  };
  const stop = async (): Promise<void> => {
    await relay?.close();
    await registry.stop();
    await rm(dir, { recursive: true, force: true });
    unregister();
    const left = await leftovers();
    if (left.length > 0) throw new Error(`the registry left ${left.join(', ')}`);
  };
  try {
    // Without credentials the registry answers 401: it is up, and it wants them.
    const answers = async (): Promise<boolean> => (await httpGet(`https://${host}/v2/`, { ca: ca.cert }))?.status === 401;
    await waitUntilReady(registry, 'its /v2/ answers 401', answers, 30_000);
    if (options.relayFrom) relay = await startRelay(options.relayFrom, port ?? 0);
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  const nodeHost = relay ? new URL(relay.url).host : undefined;
  return { host, dir, caCert: ca.cert, certDir, username, password, ...(nodeHost ? { nodeHost } : {}), stop, leftovers };
}
