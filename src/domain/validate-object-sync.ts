// Admission rules for an ObjectSync: an allowed source kind, names Kubernetes accepts, at least
// one destination. All problems at once, each naming its field.
import { asRecord, quote, type FieldProblem } from './field-problem.js';
import { DNS_LABEL_RULE, DNS_SUBDOMAIN_RULE, isDnsLabel, isDnsSubdomain } from './k8s-names.js';
import type { KindRegistry } from './kinds.js';

/** When the kind is allowed in another group: which one (core kinds have group "", and a version is no group). */
function groupHint(kind: string, group: string, kinds: KindRegistry): string {
  const other = kinds.all.find((candidate) => candidate.kind === kind);
  if (other === undefined) return '';
  const version = /^v\d+((alpha|beta)\d+)?$/.test(group) ? ` (${quote(group)} is a version: set it in spec.source.version)` : '';
  return `; ${kind} has group ${quote(other.group)}${other.group === '' ? ', the core group' : ''}${version}`;
}

function checkKind(source: Record<string, unknown>, kinds: KindRegistry): FieldProblem[] {
  const group = typeof source.group === 'string' ? source.group : '';
  const kind = typeof source.kind === 'string' ? source.kind : '';
  const allowed = kinds.all.find((candidate) => candidate.group === group && candidate.kind === kind);
  if (allowed === undefined) {
    return [{ path: 'spec.source.kind', message: `${quote(group === '' ? kind : `${kind}.${group}`)} is not supported: use ${kinds.describe()} (allowed by RD_ALLOWED_KINDS)${groupHint(kind, group, kinds)}` }];
  }
  if (allowed.kind === 'RoleBinding') {
    return [{ path: 'spec.source.kind', message: 'RoleBinding is not copied from a source: whoever edits the source would grant its role in every destination' }];
  }
  return [];
}

function checkSource(value: unknown, kinds: KindRegistry): FieldProblem[] {
  const source = asRecord(value);
  if (source === undefined) return [{ path: 'spec.source', message: 'is required: {group, kind, name, namespace?}' }];
  const problems = checkKind(source, kinds);
  if (typeof source.name !== 'string' || !isDnsSubdomain(source.name)) {
    problems.push({ path: 'spec.source.name', message: `${quote(source.name ?? '')} is not a valid name (${DNS_SUBDOMAIN_RULE})` });
  }
  const { namespace } = source;
  if (namespace !== undefined && namespace !== '' && (typeof namespace !== 'string' || !isDnsLabel(namespace))) {
    problems.push({ path: 'spec.source.namespace', message: `${quote(namespace)} is not a namespace name (${DNS_LABEL_RULE})` });
  }
  return problems;
}

/** As the CRD says: each destination name is a distribution of its own, reconciled as one unit of work. */
const MAX_DESTINATIONS = 1000;

function checkDestinations(value: unknown): FieldProblem[] {
  if (!Array.isArray(value) || value.length === 0) return [{ path: 'spec.destinations', message: 'must list at least one destination: {namespace, name?}' }];
  if (value.length > MAX_DESTINATIONS) {
    return [{ path: 'spec.destinations', message: `lists ${value.length} destinations: at most ${MAX_DESTINATIONS} (use "*" for every namespace, or several ObjectSyncs)` }];
  }
  return value.flatMap((item: unknown, i) => {
    const destination = asRecord(item);
    const path = `spec.destinations[${i}]`;
    if (destination === undefined) return [{ path, message: 'must be an object: {namespace, name?}' }];
    const problems: FieldProblem[] = [];
    const { namespace, name } = destination;
    if (typeof namespace !== 'string' || !(namespace === '' || namespace === '*' || isDnsLabel(namespace))) {
      problems.push({ path: `${path}.namespace`, message: `${quote(namespace ?? '')} is not a namespace name, "*" or "" (every namespace)` });
    }
    if (name !== undefined && name !== '' && (typeof name !== 'string' || !isDnsSubdomain(name))) {
      problems.push({ path: `${path}.name`, message: `${quote(name)} is not a valid name (${DNS_SUBDOMAIN_RULE})` });
    }
    return problems;
  });
}

export function validateObjectSync(object: unknown, kinds: KindRegistry): FieldProblem[] {
  const spec = asRecord(asRecord(object)?.spec);
  if (spec === undefined) return [{ path: 'spec', message: 'is required: spec.source and spec.destinations' }];
  return [...checkSource(spec.source, kinds), ...checkDestinations(spec.destinations)];
}
