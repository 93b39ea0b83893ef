// What a conversion could not carry over, or carried over with a difference the reader must know.
// Findings name objects and annotations, never values of data: the converter reads Secrets.

/**
 * `unconverted`: part of the tool's intent has no equivalent in the output (`--strict` fails on
 * it). `note`: converted, but something behaves differently or needs a step by hand.
 */
export type FindingLevel = 'unconverted' | 'note';

export interface Finding {
  level: FindingLevel;
  /** What it is about: `Secret default/test-secret`, `ClusterPolicy sync-secrets rule clone`. */
  subject: string;
  message: string;
}

export function unconverted(subject: string, message: string): Finding {
  return { level: 'unconverted', subject, message };
}

export function note(subject: string, message: string): Finding {
  return { level: 'note', subject, message };
}

export function formatFinding(finding: Finding): string {
  return `${finding.level === 'unconverted' ? 'not converted' : 'note'}: ${finding.subject}: ${finding.message}`;
}
