// Kyverno ClusterPolicy generate rules that fire when a Namespace is created and write one object
// into it, as distributions: `clone` follows the cloned object (`spec.source`), `data` is the
// template (`spec.resource`). A rule's data is the policy's own, so the output holds it; findings
// never quote it.
import { API_VERSION, KIND, type Resource } from '../domain/types.js';
import { type ConvertedDistribution, distributionName, type FollowedSources } from './followed-sources.js';
import { type Finding, note, unconverted } from './findings.js';
import { excludeSet, matchSet } from './kyverno-trigger.js';
import type { Manifest } from './manifests.js';
import { type NamespaceSet, targetsOf } from './namespace-set.js';

type Rule = Record<string, unknown>;

/** Where Kyverno's generate rules omit apiVersion (older policies): the kinds they name most. */
const DEFAULT_API_VERSIONS: Record<string, string> = {
  Secret: 'v1', ConfigMap: 'v1', ResourceQuota: 'v1', LimitRange: 'v1', ServiceAccount: 'v1',
  NetworkPolicy: 'networking.k8s.io/v1', Role: 'rbac.authorization.k8s.io/v1', RoleBinding: 'rbac.authorization.k8s.io/v1',
};

const NEW_NAMESPACE = /^\{\{\s*request\.object\.metadata\.name\s*\}\}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasVariables(value: unknown): boolean {
  return JSON.stringify(value ?? null).includes('{{');
}

interface Generated {
  apiVersion: string;
  kind: string;
  name: string;
  generate: Rule;
}

/** What the rule writes, or why it has no equivalent. */
function generatedOf(rule: Rule, generate: Rule): Generated | string {
  if (generate.cloneList !== undefined) return 'cloneList (every object a selector finds) is not converted: write one distribution per object';
  if (generate.foreach !== undefined) return 'foreach is not converted';
  if (rule.preconditions !== undefined || rule.context !== undefined) return 'preconditions and context (variables) are not converted';
  const { kind, name, namespace } = generate;
  if (typeof namespace !== 'string' || !NEW_NAMESPACE.test(namespace.trim())) return `writes into namespace ${JSON.stringify(namespace)}, not into the new namespace ({{request.object.metadata.name}})`;
  if (typeof kind !== 'string' || typeof name !== 'string' || hasVariables(name)) return 'has no fixed kind and name';
  const apiVersion = typeof generate.apiVersion === 'string' ? generate.apiVersion : DEFAULT_API_VERSIONS[kind];
  if (apiVersion === undefined) return `names kind ${kind} without apiVersion`;
  return { apiVersion, kind, name, generate };
}

/** The data rule's object as a template. */
function templateOf({ apiVersion, kind, name, generate }: Generated): Resource | string {
  const data = generate.data;
  if (!isObject(data)) return 'has neither clone nor data';
  if (hasVariables(data)) return 'data uses variables ({{…}}), but every copy of a distribution is the same';
  const metadata = isObject(data.metadata) ? data.metadata : {};
  const { labels, annotations } = metadata;
  const { metadata: _ignored, ...content } = data;
  return {
    apiVersion,
    kind,
    metadata: { name, ...(isObject(labels) ? { labels } : {}), ...(isObject(annotations) ? { annotations } : {}) },
    ...content,
  } as Resource;
}

function differences(policy: Manifest, generated: Generated, subject: string): Finding[] {
  const { generate, kind } = generated;
  const findings: Finding[] = [];
  if (generate.synchronize !== true) {
    findings.push(unconverted(subject, 'synchronize is not true: Kyverno creates the object once and leaves it to the namespace, a distribution keeps every copy as its source or template is (changes are reverted)'));
  }
  const spec = isObject(policy.spec) ? policy.spec : {};
  if (generate.generateExisting !== true && spec.generateExisting !== true && spec.generateExistingOnPolicyUpdate !== true) {
    findings.push(note(subject, 'Kyverno fills only namespaces created after the policy; a distribution fills the namespaces that exist too'));
  }
  if (generate.orphanDownstreamOnPolicyDelete === true) findings.push(note(subject, 'to keep the copies when deleting the distribution, delete it with --cascade=orphan'));
  if (kind !== 'Secret' && kind !== 'ConfigMap') findings.push(note(subject, `${kind} is copied only where RD_ALLOWED_KINDS allows it`));
  return findings;
}

function namespacesOf(rule: Rule): NamespaceSet | string {
  const matched = matchSet(rule.match);
  return typeof matched === 'string' ? matched : excludeSet(matched, rule.exclude);
}

interface ReadRule {
  subject: string;
  policyName: string;
  ruleName: string;
  generated: Generated;
  namespaces: NamespaceSet;
}

/** The rule's object and namespaces, or why it has no equivalent. */
function readRule(policy: Manifest, rule: Rule): ReadRule | { subject: string; problem: string } {
  const policyName = policy.metadata?.name ?? '?';
  const ruleName = typeof rule.name === 'string' ? rule.name : '?';
  const subject = `ClusterPolicy ${policyName} rule ${ruleName}`;
  const generated = generatedOf(rule, isObject(rule.generate) ? rule.generate : {});
  if (typeof generated === 'string') return { subject, problem: generated };
  const namespaces = namespacesOf(rule);
  if (typeof namespaces === 'string') return { subject, problem: namespaces };
  return { subject, policyName, ruleName, generated, namespaces };
}

function convertClone(policy: Manifest, read: ReadRule, clone: Rule, followed: FollowedSources, findings: Finding[]): void {
  const { subject, generated, namespaces } = read;
  if (clone.name !== generated.name || typeof clone.namespace !== 'string' || hasVariables(clone)) {
    findings.push(unconverted(subject, 'clones an object under another name, or one named by variables; a distribution\'s copies keep the source\'s fixed name'));
    return;
  }
  findings.push(...differences(policy, generated, subject));
  followed.add({ apiVersion: generated.apiVersion, kind: generated.kind, namespace: clone.namespace, name: generated.name }, namespaces, `Kyverno: ${subject}`, false);
}

/** One generate rule: a distribution of its own (data), or one more origin of a followed source (clone). */
function convertRule(policy: Manifest, rule: Rule, followed: FollowedSources, findings: Finding[]): ConvertedDistribution | undefined {
  const read = readRule(policy, rule);
  if ('problem' in read) {
    findings.push(unconverted(read.subject, read.problem));
    return undefined;
  }
  const { subject, generated, namespaces } = read;
  if (isObject(generated.generate.clone)) {
    convertClone(policy, read, generated.generate.clone, followed, findings);
    return undefined;
  }
  const template = templateOf(generated);
  if (typeof template === 'string') {
    findings.push(unconverted(subject, template));
    return undefined;
  }
  findings.push(...differences(policy, generated, subject));
  return {
    origins: [`Kyverno: ${subject}`],
    object: { apiVersion: API_VERSION, kind: KIND, metadata: { name: distributionName(read.policyName, read.ruleName) }, spec: { resource: template, targets: targetsOf(namespaces) } },
  };
}

function generateRulesOf(policy: Manifest): Rule[] {
  if (!(policy.apiVersion ?? '').startsWith('kyverno.io/') || (policy.kind !== 'ClusterPolicy' && policy.kind !== 'Policy')) return [];
  const spec = isObject(policy.spec) ? policy.spec : {};
  return (Array.isArray(spec.rules) ? (spec.rules as unknown[]) : []).filter(isObject).filter((rule) => rule.generate !== undefined);
}

export function convertKyverno(objects: readonly Manifest[], followed: FollowedSources, findings: Finding[]): ConvertedDistribution[] {
  const distributions: ConvertedDistribution[] = [];
  for (const policy of objects) {
    const rules = generateRulesOf(policy);
    if (rules.length > 0 && policy.kind === 'Policy') {
      findings.push(unconverted(`Policy ${policy.metadata?.namespace ?? '?'}/${policy.metadata?.name ?? '?'}`, 'a namespaced Policy fires on objects of its own namespace, never on a new namespace'));
      continue;
    }
    for (const rule of rules) {
      const distribution = convertRule(policy, rule, followed, findings);
      if (distribution !== undefined) distributions.push(distribution);
    }
  }
  return distributions;
}
