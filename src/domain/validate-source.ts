// Admission rules for spec.source: which object the copies follow. Its content is checked when
// read (a Secret type we never copy is not distributed), not here: it is not in the request.
import { asRecord, quote, type FieldProblem } from './field-problem.js';
import { CORE_REGISTRY, type KindRegistry } from './kinds.js';
import { checkKind } from './validate-resource.js';
import { DNS_LABEL_RULE, DNS_SUBDOMAIN_RULE, isDnsLabel, isDnsSubdomain } from './k8s-names.js';

function checkIdentity(source: Record<string, unknown>, kinds: KindRegistry): FieldProblem[] {
  const problems = checkKind(source.apiVersion, source.kind, kinds, 'spec.source');
  // Whoever may edit the source would grant its role in every target, whatever the author may bind.
  if (problems.length === 0 && source.kind === 'RoleBinding') {
    problems.push({ path: 'spec.source.kind', message: 'RoleBinding is distributed from spec.resource only: a source would let whoever edits it grant its role in every target' });
  }
  return problems;
}

function checkLocation(source: Record<string, unknown>): FieldProblem[] {
  const { namespace, name } = source;
  const problems: FieldProblem[] = [];
  if (typeof namespace !== 'string' || !isDnsLabel(namespace)) {
    problems.push({ path: 'spec.source.namespace', message: `${quote(namespace ?? '')} is not a namespace name (${DNS_LABEL_RULE})` });
  }
  if (typeof name !== 'string' || !isDnsSubdomain(name)) {
    problems.push({ path: 'spec.source.name', message: `${quote(name ?? '')} is not a valid name (${DNS_SUBDOMAIN_RULE})` });
  }
  return problems;
}

/** Rules for spec.source; `warnings` receives what is allowed but probably not meant. */
export function validateSource(value: unknown, targets: unknown, warnings: string[], kinds: KindRegistry = CORE_REGISTRY): FieldProblem[] {
  const source = asRecord(value);
  if (source === undefined) return [{ path: 'spec.source', message: 'must be an object: {apiVersion, kind, namespace, name}' }];
  const { namespace } = source;
  const included = asRecord(asRecord(targets)?.includedNamespaces)?.list;
  if (typeof namespace === 'string' && Array.isArray(included) && included.some((entry) => asRecord(entry)?.name === namespace)) {
    warnings.push(`spec.targets.includedNamespaces: ${namespace} holds the source and is never a target`);
  }
  return [...checkIdentity(source, kinds), ...checkLocation(source)];
}
