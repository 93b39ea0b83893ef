// The Go-built command-line tools of the chart, monitoring and health tests (kubectl, helm, promtool,
// kustomize, kstatus): built by the global setup, run here with the control plane's admin kubeconfig.
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, inject } from 'vitest';
import { parseAllDocuments } from 'yaml';

export interface ToolResult {
  stdout: string;
  stderr: string;
}

export class ToolFailed extends Error {
  constructor(
    readonly command: string,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    super(`${command} failed:\n${stderr}${stdout}`);
  }
}

// Helm keeps repositories and plugins under these: none of the user's own.
const HELM = join(tmpdir(), 'rd-helm');
const HELM_HOMES = { HELM_CACHE_HOME: join(HELM, 'cache'), HELM_CONFIG_HOME: join(HELM, 'config'), HELM_DATA_HOME: join(HELM, 'data') };

/** Runs a tool built by the global setup; rejects with ToolFailed (its output) on a non-zero exit. */
export async function run(tool: 'kubectl' | 'helm' | 'promtool' | 'kustomize' | 'kstatus', args: string[], options: { input?: string } = {}): Promise<ToolResult> {
  const path = inject('tools')[tool];
  if (!path) throw new Error(`${tool} was not built by this test tier's global setup`);
  const env = { ...process.env, KUBECONFIG: inject('kubeconfigPath'), ...HELM_HOMES };
  const child = promisify(execFile)(path, args, { env, maxBuffer: 64 * 1024 * 1024 });
  if (options.input !== undefined) {
    child.child.stdin?.end(options.input);
  }
  try {
    return await child;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    throw new ToolFailed(`${tool} ${args.join(' ')}`, failed.stdout ?? '', failed.stderr ?? String(error));
  }
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** Every object of a multi-document YAML stream (empty documents dropped). */
export function objectsOf(yaml: string): K8sObject[] {
  return parseAllDocuments(yaml)
    .map((document) => document.toJS() as K8sObject | null)
    .filter((object): object is K8sObject => object !== null);
}

export const keyOf = (object: K8sObject): string => `${object.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}`;

/** The failure of a tool run expected to fail (its stderr says why). */
export async function failureOf(command: Promise<unknown>): Promise<ToolFailed> {
  const failure = await command.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(ToolFailed);
  return failure as ToolFailed;
}
