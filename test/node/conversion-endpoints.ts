// What the API server's conversion calls meet while replicas come and go: every address the
// conversion Service routes to (its EndpointSlices) is dialled every 100 ms, and a distribution is
// written in v1alpha1 every 250 ms (stored as v1beta1, so each write is converted).
import { connect } from 'node:net';
import { CustomObjectsApi, DiscoveryV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, PLURAL, VERSION } from '../../src/domain/types.js';

export interface ConversionTraffic {
  /** Dials made to a listed address, and those not answered (`ip:port code after ms`). */
  dials: number;
  refused: string[];
  /** Every address the Service listed meanwhile. */
  addresses: Set<string>;
  writes: number;
  failedWrites: string[];
}

/** Connects to `host:port` and closes at once: undefined when it connected, the error's code otherwise. */
function dial(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('ETIMEDOUT');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

export function conversionTraffic(kubeConfig: KubeConfig, options: { namespace: string; service: string; distribution: string }): { stop: () => Promise<ConversionTraffic> } {
  const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const started = Date.now();
  const traffic: ConversionTraffic = { dials: 0, refused: [], addresses: new Set(), writes: 0, failedWrites: [] };
  let running = true;
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

  const dialling = (async () => {
    while (running) {
      const slices = await discovery.listNamespacedEndpointSlice({ namespace: options.namespace, labelSelector: `kubernetes.io/service-name=${options.service}` });
      const targets = slices.items.flatMap((slice) =>
        (slice.endpoints ?? [])
          .filter((endpoint) => endpoint.conditions?.ready !== false)
          .flatMap((endpoint) => endpoint.addresses.map((address) => ({ address, port: slice.ports?.[0]?.port ?? 0 }))),
      );
      await Promise.all(
        targets.map(async ({ address, port }) => {
          traffic.addresses.add(address);
          traffic.dials++;
          const failure = await dial(address, port);
          if (failure !== undefined) traffic.refused.push(`${address}:${String(port)} ${failure} after ${String(Date.now() - started)} ms`);
        }),
      );
      await pause(100);
    }
  })();

  const writing = (async () => {
    while (running) {
      traffic.writes++;
      const body = { spec: { resource: { data: { value: String(traffic.writes) } } } };
      await custom
        .patchClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, name: options.distribution, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))
        .catch((error: unknown) => traffic.failedWrites.push(`write ${String(traffic.writes)}: ${error instanceof Error ? error.message : String(error)}`));
      await pause(250);
    }
  })();

  return {
    stop: async () => {
      running = false;
      await Promise.all([dialling, writing]);
      return traffic;
    },
  };
}
