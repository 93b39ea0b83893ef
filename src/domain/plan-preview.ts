// What a distribution will do, said at admission as kubectl warnings: the plan made from the
// controller's caches (its copies, the namespaces), summed up per kind of action with the first
// few namespaces of each. The caches hold only copies of ours: a same-named object someone else
// made in a namespace is found when the copy is written (then taken over or left as a conflict,
// per writePolicy). Where the status already reports one, the preview says conflict; where the
// policy takes over or holds back on meeting one, the preview says so; under the default (left
// alone and reported) it says nothing more: what holds for every distribution is no news.
import type { ActionType, PlannedAction, WritePolicy } from './types.js';

/** The API server keeps warnings of up to 120 characters whole (longer ones may be cut). */
export const MAX_WARNING_LENGTH = 120;
const SHOWN = 3;

/** Actions of one type: how many, and the first few namespaces by name. */
export interface TypeTally {
  count: number;
  /** At most SHOWN, sorted: the first namespaces by name, whatever order they were counted in. */
  first: string[];
}

/**
 * A plan as the preview says it: per type of action, how many and the first few namespaces. Counted
 * without an object per namespace: a distribution may list 10,000.
 */
export type PlanTally = Partial<Record<ActionType, TypeTally>>;

/** Keeps `namespace` among the first SHOWN of `first` (sorted) if it is one of them. */
function keepFirst(first: string[], namespace: string): void {
  if (first.length === SHOWN && namespace >= (first[SHOWN - 1] as string)) return;
  let at = first.length;
  while (at > 0 && (first[at - 1] as string) > namespace) at--;
  first.splice(at, 0, namespace);
  if (first.length > SHOWN) first.pop();
}

/** Counts one action of `type` in `namespace`. */
export function tallyAction(tally: PlanTally, type: ActionType, namespace: string): void {
  const counted = (tally[type] ??= { count: 0, first: [] });
  counted.count++;
  keepFirst(counted.first, namespace);
}

export function tallyActions(actions: Iterable<PlannedAction>): PlanTally {
  const tally: PlanTally = {};
  for (const action of actions) tallyAction(tally, action.type, action.namespace);
  return tally;
}

/** Several types counted as one (undefined when none of them was counted). */
export function mergeTallies(parts: readonly (TypeTally | undefined)[]): TypeTally | undefined {
  let merged: TypeTally | undefined;
  for (const part of parts) {
    if (part === undefined) continue;
    merged ??= { count: 0, first: [] };
    merged.count += part.count;
    for (const namespace of part.first) keepFirst(merged.first, namespace);
  }
  return merged;
}

interface Group {
  what: (count: number) => string;
  types: readonly ActionType[];
}

const GROUPS: readonly Group[] = [
  { what: (n) => `${n} ${n === 1 ? 'copy' : 'copies'} to create`, types: ['create'] },
  { what: (n) => `${n} ${n === 1 ? 'copy' : 'copies'} to update`, types: ['update', 'recreate'] },
  { what: (n) => `${n} ${n === 1 ? 'copy' : 'copies'} to delete (no longer targeted)`, types: ['delete'] },
  { what: (n) => `${n} ${n === 1 ? 'copy' : 'copies'} to release (no longer targeted, edited in ${n === 1 ? 'its namespace' : 'their namespaces'})`, types: ['release'] },
  { what: (n) => `${n} ${n === 1 ? 'conflict' : 'conflicts'} left alone`, types: ['conflict'] },
  { what: (n) => `${n} listed ${n === 1 ? 'namespace does' : 'namespaces do'} not exist yet`, types: ['namespace-missing'] },
];

/** `a, b, c and 4 more`, cut so that the whole line stays within the limit. */
function namespacesFitting(prefix: string, { count, first }: TypeTally): string {
  for (let shown = Math.min(SHOWN, first.length); shown >= 0; shown--) {
    const rest = count - shown;
    const listed = first.slice(0, shown).join(', ');
    const tail = rest === 0 ? '' : shown === 0 ? '' : ` and ${rest} more`;
    const line = shown === 0 ? prefix : `${prefix}: ${listed}${tail}`;
    if (line.length <= MAX_WARNING_LENGTH) return line;
  }
  return prefix.slice(0, MAX_WARNING_LENGTH);
}

/** What the policy does with a same-named object someone else made, where it says something of this distribution. */
const MEETING_ANOTHER: Partial<Record<WritePolicy, string>> = {
  overwrite: 'plan: a same-named object someone else made where a copy is created is taken over (writePolicy overwrite)',
  strict: 'plan: a same-named object someone else made where a copy is created holds back every write (writePolicy strict)',
};

export interface DescribeOptions {
  /** Objects that are not ours are unknown to the plan (the caches hold only ours). */
  sameNamedUnknown: boolean;
  writePolicy?: WritePolicy;
}

/** One line per kind of action there is, then what is already right; nothing when there is no target at all. */
export function describeTally(tally: PlanTally, options: DescribeOptions): string[] {
  const lines: string[] = [];
  for (const group of GROUPS) {
    const counted = mergeTallies(group.types.map((type) => tally[type]));
    if (counted !== undefined) lines.push(namespacesFitting(`plan: ${group.what(counted.count)}`, counted));
  }
  const inSync = tally['in-sync']?.count ?? 0;
  if (inSync > 0) lines.push(`plan: ${inSync} ${inSync === 1 ? 'copy is' : 'copies are'} already up to date`);
  const meeting = MEETING_ANOTHER[options.writePolicy ?? 'ignore'];
  if (options.sameNamedUnknown && tally.create !== undefined && meeting !== undefined) lines.push(meeting);
  return lines;
}

/** describeTally of a plan's actions (sorted by namespace, as plans are). */
export function describePlan(actions: readonly PlannedAction[], options: DescribeOptions): string[] {
  return describeTally(tallyActions(actions), options);
}
