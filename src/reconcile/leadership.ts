// Who runs the queue and the sweep: the leader alone (a Lease), or this replica at once when
// leader election is off. Caches and admission run on every replica regardless.
import type { Clock } from '../domain/clock.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ClusterApi } from '../k8s/cluster-api.js';
import type { KubeClient } from '../k8s/kube-client.js';
import { LeaderElector, leaseStoreFromApi, type LeaseSettings } from '../k8s/leader-election.js';
import type { WorkQueue } from './queue.js';
import type { Sweeper } from './sweeper.js';

export interface LeadershipDeps {
  election: LeaseSettings & { enabled: boolean };
  api: ClusterApi;
  clock: Clock;
  log: Logger;
  metrics: Pick<Metrics, 'isLeader'>;
  queue: Pick<WorkQueue, 'start' | 'stop'>;
  sweeper: Pick<Sweeper, 'start' | 'stop'>;
  /** The request connections the leader keeps open, one per write in flight (`writers`). */
  connections: Pick<KubeClient, 'keepOpen'>;
  writers: number;
  stopping(): boolean;
}

export interface Leadership {
  leading(): boolean;
  /** Campaigns for the lease (or leads at once without election). */
  start(): void;
  /** Finishes the writes in flight while the lease is still ours, then hands it over. */
  stop(): Promise<void>;
}

export function createLeadership(deps: LeadershipDeps): Leadership {
  const { election, metrics, queue, sweeper } = deps;
  let leading = false;

  function startLeading(): void {
    if (deps.stopping()) return;
    leading = true;
    metrics.isLeader.set(1);
    queue.start();
    sweeper.start();
    // A rare change, hours after the last, then writes at once instead of opening (and the API
    // server accepting) a TLS connection per write in flight: about 70 ms at 500 copies.
    deps.connections.keepOpen(deps.writers);
  }

  /** Resolves once no reconcile runs, also when leadership already ended (stop() must wait for those). */
  function stopLeading(): Promise<void> {
    if (leading) {
      leading = false;
      metrics.isLeader.set(0);
      sweeper.stop();
      deps.connections.keepOpen(0);
    }
    return queue.stop();
  }

  const elector = election.enabled
    ? new LeaderElector({
        ...election,
        store: leaseStoreFromApi(deps.api, election.leaseNamespace, election.leaseName),
        clock: deps.clock,
        log: deps.log,
        onStartedLeading: startLeading,
        onStoppedLeading: () => void stopLeading(),
      })
    : undefined;

  return {
    leading: () => leading,
    start: () => {
      if (elector) elector.start();
      else startLeading();
    },
    stop: async () => {
      await stopLeading();
      await elector?.stop();
    },
  };
}
