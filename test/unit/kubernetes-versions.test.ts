// Which wrapper module the control plane is built from: the default one unless
// RD_KUBERNETES_VERSION names a minor of test/control-plane/versions/, and every committed module of
// the version matrix pins the Kubernetes version its folder names, with Kubernetes' staging modules
// replaced at the same version.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kubernetesModuleDir, kubernetesVersion, MODULE_DIR, VERSIONS_DIR } from '../control-plane/binaries.js';

const committed = (await readdir(VERSIONS_DIR)).filter((name) => /^v1\.\d+$/.test(name));

describe('kubernetesModuleDir', () => {
  const cases: [string | undefined, string][] = [
    [undefined, MODULE_DIR],
    ['', MODULE_DIR],
    ...committed.map((folder): [string, string] => [folder.slice(1), join(VERSIONS_DIR, folder)]),
  ];
  it.each(cases)('selects for %j the module %s', async (selected, dir) => {
    expect(await kubernetesModuleDir(selected)).toBe(dir);
  });

  it.each([
    ['1.30.14', /is not a Kubernetes minor/],
    ['v1.30', /is not a Kubernetes minor/],
    ['../1.30', /is not a Kubernetes minor/],
    ['1.2', /no wrapper module for Kubernetes 1\.2 .*have: \d/],
  ])('refuses %j', async (selected, message) => {
    await expect(kubernetesModuleDir(selected)).rejects.toThrow(message);
  });
});

describe('the committed wrapper modules', () => {
  it('cover at least an older and a newer minor than the default', async () => {
    const minor = (version: string): number => Number(version.split('.')[1]);
    const defaultMinor = minor(await kubernetesVersion(join(MODULE_DIR, 'go.mod')));
    const minors = committed.map((folder) => Number(folder.split('.')[1]));
    expect(Math.min(...minors)).toBeLessThan(defaultMinor);
    expect(Math.max(...minors)).toBeGreaterThan(defaultMinor);
  });

  it.each(committed)('%s pins a patch of its minor and replaces every staging module at it', async (folder) => {
    const goMod = await readFile(join(VERSIONS_DIR, folder, 'go.mod'), 'utf8');
    const version = await kubernetesVersion(join(VERSIONS_DIR, folder, 'go.mod'));
    expect(version.startsWith(`${folder}.`)).toBe(true);
    const staging = `v0${version.slice(2)}`;
    const replaced = [...goMod.matchAll(/^\s*(k8s\.io\/\S+) => (k8s\.io\/\S+) (v\S+)$/gm)];
    expect(replaced.length).toBeGreaterThan(25);
    for (const [, from, to, at] of replaced) expect([to, at]).toEqual([from, staging]);
  });
});
