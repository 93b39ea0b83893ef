// Anchored globs: `*` stands for any characters (none included), everything else for itself, and
// the whole string must match (`team-*` matches `team-a`, not `my-team-a`).
//
// Matched without regular expressions. A glob is its literal parts between the stars: the first
// must start the value, the last must end it, and each part between is found at its leftmost place
// after the one before. The leftmost place never loses a match that a later one would find (it
// leaves more room for what follows), so no choice is ever revisited: a match costs at most
// value × parts character comparisons. A backtracking regular expression built from `a*a*a*a*b`
// costs value^stars instead, and one such glob held the event loop for half a minute.

import { runSteps, type Steps } from './steps.js';

export type GlobMatcher = (value: string) => boolean;

/** A glob split at its stars: `a*b*` is ['a', 'b', '']. One part: no star, the value itself. */
export interface Glob {
  readonly source: string;
  readonly parts: readonly string[];
}

export function compileGlob(source: string): Glob {
  return { source, parts: source.split('*') };
}

export function globMatches(glob: Glob, value: string): boolean {
  const { parts } = glob;
  const last = parts.length - 1;
  const head = parts[0] as string;
  if (last === 0) return value === head;
  const tail = parts[last] as string;
  if (value.length < head.length + tail.length || !value.startsWith(head) || !value.endsWith(tail)) return false;
  const end = value.length - tail.length;
  let at = head.length;
  for (let i = 1; i < last; i++) {
    const part = parts[i] as string;
    if (part === '') continue;
    const found = value.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** At most this many comparisons for a value of `length` characters (see the module comment). */
export function globSteps(glob: Glob, length: number): number {
  return glob.parts.length === 1 ? 1 : length * glob.parts.length;
}

const cache = new Map<string, GlobMatcher>();
const MAX_CACHED = 10_000;

/** One glob as a function, remembered by its text. */
export function globMatcher(source: string): GlobMatcher {
  let matcher = cache.get(source);
  if (matcher === undefined) {
    const glob = compileGlob(source);
    matcher = (value) => globMatches(glob, value);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(source, matcher);
  }
  return matcher;
}

/**
 * Many globs made ready to test many values: a value is tested against the globs that can match
 * it, not against every glob. Globs without a star are a set; globs that start with a literal are
 * found by the value's prefixes, those that start with a star but end with a literal by its
 * suffixes; only globs with a star at both ends are tried one by one.
 */
export interface GlobSet {
  /** Whether a glob matches `value`; adds what that cost (in comparisons, as worstSteps counts them) to `meter`. */
  has(value: string, meter?: StepMeter): boolean;
  /**
   * The most comparisons one value of `length` characters can cost, whatever its characters: what
   * admission bounds (a pattern list may be cheap to store and dear to test).
   */
  worstSteps(length: number): number;
  /** What worstSteps needs, measured in steps (a set of 10,000 patterns takes milliseconds); worstSteps measures it at once otherwise. */
  measureSteps(): Steps<void>;
}

/** Comparisons spent so far, by whoever holds it. */
export interface StepMeter {
  steps: number;
}

/** Globs grouped by a literal end (their first part, or their last), by that literal. */
type EndIndex = Map<string, Glob[]>;

function addTo(index: EndIndex, key: string, glob: Glob): void {
  const group = index.get(key);
  if (group === undefined) index.set(key, [glob]);
  else group.push(glob);
}

function partsOf(globs: readonly Glob[]): number {
  let parts = 0;
  for (const glob of globs) parts += glob.parts.length;
  return parts;
}

/**
 * The most parts one value can make us try: a value finds one key of each length at most, and
 * keys of two lengths only when the shorter ends the longer (`team-` and `team-a-` for prefixes);
 * so the most parts along such a chain of keys. `within(key, length)` is the key's own end of
 * that length (its prefix, or its suffix).
 */
/** Keys of an index measured in one step: a list may hold 10,000 patterns, each its own key. */
const KEYS_PER_STEP = 2_000;

function* mostPartsTried(index: EndIndex, keyLengths: readonly number[], within: (key: string, length: number) => string): Steps<number> {
  const chain = new Map<string, number>();
  let measured = 0;
  let most = 0;
  // Shorter keys first, so that a key's shorter ends are in the chain when it comes: by length, not sorted one by one.
  const byLength = new Map<number, [string, Glob[]][]>();
  for (const entry of index) {
    const group = byLength.get(entry[0].length);
    if (group === undefined) byLength.set(entry[0].length, [entry]);
    else group.push(entry);
  }
  for (const keyLength of keyLengths) {
    for (const [key, globs] of byLength.get(keyLength) ?? []) {
      if (++measured % KEYS_PER_STEP === 0) yield;
      const parts = mostPartsBefore(chain, key, keyLengths, within) + partsOf(globs);
      chain.set(key, parts);
      if (parts > most) most = parts;
    }
  }
  return most;
}

/** The most parts along the chain of `key`'s shorter ends (those of `keyLengths`). */
function mostPartsBefore(chain: ReadonlyMap<string, number>, key: string, keyLengths: readonly number[], within: (key: string, length: number) => string): number {
  let most = 0;
  for (const length of keyLengths) {
    if (length >= key.length) break;
    const shorter = chain.get(within(key, length));
    if (shorter !== undefined && shorter > most) most = shorter;
  }
  return most;
}

function anyIn(group: readonly Glob[] | undefined, value: string, meter: StepMeter | undefined): boolean {
  if (group === undefined) return false;
  for (const glob of group) {
    if (meter !== undefined) meter.steps += globSteps(glob, value.length);
    if (globMatches(glob, value)) return true;
  }
  return false;
}

/** Whether a glob of `index` whose literal end is `value`'s own (taken by `end`) matches it; one step per key looked up. */
function anyByEnd(index: EndIndex, keyLengths: readonly number[], value: string, end: (length: number) => string, meter: StepMeter | undefined): boolean {
  for (const length of keyLengths) {
    if (length > value.length) break;
    if (meter !== undefined) meter.steps += 1;
    if (anyIn(index.get(end(length)), value, meter)) return true;
  }
  return false;
}

function keyLengthsOf(index: EndIndex): number[] {
  // Shortest first: a value shorter than a key has no key that long either.
  return [...new Set([...index.keys()].map((key) => key.length))].sort((a, b) => a - b);
}

export function compileGlobSet(sources: readonly string[]): GlobSet {
  const exact = new Set<string>();
  const byPrefix: EndIndex = new Map();
  const bySuffix: EndIndex = new Map();
  const rest: Glob[] = [];
  let matchesAll = false;
  for (const source of new Set(sources)) {
    const glob = compileGlob(source);
    const { parts } = glob;
    const head = parts[0] as string;
    const tail = parts[parts.length - 1] as string;
    if (parts.length === 1) exact.add(source);
    else if (parts.every((part) => part === '')) matchesAll = true;
    else if (head !== '') addTo(byPrefix, head, glob);
    else if (tail !== '') addTo(bySuffix, tail, glob);
    else rest.push(glob);
  }
  const prefixLengths = keyLengthsOf(byPrefix);
  const suffixLengths = keyLengthsOf(bySuffix);
  // Only admission asks what a value may cost: counted then, not for every set made.
  let mostParts: number | undefined;
  function* measure(): Steps<number> {
    const prefixes = yield* mostPartsTried(byPrefix, prefixLengths, (key, length) => key.slice(0, length));
    const suffixes = yield* mostPartsTried(bySuffix, suffixLengths, (key, length) => key.slice(key.length - length));
    return (mostParts = prefixes + suffixes + partsOf(rest));
  }
  const mostPartsOfAll = (): number => mostParts ?? runSteps(measure());
  return {
    has(value, meter) {
      if (meter !== undefined) meter.steps += 1;
      if (matchesAll || exact.has(value)) return true;
      return (
        anyByEnd(byPrefix, prefixLengths, value, (length) => value.slice(0, length), meter) ||
        anyByEnd(bySuffix, suffixLengths, value, (length) => value.slice(value.length - length), meter) ||
        anyIn(rest, value, meter)
      );
    },
    worstSteps(length) {
      return 1 + prefixLengths.length + suffixLengths.length + length * mostPartsOfAll();
    },
    *measureSteps() {
      if (mostParts === undefined) yield* measure();
    },
  };
}
