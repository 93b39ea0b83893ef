// The objects in the converter's input: YAML or JSON documents as `kubectl get -o yaml` and
// manifest files hold them, a `v1 List` (or any `…List` with items) read as its items.
import { parseAllDocuments } from 'yaml';

export interface Manifest {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  [key: string]: unknown;
}

export class ManifestError extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function flatten(value: unknown, into: Manifest[]): void {
  if (!isObject(value)) return;
  if (typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items)) {
    for (const item of value.items) flatten(item, into);
  } else {
    into.push(value);
  }
}

/** Every object of one input; `origin` names it in errors (a file name, or `stdin`). */
export function parseManifests(text: string, origin: string): Manifest[] {
  const objects: Manifest[] = [];
  for (const document of parseAllDocuments(text)) {
    // Only the position: a message quoting the document could quote a Secret's data.
    const error = document.errors[0];
    if (error !== undefined) throw new ManifestError(`${origin}: not YAML (${error.code} at line ${error.linePos?.[0].line ?? '?'})`);
    flatten(document.toJS(), objects);
  }
  return objects;
}

/** `Secret default/name`, as findings and comments name an object. */
export function describe(object: Manifest): string {
  const namespace = object.metadata?.namespace;
  return `${object.kind ?? '?'} ${namespace === undefined ? '' : `${namespace}/`}${object.metadata?.name ?? '?'}`;
}

export function annotationsOf(object: Manifest): Record<string, string> {
  return object.metadata?.annotations ?? {};
}
