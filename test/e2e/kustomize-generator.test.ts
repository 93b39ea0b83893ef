// The kustomize generator (package.json `bin`) run by real kustomize as an exec KRM function, the
// package built and linked as `npm install` does: the documentation's complete use case builds to
// the documented output, byte for byte (fixtures/kustomize-generator/: its steps 1 to 3 and the
// output of step 4); the data equals what kustomize's own configMapGenerator and secretGenerator
// make of the same sources; the API server accepts what is built (server-side dry run); a key
// given twice, a missing file and the like fail the build with our message.
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { failureOf, objectsOf, run, type K8sObject } from './support/tools.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = join(REPO_ROOT, 'test/e2e/fixtures/kustomize-generator');
/** The name of kruise-tools' executable, which the documented config runs (`path: ./resourcedistributiongenerator`). */
const EXECUTABLE = 'resourcedistributiongenerator';

const temporary: string[] = [];
let bin = '';

async function temporaryDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  temporary.push(dir);
  return dir;
}

/**
 * The package as `npm install` leaves it: dist/ built by `npm run build`'s compiler and options,
 * package.json, its dependencies, and the `bin` file made executable (npm's doing on install).
 */
async function installPackage(): Promise<string> {
  const dir = await temporaryDir('rd-package-');
  const tsc = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', join(REPO_ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')]);
  await copyFile(join(REPO_ROOT, 'package.json'), join(dir, 'package.json'));
  await symlink(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  const { bin: bins } = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { bin?: Record<string, string> };
  const target = bins?.[EXECUTABLE];
  if (target === undefined) throw new Error(`package.json has no bin ${EXECUTABLE}`);
  await chmod(join(dir, target), 0o755);
  return join(dir, target);
}

/** A kustomization directory with these files, and the executable linked where the configs point (as npm links a bin). */
async function workspace(files: Record<string, string | Buffer>): Promise<string> {
  const dir = await temporaryDir('rd-kustomization-');
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), content);
  }
  await symlink(bin, join(dir, EXECUTABLE));
  return dir;
}

const build = async (dir: string): Promise<string> => (await run('kustomize', ['build', '--enable-alpha-plugins', '--enable-exec', dir])).stdout;

async function serverDryRun(yaml: string): Promise<string> {
  return (await run('kubectl', ['apply', '--dry-run=server', '-f', '-'], { input: yaml })).stdout;
}

/** A generator config as the documentation writes them, with `body` (resource, options, targets) under the header. */
function generator(name: string, body: Record<string, unknown>): string {
  const header = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ResourceDistributionGenerator', metadata: { name, annotations: { 'config.kubernetes.io/function': `exec:\n  path: ./${EXECUTABLE}\n` } } };
  return stringify({ ...header, ...body });
}

const kustomization = (fields: Record<string, unknown>): string => stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', ...fields });

beforeAll(async () => {
  bin = await installPackage();
}, 300_000);

afterAll(async () => {
  await Promise.all(temporary.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('the documentation\'s complete use case', () => {
  it('builds to the documented output, and the API server accepts it', async () => {
    const names = ['rdGenerator.yaml', 'application.properties', 'kustomization.yaml'];
    const files = Object.fromEntries(await Promise.all(names.map(async (name) => [name, await readFile(join(FIXTURES, name))] as const)));
    const output = await build(await workspace(files));
    expect(output).toBe(await readFile(join(FIXTURES, 'expected.yaml'), 'utf8'));
    expect(await serverDryRun(output)).toContain('resourcedistribution.apps.kruise.io/rdname created (server dry run)');
  });
});

describe('kustomize\'s generator rules', () => {
  // Sources that exercise the rules: env file comments, blank lines, indentation, CRLF and a byte
  // order mark; quoted literals; key=path; a binary file; values long enough for wrapped base64.
  const sources = {
    'app.env': '\uFEFF# settings\r\nLOG_LEVEL=debug\r\n\r\n   FEATURES=a,b # kept\r\nEMPTY=\r\nNO_VALUE\r\n',
    'config/application.properties': `FOO=Bar\nLONG=${'x'.repeat(120)}\n`,
    'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]),
  };
  const data = { envs: ['app.env'], literals: ['GREETING="hello world"', "QUOTED='x'", 'URL=https://example.com/?a=b'], files: ['config/application.properties', 'settings=config/application.properties'] };
  const disableNameSuffixHash = { disableNameSuffixHash: true };

  it('give the data kustomize\'s own generators give, and what is built is accepted', async () => {
    const dir = await workspace({
      ...sources,
      'secret-generator.yaml': generator('secret-distribution', {
        resource: { resourceKind: 'Secret', resourceName: 'app-secret', type: 'example.com/settings', ...data, resourceOptions: { immutable: true, labels: { team: 'a' } } },
        options: { annotations: { owner: 'platform' }, labels: { version: 'stable' } },
        targets: { allNamespaces: true, excludedNamespaces: ['ns-2'], namespaceLabelSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold', 'bronze'] }, { key: 'env', operator: 'Exists' }] } },
      }),
      'configmap-generator.yaml': generator('configmap-distribution', {
        resource: { resourceKind: 'ConfigMap', resourceName: 'app-config', ...data, files: [...data.files, 'logo.png'] },
        targets: { includedNamespaces: ['ns-1', 'ns-3'] },
      }),
      'kustomization.yaml': kustomization({
        generators: ['secret-generator.yaml', 'configmap-generator.yaml'],
        secretGenerator: [{ name: 'app-secret', type: 'example.com/settings', ...data, options: disableNameSuffixHash }],
        configMapGenerator: [{ name: 'app-config', ...data, files: [...data.files, 'logo.png'], options: disableNameSuffixHash }],
      }),
    });
    const output = await build(dir);
    const objects = objectsOf(output);
    const named = (kind: string, name: string): K8sObject => {
      const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
      if (found === undefined) throw new Error(`no ${kind} ${name} in:\n${output}`);
      return found;
    };
    const secretDistribution = named('ResourceDistribution', 'secret-distribution');
    const configMapDistribution = named('ResourceDistribution', 'configmap-distribution');
    const secret = named('Secret', 'app-secret');
    const configMap = named('ConfigMap', 'app-config');

    const distributed = (distribution: K8sObject): Record<string, unknown> => (distribution.spec as { resource: Record<string, unknown> }).resource;
    expect(distributed(secretDistribution).data).toEqual(secret.data);
    expect(distributed(configMapDistribution).data).toEqual(configMap.data);
    expect(distributed(configMapDistribution).binaryData).toEqual(configMap.binaryData);
    // What the rules make of the sources, beyond being the same as kustomize's.
    expect(Object.keys(configMap.data as object).sort()).toEqual(['EMPTY', 'FEATURES', 'GREETING', 'LOG_LEVEL', 'NO_VALUE', 'QUOTED', 'URL', 'application.properties', 'settings']);
    expect(configMap.data).toMatchObject({ FEATURES: 'a,b # kept', GREETING: 'hello world', QUOTED: 'x', EMPTY: '', NO_VALUE: '' });
    expect(Buffer.from(String((secret.data as Record<string, string>).LOG_LEVEL), 'base64').toString()).toBe('debug');
    expect((secret.data as Record<string, string>).settings).toContain('\n');

    expect(secretDistribution.metadata).toEqual({ name: 'secret-distribution', labels: { version: 'stable' }, annotations: { owner: 'platform' } });
    expect(distributed(secretDistribution)).toMatchObject({ apiVersion: 'v1', kind: 'Secret', type: 'example.com/settings', immutable: true, metadata: { name: 'app-secret', labels: { team: 'a' } } });
    expect(secretDistribution.spec).toMatchObject({
      targets: {
        allNamespaces: true,
        excludedNamespaces: { list: [{ name: 'ns-2' }] },
        namespaceLabelSelector: { matchExpressions: [{ key: 'env', operator: 'Exists' }, { key: 'tier', operator: 'In', values: ['bronze', 'gold'] }] },
      },
    });
    expect(configMapDistribution.spec).toMatchObject({ targets: { includedNamespaces: { list: [{ name: 'ns-1' }, { name: 'ns-3' }] } } });

    const distributions = objects.filter((object) => object.kind === 'ResourceDistribution').map((object) => stringify(object));
    const accepted = await serverDryRun(distributions.join('---\n'));
    expect(accepted).toContain('resourcedistribution.apps.kruise.io/secret-distribution created (server dry run)');
    expect(accepted).toContain('resourcedistribution.apps.kruise.io/configmap-distribution created (server dry run)');
  });

  const documented = (resource: Record<string, unknown>): Record<string, string> => ({
    'application.properties': 'FOO=Bar\n',
    'tracing.env': 'ENABLE_TRACING=true\n',
    'rdGenerator.yaml': generator('rdname', { resource: { resourceKind: 'ConfigMap', resourceName: 'cmname', ...resource }, targets: { includedNamespaces: ['ns-1'] } }),
    'kustomization.yaml': kustomization({ generators: ['rdGenerator.yaml'] }),
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a key given twice', { envs: ['tracing.env'], literals: ['ENABLE_TRACING=false'] }, 'ConfigMap cmname repeats the key "ENABLE_TRACING": from resource.envs[0] "tracing.env" line 1 and from resource.literals[0]'],
    ['a file keyed like a literal', { literals: ['FOO=1'], files: ['FOO=application.properties'] }, 'ConfigMap cmname repeats the key "FOO": from resource.literals[0] and from resource.files[0] "application.properties"'],
    ['a missing file', { files: ['missing.properties'] }, 'cannot read "missing.properties" in '],
    ['a missing env file', { envs: ['missing.env'] }, 'cannot read "missing.env" in '],
    ['a file outside the kustomization', { files: ['../application.properties'] }, '"../application.properties" is outside the kustomization directory'],
    ['a literal without =', { literals: ['JAVA_HOME'] }, 'resource.literals[0]: "JAVA_HOME" is not a literal: expected KEY=VALUE'],
    ['a key the API server refuses', { literals: ['MY KEY=1'] }, 'spec.resource.data["MY KEY"]: "MY KEY" is not a valid key'],
    ['another kind', { resourceKind: 'Deployment' }, 'resource.resourceKind: "Deployment" is not supported: ConfigMap or Secret'],
  ])('%s fails the build with our message', async (_what, resource, message) => {
    const failure = await failureOf(build(await workspace(documented(resource))));
    expect(failure.stderr).toContain(`${EXECUTABLE}: ResourceDistributionGenerator rdname`);
    expect(failure.stderr).toContain(message);
  });

  it('a symbolic link leading out of the kustomization fails the build', async () => {
    const outside = await temporaryDir('rd-outside-');
    await writeFile(join(outside, 'secret.txt'), 'not for this kustomization');
    const dir = await workspace(documented({ files: ['linked.txt'] }));
    await symlink(join(outside, 'secret.txt'), join(dir, 'linked.txt'));
    const failure = await failureOf(build(dir));
    expect(failure.stderr).toContain(`"linked.txt" leads to ${join(outside, 'secret.txt')}, outside the kustomization directory`);
  });

  // Before: the 300 MB file was read whole (2.5 GB of memory) and the generator died with a stack
  // trace instead of the 1 MiB message; the FIFO hung the build.
  it.each<[string, (path: string) => Promise<unknown>, string]>([
    [
      'a 300 MB file',
      async (path) => {
        const file = await open(path, 'w');
        await file.truncate(300 * 1000 * 1000);
        await file.close();
      },
      'cannot read "payload.bin" in ',
    ],
    ['a FIFO', (path) => promisify(execFile)('mkfifo', [path]), 'cannot read "payload.bin" in '],
  ])('%s among its files fails the build at once with our message, before a byte is read', async (what, make, message) => {
    const dir = await workspace(documented({ files: ['payload.bin'] }));
    await make(join(dir, 'payload.bin'));
    const started = Date.now();
    const failure = await failureOf(build(dir));
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(failure.stderr).toContain(`${EXECUTABLE}: ResourceDistributionGenerator rdname: ${message}`);
    expect(failure.stderr).toContain(what === 'a FIFO' ? 'a FIFO (named pipe), not a regular file' : '300000000 bytes, over the 1 MiB (1048576 bytes) a Secret or ConfigMap may hold: split it');
    expect(failure.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('a field it does not know is a warning, and the build goes on', async () => {
    const result = await run('kustomize', ['build', '--enable-alpha-plugins', '--enable-exec', await workspace(documented({ literal: ['A=b'], literals: ['B=c'] }))]);
    expect(result.stderr).toContain(`${EXECUTABLE}: ResourceDistributionGenerator rdname: warning: resource.literal is not a field of ResourceDistributionGenerator`);
    expect(objectsOf(result.stdout)[0]?.spec).toMatchObject({ resource: { data: { B: 'c' } } });
  });
});
