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

/** The keys a copy's record names; none when it has no record or one that cannot be read (edited by hand). */
export function recordedTemplateKeys(metadata: ObjectMeta): TemplateKeys {
  const value = metadata.annotations?.[ANNOTATION_TEMPLATE_METADATA];
  if (value === undefined) return { labels: [], annotations: [] };
  try {
    const parsed: unknown = JSON.parse(value);
    const record = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    return { labels: strings(record.labels), annotations: strings(record.annotations) };
  } catch {
    return { labels: [], annotations: [] };
  }
}

/** `existing` without the keys `previous` lists that `desired` no longer has. */
export function withoutDropped(existing: StringMap, previous: readonly string[], desired: StringMap): Record<string, string> {
  const kept = { ...existing };
  for (const key of previous) if (desired?.[key] === undefined) delete kept[key];
  return kept;
}
