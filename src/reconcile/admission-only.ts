import type { Controller } from './controller.js';

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
    previewPlan: () => undefined,
    podAdmitted: () => ({ pending: 0, inPlace: 0, missing: 0 }),
    podInjection: () => ({ names: [], patch: [] }),
  };
}
