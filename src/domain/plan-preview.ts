// What a distribution will do, said at admission as kubectl warnings: the plan made from the
// controller's caches (its copies, the namespaces), summed up per kind of action with the first
// few namespaces of each. The caches hold only copies of ours: a same-named object someone else
// made in a namespace is found when the copy is written (then taken over or left as a conflict,
// per writePolicy), so "to create" says so.
import type { ActionType, PlannedAction } from './types.js';

/** The API server keeps warnings of up to 120 characters whole (longer ones may be cut). */
export const MAX_WARNING_LENGTH = 120;
const SHOWN = 3;

interface Group {
  what: (count: number) => string;
  types: readonly ActionType[];
}

const GROUPS: readonly Group[] = [
  { what: (n) => `${n} ${n === 1 ? 'copy' : 'copies'} to create`, types: ['create'] },
  { what: (n) => `${n} ${n === 1 ? 'copy' : 'copies'} to update`, types: ['update', 'recreate'] },
  { what: (n) => `${n} ${n === 1 ? 'copy' : 'copies'} to delete (no longer targeted)`, types: ['delete'] },
  { what: (n) => `${n} ${n === 1 ? 'conflict' : 'conflicts'} left alone`, types: ['conflict'] },
  { what: (n) => `${n} listed ${n === 1 ? 'namespace does' : 'namespaces do'} not exist yet`, types: ['namespace-missing'] },
];

/** `a, b, c and 4 more`, cut so that the whole line stays within the limit. */
function namespacesFitting(prefix: string, namespaces: readonly string[]): string {
  for (let shown = Math.min(SHOWN, namespaces.length); shown >= 0; shown--) {
    const rest = namespaces.length - shown;
    const listed = namespaces.slice(0, shown).join(', ');
    const tail = rest === 0 ? '' : shown === 0 ? '' : ` and ${rest} more`;
    const line = shown === 0 ? prefix : `${prefix}: ${listed}${tail}`;
    if (line.length <= MAX_WARNING_LENGTH) return line;
  }
  return prefix.slice(0, MAX_WARNING_LENGTH);
}

/** One line per kind of action there is, then what is already right; nothing when there is no target at all. */
export function describePlan(actions: readonly PlannedAction[], options: { sameNamedUnknown: boolean }): string[] {
  const lines: string[] = [];
  for (const group of GROUPS) {
    const namespaces = actions.filter((action) => group.types.includes(action.type)).map((action) => action.namespace);
    if (namespaces.length > 0) lines.push(namespacesFitting(`plan: ${group.what(namespaces.length)}`, namespaces));
  }
  const inSync = actions.filter((action) => action.type === 'in-sync').length;
  if (inSync > 0) lines.push(`plan: ${inSync} ${inSync === 1 ? 'copy is' : 'copies are'} already up to date`);
  if (options.sameNamedUnknown && actions.some((action) => action.type === 'create')) {
    lines.push('plan: a same-named object found where a copy is created is taken over or left alone, per writePolicy');
  }
  return lines;
}
