// The chart as an OCI artifact, published as users publish it: `helm package`, then `helm push` to
// a registry (here the node tier's: TLS with a CA of its own, htpasswd), so that `helm install
// oci://…` installs it from there.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { run } from '../e2e/support/tools.js';
import type { LocalRegistry } from '../control-plane/image-registry.js';

export interface PublishedChart {
  /** `oci://<registry>/charts/<name>`: what `helm install` is given. */
  reference: string;
  version: string;
  /** The registry's CA and credentials, as `helm install` and `helm show` take them. */
  registryFlags: string[];
  remove(): Promise<void>;
}

/** Packages `chartDir` and pushes it to `registry` under `charts/`. */
export async function publishChart(chartDir: string, registry: Pick<LocalRegistry, 'host' | 'caCert' | 'username' | 'password'>): Promise<PublishedChart> {
  const chart = parse(await readFile(join(chartDir, 'Chart.yaml'), 'utf8')) as { name: string; version: string };
  const dir = await mkdtemp(join(tmpdir(), 'rd-oci-chart-'));
  const caFile = join(dir, 'registry-ca.crt');
  await writeFile(caFile, registry.caCert);
  const registryFlags = ['--ca-file', caFile, '--username', registry.username, '--password', registry.password];
  await run('helm', ['package', chartDir, '--destination', dir]);
  await run('helm', ['push', join(dir, `${chart.name}-${chart.version}.tgz`), `oci://${registry.host}/charts`, ...registryFlags]);
  return {
    reference: `oci://${registry.host}/charts/${chart.name}`,
    version: chart.version,
    registryFlags,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
