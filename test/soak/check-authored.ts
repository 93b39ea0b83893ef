// The author's rights (README: "Who may do what"): a distribution written by a user who may write
// Secrets and ConfigMaps only in some namespaces is admitted only with targets there (no
// allNamespaces, selector or pattern, which need rights cluster-wide), and the product never
// writes a copy of it anywhere else.
import type { Expectations } from './expectations.js';
import { ANNOTATION_FROM } from './markers.js';
import { authorMayWrite } from './model.js';
import type { ClusterSnapshot, NamespaceEntry, Targets } from './snapshot-types.js';
import { violation, type Violation } from './violation.js';

/** What in `targets` reaches beyond the author's namespaces (empty when nothing does). */
export function beyondAuthor(targets: Targets): string[] {
  const problems: string[] = [];
  if (targets.allNamespaces === true) problems.push('allNamespaces');
  const selector = targets.namespaceLabelSelector;
  if (Object.keys(selector?.matchLabels ?? {}).length > 0 || (selector?.matchExpressions ?? []).length > 0) problems.push('a namespace selector');
  return [...problems, ...(targets.includedNamespaces?.list ?? []).flatMap(entryBeyond)];
}

function entryBeyond(entry: NamespaceEntry): string[] {
  if (entry.pattern !== undefined) return [`pattern ${entry.pattern}`];
  return entry.name !== undefined && !authorMayWrite(entry.name) ? [`namespace ${entry.name}`] : [];
}

/** The violations, and how many copies of the author's distributions were looked at. */
export function checkAuthored(snapshot: ClusterSnapshot, expectations: Expectations): { violations: Violation[]; copies: number } {
  const violations: Violation[] = [];
  let copies = 0;
  for (const rd of snapshot.distributions) {
    if (!expectations.authored.has(rd.name)) continue;
    const beyond = beyondAuthor(rd.spec.targets);
    if (beyond.length > 0) violations.push(violation('author-admitted-beyond-rights', rd.name, `written by the limited author, yet admitted with ${beyond.join(', ')}`));
  }
  for (const object of snapshot.objects) {
    const from = object.annotations[ANNOTATION_FROM];
    if (from === undefined || !expectations.authored.has(from)) continue;
    copies += 1;
    if (!authorMayWrite(object.namespace)) {
      violations.push(violation('author-exceeded', `${object.namespace}/${object.kind}/${object.name}`, `a copy of ${from}, whose author may not write in ${object.namespace}`));
    }
  }
  return { violations, copies };
}
