// The copies the old tools already made, found in the input: objects of a distribution's kind and
// name in another namespace that carry a tool's marks. Left alone, a distribution reports each as
// a conflict; the note says how to hand it over in place.
import { ANNOTATION_ADOPT, LABEL_DISTRIBUTION } from '../domain/types.js';
import type { ConvertedDistribution } from './followed-sources.js';
import { type Finding, note } from './findings.js';
import { describe, type Manifest } from './manifests.js';

/** Prefixes of the annotations and labels by which each tool marks its copies and mirrors. */
const MARKS: readonly [string, string][] = [
  ['replicator.v1.mittwald.de/', 'mittwald replicator'],
  ['reflector.v1.k8s.emberstack.com/', 'emberstack reflector'],
  ['generate.kyverno.io/', 'Kyverno'],
];

interface Copied {
  kind: string;
  name: string;
  sourceNamespace?: string;
}

function copiedOf(distribution: ConvertedDistribution): Copied | undefined {
  const spec = distribution.object.spec as { source?: { kind: string; name: string; namespace: string }; resource?: { kind: string; metadata: { name?: string } } };
  if (spec.source !== undefined) return { kind: spec.source.kind, name: spec.source.name, sourceNamespace: spec.source.namespace };
  const name = spec.resource?.metadata.name;
  return spec.resource === undefined || name === undefined ? undefined : { kind: spec.resource.kind, name };
}

function toolOf(object: Manifest): string | undefined {
  const keys = [...Object.keys(object.metadata?.annotations ?? {}), ...Object.keys(object.metadata?.labels ?? {})];
  return MARKS.find(([prefix]) => keys.some((key) => key.startsWith(prefix)))?.[1];
}

export function handOverNotes(objects: readonly Manifest[], distributions: readonly ConvertedDistribution[]): Finding[] {
  const findings: Finding[] = [];
  for (const distribution of distributions) {
    const copied = copiedOf(distribution);
    if (copied === undefined) continue;
    for (const object of objects) {
      const namespace = object.metadata?.namespace;
      if (object.kind !== copied.kind || object.metadata?.name !== copied.name || namespace === undefined || namespace === copied.sourceNamespace) continue;
      const tool = toolOf(object);
      if (tool === undefined) continue;
      const target = `${copied.kind.toLowerCase()} ${copied.name} -n ${namespace}`;
      const name = distribution.object.metadata.name;
      findings.push(note(describe(object), `made or filled by ${tool}; to keep it in place, hand it over: kubectl annotate ${target} ${ANNOTATION_ADOPT}=${name} && kubectl label ${target} ${LABEL_DISTRIBUTION}=${name}`));
    }
  }
  return findings;
}
