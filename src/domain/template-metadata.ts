// Which labels and annotations of a copy came from its template, recorded on the copy itself
// (ANNOTATION_TEMPLATE_METADATA): when the template drops a key, the next write removes it from
// the copy, while keys others added to the copy are kept. A copy without the record (written
// before it existed, or adopted) has no keys of the template's to remove.
import { ANNOTATION_TEMPLATE_METADATA, type ObjectMeta } from './types.js';

export interface TemplateKeys {
  labels: readonly string[];
  annotations: readonly string[];
}

type StringMap = Record<string, string> | undefined;

/** The record's value for a template's metadata, undefined when it has neither labels nor annotations. */
export function templateKeysRecord(labels: StringMap, annotations: StringMap): string | undefined {
  const record: Partial<TemplateKeys> = {};
  const labelKeys = Object.keys(labels ?? {}).sort();
  const annotationKeys = Object.keys(annotations ?? {}).sort();
  if (labelKeys.length > 0) record.labels = labelKeys;
  if (annotationKeys.length > 0) record.annotations = annotationKeys;
  return labelKeys.length + annotationKeys.length === 0 ? undefined : JSON.stringify(record);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

const NO_KEYS: TemplateKeys = Object.freeze({ labels: Object.freeze([]), annotations: Object.freeze([]) });
let lastRead: { value: string | undefined; keys: TemplateKeys } = { value: undefined, keys: NO_KEYS };

/** The keys a copy's record names; none when it has no record or one that cannot be read (edited by hand). */
export function recordedTemplateKeys(metadata: ObjectMeta): TemplateKeys {
  const value = metadata.annotations?.[ANNOTATION_TEMPLATE_METADATA];
  if (value === undefined) return NO_KEYS;
  // Every copy of a template carries the same record: a pass over many reads it once.
  if (value !== lastRead.value) lastRead = { value, keys: parseRecord(value) };
  return lastRead.keys;
}

function parseRecord(value: string): TemplateKeys {
  try {
    const parsed: unknown = JSON.parse(value);
    const record = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    return Object.freeze({ labels: Object.freeze(strings(record.labels)), annotations: Object.freeze(strings(record.annotations)) });
  } catch {
    return NO_KEYS;
  }
}

/**
 * A copy's labels or annotations once written: the keys of `existing` that neither `previous`
 * lists while `desired` no longer has them, nor `replaced` names, then all of `desired`'s.
 */
export function mergedKeys(existing: StringMap, previous: readonly string[], desired: StringMap, replaced: readonly string[] = []): Record<string, string> {
  const merged: Record<string, string> = {};
  if (existing !== undefined) {
    for (const key of Object.keys(existing)) {
      if (replaced.includes(key) || (desired?.[key] === undefined && previous.includes(key))) continue;
      merged[key] = existing[key] as string;
    }
  }
  return Object.assign(merged, desired);
}
