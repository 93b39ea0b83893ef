// mittwald kubernetes-replicator's annotations as distributions. Its namespace lists are
// comma-separated regular expressions, each anchored at both ends; its selectors are label
// selector text, an empty one selecting every namespace.
import { ALWAYS_EXCLUDED_NAMESPACES } from '../domain/types.js';
import { type FollowedSources, sourceRefOf } from './followed-sources.js';
import { type Finding, note, unconverted } from './findings.js';
import { parseSelectorText } from './label-selector-text.js';
import { annotationsOf, describe, type Manifest } from './manifests.js';
import { allNamespaces, emptySet, type NamespaceSet, setOfRegexList, someRegexMatches, union } from './namespace-set.js';
import { convertPull, type PullRules } from './pulled-copies.js';

const PREFIX = 'replicator.v1.mittwald.de/';
export const REPLICATOR = {
  replicateTo: `${PREFIX}replicate-to`,
  replicateToMatching: `${PREFIX}replicate-to-matching`,
  replicateFrom: `${PREFIX}replicate-from`,
  allowed: `${PREFIX}replication-allowed`,
  allowedNamespaces: `${PREFIX}replication-allowed-namespaces`,
  stripLabels: `${PREFIX}strip-labels`,
  keepOwnerReferences: `${PREFIX}keep-owner-references`,
} as const;

const TOOL = 'mittwald replicator';

/** Go's strconv.ParseBool, as the replicator reads its flags. */
export function goBool(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

/** The replicator anchors each entry at both ends, unless it already is. */
function matchesAnchored(regex: string, namespace: string): boolean {
  return new RegExp(`${regex.startsWith('^') ? '' : '^'}${regex}${regex.endsWith('$') ? '' : '$'}`).test(namespace);
}

const pullRules: PullRules = {
  tool: TOOL,
  annotation: REPLICATOR.replicateFrom,
  refusal(source, namespace) {
    const annotations = annotationsOf(source);
    if (!goBool(annotations[REPLICATOR.allowed])) return `the source is not annotated ${REPLICATOR.allowed}: "true"`;
    const allowed = annotations[REPLICATOR.allowedNamespaces];
    if (allowed === undefined) return `the source has no ${REPLICATOR.allowedNamespaces}`;
    return someRegexMatches(allowed, namespace, matchesAnchored) ? undefined : `${REPLICATOR.allowedNamespaces} of the source does not match ${namespace}`;
  },
};

function pushSet(annotations: Record<string, string>, subject: string, findings: Finding[]): NamespaceSet {
  let set = emptySet();
  const to = annotations[REPLICATOR.replicateTo];
  if (to !== undefined) {
    set = setOfRegexList(to, subject, REPLICATOR.replicateTo, findings);
    const system = set.names.filter((name) => ALWAYS_EXCLUDED_NAMESPACES.includes(name));
    if (system.length > 0) findings.push(unconverted(subject, `${system.join(', ')} ${system.length === 1 ? 'is a system namespace' : 'are system namespaces'}, which no distribution targets`));
  }
  const matching = annotations[REPLICATOR.replicateToMatching];
  if (matching !== undefined) {
    const reading = matching.trim() === '' ? { selector: undefined } : parseSelectorText(matching.trim());
    if ('problem' in reading) findings.push(unconverted(subject, `${REPLICATOR.replicateToMatching} ${reading.problem}; left out`));
    else set = union(set, reading.selector === undefined ? allNamespaces() : { ...emptySet(), selector: reading.selector }) ?? set;
  }
  return set;
}

export function convertReplicator(objects: readonly Manifest[], followed: FollowedSources, findings: Finding[]): void {
  for (const object of objects) {
    const annotations = annotationsOf(object);
    const subject = describe(object);
    if (annotations[REPLICATOR.replicateFrom] !== undefined) convertPull(pullRules, objects, object, followed, findings);
    if (annotations[REPLICATOR.replicateTo] === undefined && annotations[REPLICATOR.replicateToMatching] === undefined) continue;
    const source = sourceRefOf(object);
    if (source === undefined) {
      findings.push(unconverted(subject, 'has replicate-to annotations but no apiVersion, kind, namespace or name'));
      continue;
    }
    const set = pushSet(annotations, subject, findings);
    if (set.all) findings.push(note(subject, 'every namespace: kube-system, kube-public, kube-node-lease and the controller\'s own namespace are never targeted'));
    followed.add(source, set, `${TOOL}: ${subject}`);
    if (goBool(annotations[REPLICATOR.stripLabels])) followed.stripLabels(source);
    if (goBool(annotations[REPLICATOR.keepOwnerReferences])) findings.push(unconverted(subject, `${REPLICATOR.keepOwnerReferences}: copies never carry the source's ownerReferences`));
  }
}
