// A client that keeps working while OpenKruise hands the ResourceDistribution API over to us:
// namespaces created, distributions created in v1alpha1 and v1beta1, and two standing
// distributions updated, one in each version. Every request that fails is kept, with the phase of
// the switch it fell in, so that the migration test can say which step broke admission.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL } from '../../../src/domain/types.js';
import { uniqueName } from './cluster.js';

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export type ApiVersion = 'v1alpha1' | 'v1beta1';

export interface TrafficResult {
  /** Requests per phase of the switch and request kind, e.g. `ours-up: create v1alpha1`. */
  requests: Record<string, number>;
  /** `<phase>: <request>: <error>` of each request that failed. */
  failures: string[];
}

export interface SwitchTraffic {
  /** Names the step of the switch the next requests fall in. */
  phase(name: string): void;
  /** Resolves once a whole round of requests (one of each kind) has run within the current phase. */
  round(): Promise<void>;
  stop(): Promise<TrafficResult>;
}

const configMap = (name: string, data: Record<string, string>): object => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

/** A distribution of one ConfigMap to the namespaces labelled `wave=<wave>`, in either version's words. */
function distribution(version: ApiVersion, name: string, wave: string): object {
  const selector = { matchLabels: { wave } };
  const targets = version === 'v1alpha1' ? { namespaceLabelSelector: selector } : { namespaceSelector: selector };
  return { apiVersion: `${GROUP}/${version}`, kind: 'ResourceDistribution', metadata: { name }, spec: { resource: configMap(name, { wave }), targets } };
}

function describeError(error: unknown): string {
  const { code, body, message } = error as { code?: number; body?: unknown; message?: string };
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? message ?? String(error));
  return `${String(code ?? '')} ${text.slice(0, 400)}`;
}

/**
 * Starts the client; `standing` names one distribution per version (created here, before the
 * switch) that it keeps updating. Nothing it creates is removed: the control plane is the test's own.
 */
export async function startSwitchTraffic(kc: KubeConfig, prefix: string): Promise<SwitchTraffic> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const standing: Record<ApiVersion, string> = { v1alpha1: uniqueName(`${prefix}-a`), v1beta1: uniqueName(`${prefix}-b`) };
  for (const version of ['v1alpha1', 'v1beta1'] as const) {
    await custom.createClusterCustomObject({ group: GROUP, version, plural: PLURAL, body: distribution(version, standing[version], 'standing') });
  }
  const requests: Record<string, number> = {};
  const failures: string[] = [];
  let phase = 'kruise';
  let running = true;
  let waiting: { phase: string; resolve: () => void }[] = [];
  const attempt = async (what: string, request: () => Promise<unknown>): Promise<void> => {
    const key = `${phase}: ${what}`;
    requests[key] = (requests[key] ?? 0) + 1;
    await request().catch((error: unknown) => failures.push(`${key}: ${describeError(error)}`));
  };
  const loop = (async () => {
    for (let round = 0; running; round++) {
      const started = phase;
      const wave = `${prefix}-${String(round)}`;
      await attempt('create namespace', () => core.createNamespace({ body: { metadata: { name: uniqueName(prefix), labels: { wave } } } }));
      for (const version of ['v1alpha1', 'v1beta1'] as const) {
        await attempt(`create ${version}`, () => custom.createClusterCustomObject({ group: GROUP, version, plural: PLURAL, body: distribution(version, uniqueName(`${prefix}-${version}`), wave) }));
        const body = { spec: { resource: configMap(standing[version], { wave: 'standing', round: String(round) }) } };
        await attempt(`update ${version}`, () => custom.patchClusterCustomObject({ group: GROUP, version, plural: PLURAL, name: standing[version], body }, merge));
      }
      for (const waiter of waiting.filter((w) => w.phase === started && started === phase)) waiter.resolve();
      waiting = waiting.filter((w) => w.phase !== started || started !== phase);
    }
    for (const waiter of waiting) waiter.resolve();
  })();
  return {
    phase: (name) => {
      phase = name;
    },
    round: () => new Promise((resolve) => waiting.push({ phase, resolve })),
    stop: async () => {
      running = false;
      await loop;
      return { requests, failures };
    },
  };
}
