// Pull replication, as replicator's `replicate-from` and reflector's `reflects` write it: a mirror
// names its source, and the source's annotations say which namespaces may pull. A distribution
// copies the source under its own name, so a mirror of another name has no equivalent.
import type { SourceRef } from '../domain/types.js';
import { type FollowedSources, sourceRefOf } from './followed-sources.js';
import { type Finding, note, unconverted } from './findings.js';
import { annotationsOf, describe, type Manifest } from './manifests.js';
import { emptySet } from './namespace-set.js';

export interface PullRules {
  /** The tool's name, for comments: `mittwald replicator`. */
  tool: string;
  /** The mirror's annotation naming the source. */
  annotation: string;
  /** Whether the source lets `namespace` pull it: undefined if so, else why not. */
  refusal(source: Manifest, namespace: string): string | undefined;
}

function sourceOf(objects: readonly Manifest[], mirror: Manifest, namespace: string, name: string): Manifest | undefined {
  return objects.find((object) => object.kind === mirror.kind && object.metadata?.namespace === namespace && object.metadata.name === name);
}

interface Pull {
  namespace: string;
  sourceRef: SourceRef;
}

/** The mirror's namespace and the source it names, or why it has no equivalent. */
function pullOf(rules: PullRules, mirror: Manifest): Pull | string {
  const value = annotationsOf(mirror)[rules.annotation]?.trim() ?? '';
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(value);
  const mirrorRef = sourceRefOf(mirror);
  if (match === null || mirrorRef === undefined) return `${rules.annotation} "${value}" is not <namespace>/<name> of a source`;
  const { apiVersion, kind } = mirrorRef;
  const [, namespace = '', name = ''] = match;
  if (name !== mirrorRef.name) return `mirrors ${namespace}/${name} under another name; a distribution's copies keep the source's name (an ObjectSync destination can rename)`;
  return { namespace: mirrorRef.namespace, sourceRef: { apiVersion, kind, namespace, name } };
}

/** One mirror: its namespace added to the distribution of its source, if the tool would fill it. */
export function convertPull(rules: PullRules, objects: readonly Manifest[], mirror: Manifest, followed: FollowedSources, findings: Finding[]): void {
  const subject = describe(mirror);
  const pull = pullOf(rules, mirror);
  if (typeof pull === 'string') {
    findings.push(unconverted(subject, pull));
    return;
  }
  const { namespace, sourceRef } = pull;
  const source = sourceOf(objects, mirror, sourceRef.namespace, sourceRef.name);
  const refusal = source === undefined ? undefined : rules.refusal(source, namespace);
  if (source === undefined) findings.push(note(subject, `its source ${sourceRef.namespace}/${sourceRef.name} is not in the input: whether it allows ${namespace} was not checked`));
  if (refusal !== undefined) {
    findings.push(note(subject, `${rules.tool} would not fill it (${refusal}): not converted`));
    return;
  }
  followed.add(sourceRef, { ...emptySet(), names: [namespace] }, `${rules.tool}: ${subject}`);
}
