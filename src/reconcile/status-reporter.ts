// The end of a pass: the status computed from its outcomes (pure, clock passed in), written only
// when it changed, with a Warning Event for each failure that is new.
import type { Clock } from '../domain/clock.js';
import { computeStatus, statusEquals, type HeldCopies, type PassOutcomes, type SourceStatus } from '../domain/status.js';
import { REGISTRY_SECRET_TYPES, type ResolvedDistribution, type ResourceDistribution } from '../domain/types.js';
import type { Logger } from '../log.js';
import type { EventRecorder } from '../k8s/event-recorder.js';
import type { DistributionCatalog } from './distribution-catalog.js';
import { eventsFor } from './events.js';

export interface StatusReporterDeps {
  catalog: Pick<DistributionCatalog, 'writeStatus'>;
  events: EventRecorder;
  clock: Clock;
  log: Logger;
}

export interface StatusReporter {
  /** `undistributable`: nothing is copied, and why (the NotDistributable condition). */
  writeStatus(rd: ResourceDistribution, found: PassOutcomes, source?: SourceStatus, undistributable?: HeldCopies): Promise<void>;
  /** spec.imagePullSecretInjection on a source that turns out not to be a registry Secret: pods get nothing; said once per source content. */
  checkInjection(rd: ResolvedDistribution): Promise<void>;
}

export function createStatusReporter(deps: StatusReporterDeps): StatusReporter {
  const { catalog, events, clock, log } = deps;
  /** Sources whose injection could not be honoured, said once per source content (a Warning Event). */
  const injectionWarned = new Set<string>();

  return {
    async writeStatus(rd, found, source, undistributable) {
      const status = computeStatus({ distribution: rd, ...found, now: clock(), ...(source ? { source } : {}), ...(undistributable ? { undistributable } : {}) });
      if (statusEquals(rd.status, status)) return;
      if (!(await catalog.writeStatus(rd, status))) return;
      log.info({ name: rd.metadata.name, desired: status.desired, succeeded: status.succeeded, failed: status.failed }, 'status written');
      for (const event of eventsFor(rd.status, status)) await events.warning(rd, event.reason, event.message);
    },
    async checkInjection(rd) {
      const mode = rd.spec.imagePullSecretInjection;
      if (rd.spec.source === undefined || mode === undefined || mode === 'Never') return;
      const { kind, type } = rd.spec.resource;
      if (kind === 'Secret' && REGISTRY_SECRET_TYPES.includes(type ?? '')) return;
      const key = `${rd.metadata.name}/${rd.metadata.generation ?? ''}/${type ?? ''}`;
      if (injectionWarned.has(key)) return;
      injectionWarned.add(key);
      const { namespace, name } = rd.spec.source;
      await events.warning(rd, 'InjectionNotPossible', `spec.imagePullSecretInjection ${mode}: source ${kind} ${namespace}/${name} is not a registry Secret (type ${type ?? 'none'}); no pod gets it named`);
    },
  };
}
