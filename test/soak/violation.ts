// What the checker reports: which promise was broken, about what, and how.
export interface Violation {
  /** The promise, as a short kebab-case name (the report groups by it). */
  rule: string;
  /** What it is about: `<distribution>`, `<namespace>/<kind>/<name>`, a replica... */
  subject: string;
  detail: string;
}

export function violation(rule: string, subject: string, detail: string): Violation {
  return { rule, subject, detail };
}

export function violationKey(v: Violation): string {
  return `${v.rule} ${v.subject}`;
}
