// Reviews sent straight to the distribution webhook carry the author that the mutating webhook
// would have recorded for their user: the validating webhook refuses a distribution without it
// wherever authors are recorded, as they are by the product the bench runs.
import { ANNOTATION_AUTHOR, authorValue } from '../src/domain/author.js';
import type { ResourceDistribution } from '../src/domain/types.js';

export function authored<T extends Pick<ResourceDistribution, 'metadata'>>(rd: T, user: { name: string; groups: readonly string[] }): T {
  const annotations = { ...rd.metadata.annotations, [ANNOTATION_AUTHOR]: authorValue({ username: user.name, groups: user.groups }) };
  return { ...rd, metadata: { ...rd.metadata, annotations } };
}
