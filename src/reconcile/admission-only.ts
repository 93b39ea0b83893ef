import type { PlanTally } from '../domain/plan-preview.js';
import type { Steps } from '../domain/steps.js';
import type { Controller } from './controller.js';

// Says at once that it cannot tell: no step to pause between.
// eslint-disable-next-line require-yield
function* nothingToPreview(): Steps<PlanTally | undefined> {
  return undefined;
}

/**
 * The controller of a server that only admits (RD_RECONCILE=false), as on a fleet's control plane
 * where member clusters distribute: it watches nothing and writes nothing, so admission reads no
 * cache (namespaces and plans "cannot tell") and the generation webhooks are not registered.
 */
export function admissionOnlyController(): Controller {
  return {
    start: () => Promise.resolve(),
    stop: () => Promise.resolve(),
    synced: () => true,
    isLeader: () => false,
    namespaceAdmitted: () => undefined,
    namespaceExists: () => undefined,
    previewPlan: nothingToPreview,
    podAdmitted: () => ({ pending: 0, inPlace: 0, missing: 0 }),
    podInjection: () => ({ names: [], patch: [] }),
  };
}
