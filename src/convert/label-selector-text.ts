// Kubernetes label selectors written as text (`env=prod,tier notin (a,b),!legacy`), as kubectl -l,
// replicator's `replicate-to-matching` and reflector's `…-selector` annotations take them, read
// into the LabelSelector a distribution's `namespaceLabelSelector` holds.
import type { LabelSelector, LabelSelectorRequirement } from '../domain/types.js';

export type SelectorReading = { selector: LabelSelector } | { problem: string };

const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
const SET = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/;
const EQUALITY = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/;

/** The requirements, split at commas outside parentheses. */
function requirementsOf(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim());
}

function setRequirementOf(set: RegExpExecArray): LabelSelectorRequirement | string {
  const values = (set[3] ?? '').split(',').map((value) => value.trim());
  const bad = values.find((value) => !VALUE.test(value));
  if (bad !== undefined) return `"${bad}" is not a label value`;
  return { key: set[1] ?? '', operator: set[2] === 'in' ? 'In' : 'NotIn', values };
}

function requirementOf(text: string): LabelSelectorRequirement | { key: string; equals: string } | string {
  const set = SET.exec(text);
  if (set !== null) return setRequirementOf(set);
  const equality = EQUALITY.exec(text);
  if (equality !== null) {
    const [, key = '', operator, value = ''] = equality;
    if (!VALUE.test(value)) return `"${value}" is not a label value`;
    return operator === '!=' ? { key, operator: 'NotIn', values: [value] } : { key, equals: value };
  }
  if (/[<>]/.test(text)) return `"${text}": the numeric comparisons > and < have no equivalent in a LabelSelector`;
  if (text.startsWith('!')) return { key: text.slice(1).trim(), operator: 'DoesNotExist' };
  return { key: text, operator: 'Exists' };
}

/** A non-empty selector text; an empty one means something different per tool, so callers decide. */
export function parseSelectorText(text: string): SelectorReading {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: LabelSelectorRequirement[] = [];
  for (const part of requirementsOf(text)) {
    if (part === '') return { problem: 'has an empty requirement' };
    const requirement = requirementOf(part);
    if (typeof requirement === 'string') return { problem: requirement };
    if (!KEY.test(requirement.key)) return { problem: `"${requirement.key}" is not a label key` };
    if ('equals' in requirement) {
      const before = matchLabels[requirement.key];
      if (before !== undefined && before !== requirement.equals) return { problem: `requires ${requirement.key} to be both "${before}" and "${requirement.equals}": it matches nothing` };
      matchLabels[requirement.key] = requirement.equals;
    } else {
      matchExpressions.push(requirement);
    }
  }
  const selector: LabelSelector = {};
  if (Object.keys(matchLabels).length > 0) selector.matchLabels = matchLabels;
  if (matchExpressions.length > 0) selector.matchExpressions = matchExpressions;
  return { selector };
}
