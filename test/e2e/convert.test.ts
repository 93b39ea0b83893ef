// `resource-distributor convert` end to end: objects annotated for mittwald replicator and
// emberstack reflector, and a Kyverno clone policy, read back from the cluster as
// `kubectl get -o yaml` prints them, converted by the CLI (--strict: nothing left out), and the
// output applied with the whole product running. The copies appear in the namespaces each tool
// would have filled, including a namespace created afterwards, and in no other; a copy the old
// tool made is handed over in place as the converter's note says.
import { execFile } from 'node:child_process';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { ANNOTATION_ADOPT, LABEL_DISTRIBUTION, type Resource, type ResourceDistribution } from '../../src/domain/types.js';
import { startLocalServer, type RunningServer } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { connectionOf } from '../kube-client.js';
import { Kube } from './fixtures/kube.js';
import { loadKubeConfig, uniqueName, waitFor } from './support/cluster.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET_VALUE = Buffer.from('replicated-secret-value').toString('base64');
const OLD_VALUE = Buffer.from('value-of-an-older-replication').toString('base64');
const PULL_LABEL = 'e2e.example.com/convert-pull';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const kc = loadKubeConfig();
const kube = new Kube(kc);
const run = uniqueName('cv');
let server: RunningServer;
let source: string;
/** Namespaces by role: `team-a` is `<run>-team-a`, and so on. */
const ns = (role: string): string => `${run}-${role}`;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI as a user runs it, the input on stdin (`convert -`). */
function convert(input: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--import', 'tsx', 'src/convert/cli.ts', 'convert', ...args, '-'], { cwd: REPO_ROOT }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr });
    });
    child.stdin?.end(input);
  });
}

const replicatorSecret = (): Resource => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'replicated', namespace: source, annotations: { 'replicator.v1.mittwald.de/replicate-to': `${ns('ops')},${ns('team')}-.*` } },
  type: 'Opaque',
  data: { password: SECRET_VALUE },
});

const reflectorConfigMap = (): Resource => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'reflected',
    namespace: source,
    annotations: {
      'reflector.v1.k8s.emberstack.com/reflection-allowed': 'true',
      'reflector.v1.k8s.emberstack.com/reflection-allowed-namespaces': `${ns('team')}-.*,${ns('ops')}`,
      'reflector.v1.k8s.emberstack.com/reflection-auto-enabled': 'true',
      'reflector.v1.k8s.emberstack.com/reflection-auto-namespaces': `${ns('team-a')},${ns('other')}`,
    },
  },
  data: { setting: 'on' },
});

const kyvernoPolicy = (): object => ({
  apiVersion: 'kyverno.io/v1',
  kind: 'ClusterPolicy',
  metadata: { name: `${run}-sync-pull-secret` },
  spec: {
    generateExisting: true,
    rules: [{
      name: 'clone-pull-secret',
      match: { any: [{ resources: { kinds: ['Namespace'], selector: { matchLabels: { [PULL_LABEL]: run } } } }] },
      exclude: { any: [{ resources: { names: [ns('pull-excluded')] } }] },
      generate: { apiVersion: 'v1', kind: 'Secret', name: 'pull', namespace: '{{request.object.metadata.name}}', synchronize: true, clone: { namespace: source, name: 'pull' } },
    }],
  },
});

beforeAll(async () => {
  source = (await kube.createNamespace('cv-source')).metadata!.name!;
  for (const role of ['team-a', 'team-b', 'ops', 'other']) await kube.createNamed(ns(role));
  for (const role of ['pull-1', 'pull-excluded']) await kube.createNamed(ns(role), { [PULL_LABEL]: run });
  await kube.put(replicatorSecret());
  // The copy replicator made before the migration, as it marks its copies.
  await kube.put({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'replicated', namespace: ns('team-a'), annotations: { 'replicator.v1.mittwald.de/replicated-at': '2026-11-01T00:00:00Z', 'replicator.v1.mittwald.de/replicated-from-version': '1' } },
    type: 'Opaque',
    data: { password: OLD_VALUE },
  });
  await kube.put(reflectorConfigMap());
  await kube.put({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pull', namespace: source }, type: 'Opaque', data: { token: SECRET_VALUE } });
  server = await startLocalServer({
    connection: connectionOf(kc),
    metrics: createMetrics(),
    overrides: { webhookNames: { distributions: uniqueName('e2e-convert-distributions'), namespaces: uniqueName('e2e-convert-namespaces') }, shutdownDelayMs: 0 },
  });
});

afterAll(async () => {
  await server?.stop();
  await kube.cleanup();
});

/** Where copies of `kind` `name` exist among this file's namespaces. */
async function holders(kind: 'Secret' | 'ConfigMap', name: string): Promise<string[]> {
  const roles = ['team-a', 'team-b', 'ops', 'other', 'pull-1', 'pull-excluded', 'pull-later'];
  const found: string[] = [];
  for (const role of roles) if ((await kube.get(kind, ns(role), name)) !== undefined) found.push(role);
  return found;
}

async function settledHolders(kind: 'Secret' | 'ConfigMap', name: string, expected: string[]): Promise<string[]> {
  return waitFor(async () => {
    const found = await holders(kind, name);
    return JSON.stringify(found) === JSON.stringify(expected) ? found : undefined;
  }, { what: `copies of ${kind} ${name} in ${expected.join(', ')}`, timeoutMs: 30_000 });
}

describe('resource-distributor convert, applied to the cluster', () => {
  let distributions: ResourceDistribution[] = [];

  it('converts what kubectl get prints for the annotated objects and the policy, leaving nothing out', async () => {
    // As `kubectl get secrets,configmaps -n <source> -o yaml` prints them: server fields and all.
    const items = [await kube.get('Secret', source, 'replicated'), await kube.get('ConfigMap', source, 'reflected'), await kube.get('Secret', source, 'pull'), await kube.get('Secret', ns('team-a'), 'replicated')];
    const input = `${stringify({ apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } })}---\n${stringify(kyvernoPolicy())}`;
    const result = await convert(input, '--strict');
    expect(result.stderr).not.toContain('not converted');
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(SECRET_VALUE);
    expect(result.stdout + result.stderr).not.toContain(OLD_VALUE);
    expect(result.stderr).toContain(`note: Secret ${ns('team-a')}/replicated: made or filled by mittwald replicator; to keep it in place, hand it over: kubectl annotate secret replicated -n ${ns('team-a')} ${ANNOTATION_ADOPT}=${source}-replicated`);
    distributions = parseAllDocuments(result.stdout).map((document) => document.toJS() as ResourceDistribution);
    expect(distributions.map((distribution) => distribution.metadata.name).sort()).toEqual([`${source}-pull`, `${source}-reflected`, `${source}-replicated`]);
  });

  it('copies where each tool would have, and nowhere else', async () => {
    const before = await kube.get('Secret', ns('team-a'), 'replicated');
    for (const distribution of distributions) await kube.createDistribution(distribution);
    // The hand-over the converter's note prints, done as its kubectl commands do it.
    await kube.core.patchNamespacedSecret({ name: 'replicated', namespace: ns('team-a'), body: { metadata: { annotations: { [ANNOTATION_ADOPT]: `${source}-replicated` }, labels: { [LABEL_DISTRIBUTION]: `${source}-replicated` } } } }, merge);
    // The product's own count of targets: what it will ever write, not only what is there yet.
    for (const [name, desired] of [['replicated', 3], ['reflected', 1], ['pull', 1]] as const) {
      await kube.waitForStatus(`${source}-${name}`, (status) => status.desired === desired && status.succeeded === desired);
    }
    // replicator: `<run>-ops` by name and `<run>-team-.*` as a pattern.
    await settledHolders('Secret', 'replicated', ['team-a', 'team-b', 'ops']);
    const copy = await kube.waitForObject('Secret', ns('team-a'), 'replicated', (object) => object?.data?.password === SECRET_VALUE);
    expect(copy?.metadata.uid).toBe(before?.metadata.uid);
    // The source's own replicator annotations reach no copy (a fresh one carries none; the handed-over
    // one keeps the marks replicator put on it, which are not the distribution's to remove).
    expect(Object.keys(copy?.metadata.annotations ?? {})).not.toContain('replicator.v1.mittwald.de/replicate-to');
    const fresh = await kube.get('Secret', ns('team-b'), 'replicated');
    expect(Object.keys(fresh?.metadata.annotations ?? {}).filter((key) => key.startsWith('replicator.'))).toEqual([]);
    // reflector: automatic namespaces that are also allowed (`<run>-other` is not allowed).
    await settledHolders('ConfigMap', 'reflected', ['team-a']);
    // Kyverno: labelled namespaces but the excluded one, and a labelled namespace created now.
    await settledHolders('Secret', 'pull', ['pull-1']);
    await kube.createNamed(ns('pull-later'), { [PULL_LABEL]: run });
    await settledHolders('Secret', 'pull', ['pull-1', 'pull-later']);
    // replicator: a namespace created now that its pattern matches.
    await kube.createNamed(ns('team-c'));
    await kube.waitForObject('Secret', ns('team-c'), 'replicated', (object) => object?.data?.password === SECRET_VALUE);
  });

  it('fails with --strict, listing it, when something cannot be converted', async () => {
    const secret = { ...replicatorSecret(), metadata: { name: 'x', namespace: source, annotations: { 'replicator.v1.mittwald.de/replicate-to': 'namespace-[0-9]*' } } };
    const result = await convert(stringify(secret), '--strict');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not converted: Secret');
    expect(result.stderr).toContain('"namespace-[0-9]*"');
    expect(result.stdout).toContain('# not converted: Secret');
    expect(result.stdout + result.stderr).not.toContain(SECRET_VALUE);
  });
});
