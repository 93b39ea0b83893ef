// What admission validation reports, and safe reads of an object that has not been validated yet.

/** One thing wrong with the object: the field, and what to do about it. */
export interface FieldProblem {
  path: string;
  message: string;
}

export type UnknownRecord = Record<string, unknown>;

export function asRecord(value: unknown): UnknownRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as UnknownRecord) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** `"value"` for messages; long values are cut so that a message stays one readable line. */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 77)}...` : text);
}

/** A map key in a field path: `data["tls.crt"]`. */
export function keyPath(base: string, key: string): string {
  return `${base}[${JSON.stringify(key)}]`;
}
