// emberstack kubernetes-reflector's annotations as distributions. Its namespace lists are
// comma-separated regular expressions that must match the whole name, empty meaning every
// namespace; a list and a selector together match a namespace that either matches. Automatic
// mirrors go where both the allowed and the automatic namespaces say.
import { type FollowedSources, sourceRefOf } from './followed-sources.js';
import { type Finding, note, unconverted } from './findings.js';
import { parseSelectorText } from './label-selector-text.js';
import { annotationsOf, describe, type Manifest } from './manifests.js';
import { allNamespaces, emptySet, intersection, type NamespaceSet, setOfRegexList, someRegexMatches, union } from './namespace-set.js';
import { convertPull, type PullRules } from './pulled-copies.js';

const PREFIX = 'reflector.v1.k8s.emberstack.com/';
export const REFLECTOR = {
  allowed: `${PREFIX}reflection-allowed`,
  allowedNamespaces: `${PREFIX}reflection-allowed-namespaces`,
  allowedSelector: `${PREFIX}reflection-allowed-namespaces-selector`,
  autoEnabled: `${PREFIX}reflection-auto-enabled`,
  autoNamespaces: `${PREFIX}reflection-auto-namespaces`,
  autoSelector: `${PREFIX}reflection-auto-namespaces-selector`,
  reflects: `${PREFIX}reflects`,
  /** On the mirrors reflector made itself (they name their source in `reflects` too). */
  autoReflects: `${PREFIX}auto-reflects`,
} as const;

const TOOL = 'emberstack reflector';

/** .NET's bool.TryParse, as the reflector reads its flags. */
function dotnetBool(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true';
}

/** The reflector takes the first match, which must be the whole name. */
function matchesWhole(regex: string, namespace: string): boolean {
  const found = new RegExp(regex).exec(namespace);
  return found !== null && found.index === 0 && found[0].length === namespace.length;
}

const pullRules: PullRules = {
  tool: TOOL,
  annotation: REFLECTOR.reflects,
  refusal(source, namespace) {
    const annotations = annotationsOf(source);
    if (!dotnetBool(annotations[REFLECTOR.allowed])) return `the source is not annotated ${REFLECTOR.allowed}: "true"`;
    const list = annotations[REFLECTOR.allowedNamespaces] ?? '';
    const selector = annotations[REFLECTOR.allowedSelector] ?? '';
    // A selector is checked against the namespace's labels, which the input does not hold: allowed.
    if (list.trim() === '' || selector.trim() !== '' || someRegexMatches(list, namespace, matchesWhole)) return undefined;
    return `${REFLECTOR.allowedNamespaces} of the source does not match ${namespace}`;
  },
};

/** A list annotation and a selector annotation, as reflector matches them. */
function setOf(annotations: Record<string, string>, listKey: string, selectorKey: string, subject: string, findings: Finding[]): NamespaceSet {
  const list = annotations[listKey]?.trim() ?? '';
  const selectorText = annotations[selectorKey]?.trim() ?? '';
  if (list === '' && selectorText === '') return allNamespaces();
  let set = list === '' ? emptySet() : setOfRegexList(list, subject, listKey, findings);
  if (selectorText !== '') {
    const reading = parseSelectorText(selectorText);
    // The reflector matches nothing with a selector it cannot read.
    if ('problem' in reading) findings.push(note(subject, `${selectorKey} ${reading.problem}: reflector matches no namespace by it`));
    else set = union(set, { ...emptySet(), selector: reading.selector }) ?? set;
  }
  return set;
}

function convertAuto(object: Manifest, followed: FollowedSources, findings: Finding[]): void {
  const annotations = annotationsOf(object);
  const subject = describe(object);
  if (!dotnetBool(annotations[REFLECTOR.allowed])) {
    findings.push(note(subject, `${REFLECTOR.autoEnabled} without ${REFLECTOR.allowed}: "true": reflector makes no mirror, nor does the output`));
    return;
  }
  const source = sourceRefOf(object);
  if (source === undefined) {
    findings.push(unconverted(subject, 'has reflection annotations but no apiVersion, kind, namespace or name'));
    return;
  }
  const allowed = setOf(annotations, REFLECTOR.allowedNamespaces, REFLECTOR.allowedSelector, subject, findings);
  const auto = setOf(annotations, REFLECTOR.autoNamespaces, REFLECTOR.autoSelector, subject, findings);
  const set = intersection(allowed, auto);
  if (set === undefined) {
    findings.push(unconverted(subject, 'its automatic namespaces and its allowed namespaces overlap in a way one target list cannot say (label selectors or different patterns on both sides): write the targets by hand'));
    return;
  }
  if (set.all) findings.push(note(subject, 'every namespace: kube-system, kube-public, kube-node-lease and the controller\'s own namespace are never targeted'));
  followed.add(source, set, `${TOOL}: ${subject}`);
}

export function convertReflector(objects: readonly Manifest[], followed: FollowedSources, findings: Finding[]): void {
  for (const object of objects) {
    const annotations = annotationsOf(object);
    // An automatic mirror is a copy of its source's distribution, not a request for one.
    if (annotations[REFLECTOR.reflects] !== undefined && !dotnetBool(annotations[REFLECTOR.autoReflects])) convertPull(pullRules, objects, object, followed, findings);
    if (dotnetBool(annotations[REFLECTOR.autoEnabled])) convertAuto(object, followed, findings);
  }
}
