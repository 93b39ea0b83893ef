import { isForbiddenSecretType } from '../domain/copy.js';
import type { Resource, ResourceDistribution } from '../domain/types.js';

/**
 * Admission rejects anything else; this guards against objects stored while the webhook was off
 * (never distribute a forbidden Secret type, whatever got stored).
 */
export function isDistributable(rd: ResourceDistribution): boolean {
  const resource = rd.spec?.resource as Resource | undefined;
  return (
    typeof resource?.metadata?.name === 'string' &&
    (resource.kind === 'ConfigMap' || (resource.kind === 'Secret' && !isForbiddenSecretType(resource.type))) &&
    typeof rd.spec.targets === 'object'
  );
}
