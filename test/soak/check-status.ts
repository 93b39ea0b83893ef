// Every distribution's status says what the cluster holds (README: "Reading status"): desired
// counts the targets (listed ones that do not exist included), succeeded those holding a correct
// copy, failed the rest; the conditions in their order, True exactly where that failure is now;
// Ready and Stalled last, summing them up.
import type { CopyCheck, NamespaceState } from './check-copies.js';
import type { TargetSet } from './expected-targets.js';
import { CONDITION_ORDER, SOURCE_CONDITION } from './markers.js';
import type { Condition, DistributionSnapshot } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

interface WantedCondition {
  status: 'True' | 'False';
  /** The namespaces `failedNamespace` must list, sorted; undefined: not checked. */
  namespaces?: string[];
}

function namespacesIn(states: ReadonlyMap<string, NamespaceState>, wanted: (state: NamespaceState) => boolean): string[] {
  return [...states].filter(([, state]) => wanted(state)).map(([ns]) => ns).sort();
}

function conflictCondition(rd: DistributionSnapshot, check: CopyCheck): WantedCondition | undefined {
  if (check.sourceMissing) return undefined;
  const conflicts = namespacesIn(check.states, (s) => s === 'conflict');
  if (conflicts.length === 0) return { status: 'False' };
  if (rd.spec.writePolicy === 'overwrite') return undefined;
  // Under strict every write waits while another target conflicts: those namespaces are reported too.
  const listed = rd.spec.writePolicy === 'strict' ? namespacesIn(check.states, (s) => s === 'conflict' || s === 'missing' || s === 'wrong') : conflicts;
  return { status: 'True', namespaces: listed };
}

function wantedConditions(rd: DistributionSnapshot, targets: TargetSet, check: CopyCheck): Map<string, WantedCondition | undefined> {
  const missing = [...targets.missing].sort();
  const wanted = new Map<string, WantedCondition | undefined>([
    ['GetResourceFailed', { status: 'False' }],
    ['CreateResourceFailed', { status: 'False' }],
    ['UpdateResourceFailed', { status: 'False' }],
    ['DeleteResourceFailed', { status: 'False' }],
    ['ConflictOccurred', conflictCondition(rd, check)],
    ['NamespaceNotExists', missing.length === 0 ? { status: 'False' } : { status: 'True', namespaces: missing }],
  ]);
  if (rd.spec.source) wanted.set(SOURCE_CONDITION, { status: check.sourceMissing ? 'True' : 'False' });
  // Every failure the soak makes waits on someone (a conflict, a missing namespace or source): Stalled with it.
  const failures = [...wanted.values()];
  if (failures.some((w) => w?.status === 'True')) wanted.set('Ready', { status: 'False' }).set('Stalled', { status: 'True' });
  else if (failures.every((w) => w?.status === 'False')) wanted.set('Ready', { status: 'True' }).set('Stalled', { status: 'False' });
  return wanted;
}

function conditionProblem(type: string, actual: Condition | undefined, wanted: WantedCondition): string | undefined {
  if (!actual) return `${type} absent`;
  if (actual.status !== wanted.status) return `${type} is ${actual.status}, wanted ${wanted.status}${actual.message ? ` (${actual.message})` : ''}`;
  // Ready False gives the reason of the failure it reports.
  if (wanted.status === 'False' && type !== 'Ready' && actual.reason !== 'Succeeded') return `${type} False with reason ${String(actual.reason)}, wanted Succeeded`;
  const listed = [...(actual.failedNamespace ?? [])].sort();
  if (wanted.namespaces !== undefined && JSON.stringify(listed) !== JSON.stringify(wanted.namespaces)) {
    return `${type} lists ${JSON.stringify(listed)}, wanted ${JSON.stringify(wanted.namespaces)}`;
  }
  return undefined;
}

function countProblems(rd: DistributionSnapshot, targets: TargetSet, check: CopyCheck): string[] {
  const status = rd.status ?? {};
  const desired = targets.all.size;
  const succeeded = check.sourceMissing ? 0 : namespacesIn(check.states, (s) => s === 'ok').length;
  const problems: string[] = [];
  if (status.observedGeneration !== rd.generation) problems.push(`observedGeneration ${String(status.observedGeneration)}, generation ${rd.generation}`);
  if (status.desired !== desired) problems.push(`desired ${String(status.desired)}, wanted ${desired}`);
  if (status.succeeded !== succeeded) problems.push(`succeeded ${String(status.succeeded)}, wanted ${succeeded}`);
  if (status.failed !== desired - succeeded) problems.push(`failed ${String(status.failed)}, wanted ${desired - succeeded}`);
  return problems;
}

export function checkStatus(rd: DistributionSnapshot, targets: TargetSet, check: CopyCheck): Violation[] {
  const wanted = wantedConditions(rd, targets, check);
  const actual = rd.status?.conditions ?? [];
  const problems = countProblems(rd, targets, check);
  const order = rd.spec.source ? [...CONDITION_ORDER, SOURCE_CONDITION, 'Ready', 'Stalled'] : [...CONDITION_ORDER, 'Ready', 'Stalled'];
  if (JSON.stringify(actual.map((c) => c.type)) !== JSON.stringify(order)) problems.push(`conditions ${actual.map((c) => c.type).join(',')}, wanted ${order.join(',')}`);
  for (const [type, want] of wanted) {
    const problem = want && conditionProblem(type, actual.find((c) => c.type === type), want);
    if (problem) problems.push(problem);
  }
  return problems.length === 0 ? [] : [violation('status-wrong', rd.name, problems.join('; '))];
}
