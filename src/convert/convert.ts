// The whole conversion: every object of the input read by each tool's rules (replicator's and
// reflector's annotations, Kyverno's generate rules). Pure: objects in,
// distributions and findings out.
import { type ConvertedDistribution, FollowedSources } from './followed-sources.js';
import type { Finding } from './findings.js';
import { handOverNotes } from './hand-over.js';
import { convertKyverno } from './kyverno.js';
import type { Manifest } from './manifests.js';
import { convertReflector } from './reflector.js';
import { convertReplicator } from './replicator.js';

export interface Conversion {
  distributions: ConvertedDistribution[];
  findings: Finding[];
}

export function convertManifests(objects: readonly Manifest[]): Conversion {
  const findings: Finding[] = [];
  const followed = new FollowedSources(findings);
  convertReplicator(objects, followed, findings);
  convertReflector(objects, followed, findings);
  const generated = convertKyverno(objects, followed, findings);
  const distributions = [...followed.distributions(), ...generated];
  return { distributions, findings: [...findings, ...handOverNotes(objects, distributions)] };
}
