// The baseline for a new namespace's copies at scale: the Go write loop creates each namespace
// and, as soon as its create call answers, the same objects the product writes there (ten
// ConfigMaps and one Secret, the same data and the ownerReference to a distribution), all at once:
// the fastest honest way to give a new namespace its copies from this machine, timed the same way.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unixMsToPerformance } from './wall-clock.js';
import { promisify } from 'node:util';
import type { ResourceDistribution } from '../src/domain/types.js';
import { ensureBenchProgram } from '../test/control-plane/index.js';
import { BASELINE_LABEL } from './fan-out.js';

/** Each namespace's create call on this process's performance clock: sent, answered. */
export type CreateCalls = Map<string, { sentAt: number; at: number }>;

interface NamespacesAnswer {
  errors: number;
  firstError: string;
  namespaces: { name: string; sentAtUnixMs: number; atUnixMs: number }[];
}

export const NAMESPACE_BASELINE_SELECTOR = `${BASELINE_LABEL}=new-namespace`;

/**
 * Creates `namespaces` at `perSecond` with the Go loop, each followed by `configMaps` ConfigMaps and
 * one Secret carrying `data` and an ownerReference to `owner`; labelled for NAMESPACE_BASELINE_SELECTOR.
 */
export async function clientCreatesNamespaces(options: {
  kubeconfigPath: string;
  namespaces: readonly string[];
  perSecond: number;
  configMaps: number;
  data: Record<string, string>;
  owner: ResourceDistribution;
}): Promise<CreateCalls> {
  const binary = await ensureBenchProgram('write-loop', { log: (line) => console.error(`[bench] ${line}`) });
  const dir = await mkdtemp(join(tmpdir(), 'rd-bench-namespaces-'));
  const { apiVersion, kind, metadata } = options.owner;
  const files = { namespaces: join(dir, 'namespaces'), payload: join(dir, 'payload.json'), annotations: join(dir, 'annotations.json'), owners: join(dir, 'owners.json') };
  await writeFile(files.namespaces, `${options.namespaces.join('\n')}\n`);
  await writeFile(files.payload, JSON.stringify(options.data));
  // The sizes of a copy's own annotations (source, hash, time distributed).
  await writeFile(files.annotations, JSON.stringify({ 'bench.resource-distributor.io/from': metadata.name, 'bench.resource-distributor.io/hash': 'f'.repeat(64), 'bench.resource-distributor.io/at': new Date().toISOString() }));
  await writeFile(files.owners, JSON.stringify([{ apiVersion, kind, name: metadata.name, uid: metadata.uid, controller: true, blockOwnerDeletion: true }]));
  const args = ['-kubeconfig', options.kubeconfigPath, '-mode', 'namespaces', '-namespaces', files.namespaces, '-name', 'bench-baseline', '-label', NAMESPACE_BASELINE_SELECTOR];
  args.push('-rate', String(options.perSecond), '-configmaps', String(options.configMaps), '-secrets', '1', '-payload', files.payload, '-annotations', files.annotations, '-owner-references', files.owners);
  const { stdout } = await promisify(execFile)(binary, args, { maxBuffer: 1 << 22 });
  const answer = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as NamespacesAnswer;
  if (answer.errors > 0) throw new Error(`the Go loop (namespaces) had ${answer.errors} errors: ${answer.firstError}`);
  return new Map(answer.namespaces.map((ns) => [ns.name, { sentAt: unixMsToPerformance(ns.sentAtUnixMs), at: unixMsToPerformance(ns.atUnixMs) }]));
}
