// Who authored a distribution's spec, recorded on the distribution itself so that the controller
// can ask again, later, whether that user may still do what the distribution does. Admission
// writes it (the mutating webhook) and guards it (the validating webhook): it always names the
// user whose request last changed the spec, and nobody can set or change it by hand.
import { canonicalJson } from './hash.js';

/** The annotation holding the author: JSON of the admission request's userInfo. */
export const ANNOTATION_AUTHOR = 'resource-distributor.io/author';

/** The user as the API server authenticated them: what a SubjectAccessReview asks about. */
export interface Author {
  username: string;
  uid?: string;
  groups: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}

/** The annotation's value for `author`: canonical JSON, so that every replica writes the same bytes. */
export function authorValue(author: Author): string {
  const extra = author.extra !== undefined && Object.keys(author.extra).length > 0 ? { extra: author.extra } : {};
  return canonicalJson({ username: author.username, ...(author.uid ? { uid: author.uid } : {}), groups: author.groups, ...extra });
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

function isExtra(value: unknown): value is Record<string, string[]> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.values(value).every(isStringList);
}

/** The author an annotation value names; 'unreadable' for anything admission would never have written. */
export function parseAuthor(value: string): Author | 'unreadable' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return 'unreadable';
  }
  const { username, uid, groups, extra } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof username !== 'string' || username === '' || !isStringList(groups)) return 'unreadable';
  if ((uid !== undefined && typeof uid !== 'string') || (extra !== undefined && !isExtra(extra))) return 'unreadable';
  return { username, ...(uid ? { uid } : {}), groups, ...(extra ? { extra } : {}) };
}

/** The recorded author of an object (undefined: none, as for distributions admitted before authors were recorded). */
export function recordedAuthor(object: unknown): string | undefined {
  const annotations = (object as { metadata?: { annotations?: Record<string, unknown> } } | null | undefined)?.metadata?.annotations;
  const value = annotations?.[ANNOTATION_AUTHOR];
  return typeof value === 'string' ? value : undefined;
}

export interface AuthorInput {
  operation: 'CREATE' | 'UPDATE';
  /** The requesting user. */
  user: Author;
  /** An UPDATE that changes the spec (a CREATE always authors one). */
  specChanged: boolean;
  /** What the stored object recorded before this UPDATE. */
  old?: string | undefined;
}

/**
 * Pure: the author the object must record once admitted. A new spec is its requester's; an update
 * that leaves the spec as it is (labels, finalizers, the garbage collector) keeps the old record,
 * or the lack of one: it was not reviewed, so it may not name anyone.
 */
export function expectedAuthor(input: AuthorInput): string | undefined {
  return input.operation === 'CREATE' || input.specChanged ? authorValue(input.user) : input.old;
}

const GUARDED = `metadata.annotations[${ANNOTATION_AUTHOR}]`;

/**
 * Pure: why the recorded author is refused, if it is. It must be what `expectedAuthor` says. A
 * new spec without any record is let through only where authors are not recorded (`required`
 * false: no mutating webhook is registered) and is then treated like a distribution from before.
 */
export function authorProblem(input: AuthorInput & { recorded: string | undefined; required: boolean }): string | undefined {
  const expected = expectedAuthor(input);
  if (input.recorded === expected) return undefined;
  const newSpec = input.operation === 'CREATE' || input.specChanged;
  if (input.recorded === undefined && newSpec && !input.required) return undefined;
  if (input.recorded === undefined) return `${GUARDED}: not recorded; the mutating webhook of distributions must be registered`;
  return `${GUARDED}: names the user whose request last changed spec; it is set by admission and cannot be set or changed by hand`;
}

/** A JSONPatch operation, as the mutating webhook answers. */
export type PatchOperation = { op: 'add'; path: string; value: unknown } | { op: 'remove'; path: string };

const pointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** Pure: the patch that makes `object` record `value` (undefined: no author); empty when it already does. */
export function authorPatch(object: unknown, value: string | undefined): PatchOperation[] {
  if (recordedAuthor(object) === value) return [];
  const annotations = (object as { metadata?: { annotations?: unknown } } | undefined)?.metadata?.annotations;
  const path = `/metadata/annotations/${pointer(ANNOTATION_AUTHOR)}`;
  if (value === undefined) return [{ op: 'remove', path }];
  if (annotations === undefined || annotations === null) return [{ op: 'add', path: '/metadata/annotations', value: { [ANNOTATION_AUTHOR]: value } }];
  // `add` on an existing member replaces it.
  return [{ op: 'add', path, value }];
}

/** What the copies of a source would be made of: one object at one version. */
export interface SourceVersion {
  uid: string;
  resourceVersion: string;
}

/** What was last decided for a distribution: the question's key and the answer. */
export interface RememberedVerdict {
  key: string;
  allowed: boolean;
  message?: string;
}

export type SourceDecision =
  /** Nobody is recorded (a distribution admitted before authors were): its admission is all there is. */
  | { kind: 'unchecked' }
  /** The same author, source object and version as last time: that answer holds. */
  | { kind: 'known'; allowed: boolean; message?: string }
  /** Ask whether `author` may still `get` the source, and remember the answer under `key`. */
  | { kind: 'ask'; key: string; author: Author }
  /** A record admission would never write: nothing is copied on its behalf. */
  | { kind: 'refuse'; key: string; message: string };

/**
 * Pure: whether copying `source` on behalf of the recorded author needs a new question. It does
 * whenever the source is another object (it appeared after admission, or was deleted and made
 * again, maybe by someone else) or another version of it: what the copies would receive changed,
 * and the author's right to read it is asked again. Nothing is asked while the source stays as it is.
 */
export function sourceDecision(recorded: string | undefined, source: SourceVersion, remembered: RememberedVerdict | undefined): SourceDecision {
  if (recorded === undefined) return { kind: 'unchecked' };
  const key = `${source.uid}/${source.resourceVersion}/${recorded}`;
  if (remembered?.key === key) return { kind: 'known', allowed: remembered.allowed, ...(remembered.message === undefined ? {} : { message: remembered.message }) };
  const author = parseAuthor(recorded);
  if (author === 'unreadable') return { kind: 'refuse', key, message: `the recorded author (${ANNOTATION_AUTHOR}) is unreadable: nothing is copied on its behalf` };
  return { kind: 'ask', key, author };
}

/** The condition's message when the author may no longer read the source. */
export function sourceDenial(author: Author, source: { resource: string; namespace: string; name: string }): string {
  return `author "${author.username}" may not get ${source.resource} "${source.name}" in namespace "${source.namespace}": the copies are kept as they are and not updated`;
}
