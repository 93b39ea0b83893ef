// Go's path/filepath.Match on Linux, which the kubelet applies to each dot-separated part of a
// registry host: `*` for any characters but '/', `?` for one, `[...]` a class (`^` negates it,
// `a-z` a range), `\` escapes. A malformed pattern matches nothing (Go returns ErrBadPattern, and
// the kubelet then does not use the credential).
//
// Written as Go's own algorithm, not as a regular expression: the pattern is cut into chunks at
// its stars, and each chunk is matched at the leftmost place it can be. Every chunk stands for a
// fixed number of characters, so the leftmost place never loses a match, and a match costs at most
// pattern × text steps (a backtracking regular expression of `a*a*a*b` against a long host costs
// text^stars: one pod with a 4,000-character host held the event loop for 37 s).

const SEPARATOR = '/';

class BadPattern extends Error {}

/** The leading stars, the chunk up to the next unescaped star outside a class, and what remains. */
function scanChunk(pattern: string): { star: boolean; chunk: string; rest: string } {
  let i = 0;
  while (pattern.charAt(i) === '*') i++;
  const star = i > 0;
  const from = i;
  let inClass = false;
  for (; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === '\\') i++;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '*' && !inClass) break;
  }
  return { star, chunk: pattern.slice(from, i), rest: pattern.slice(i) };
}

/** One character of a class (escapes undone), and what follows it. */
function classChar(chunk: string[], at: number): { char: string; next: number } {
  let i = at;
  const first = chunk[i];
  if (first === undefined || first === '-' || first === ']') throw new BadPattern();
  if (first === '\\') {
    i++;
    if (chunk[i] === undefined) throw new BadPattern();
  }
  const char = chunk[i] as string;
  if (i + 1 >= chunk.length) throw new BadPattern();
  return { char, next: i + 1 };
}

/** A class starting after its '[': whether `char` is in it (undefined: none to test), and where the class ends. */
function matchClass(chunk: string[], at: number, char: string | undefined): { matched: boolean; next: number } {
  let i = at;
  const negated = chunk[i] === '^';
  if (negated) i++;
  let matched = false;
  for (let ranges = 0; ; ranges++) {
    if (chunk[i] === ']' && ranges > 0) return { matched: matched !== negated, next: i + 1 };
    const low = classChar(chunk, i);
    let high = low;
    if (chunk[low.next] === '-') high = classChar(chunk, low.next + 1);
    if (char !== undefined && low.char <= char && char <= high.char) matched = true;
    i = high.next;
  }
}

/** Where matching a chunk stands: in the chunk, in the text, and whether it has failed (the chunk is still read to its end for its syntax). */
interface Cursor {
  c: number;
  t: number;
  failed: boolean;
}

/** One element of the chunk: a class, '?', or a character (escaped or not). */
function step(chunk: string[], text: string[], at: Cursor): void {
  const p = chunk[at.c];
  if (p === '[') {
    const result = matchClass(chunk, at.c + 1, at.failed ? undefined : text[at.t++]);
    if (!result.matched) at.failed = true;
    at.c = result.next;
    return;
  }
  if (p === '?') {
    if (!at.failed && text[at.t++] === SEPARATOR) at.failed = true;
    at.c++;
    return;
  }
  if (p === '\\') {
    at.c++;
    if (at.c >= chunk.length) throw new BadPattern();
  }
  if (!at.failed && chunk[at.c] !== text[at.t++]) at.failed = true;
  at.c++;
}

/** Matches one chunk at `from` in `text` (code points): where the rest of the text starts, or undefined. Throws BadPattern. */
function matchChunk(chunk: string[], text: string[], from: number): number | undefined {
  const at: Cursor = { c: 0, t: from, failed: false };
  while (at.c < chunk.length) {
    if (!at.failed && at.t >= text.length) at.failed = true;
    step(chunk, text, at);
  }
  return at.failed ? undefined : at.t;
}

/** After a star: the chunk matched at the leftmost place past `from` (a star spans no separator), or undefined. */
function matchAfterStar(chunk: string[], text: string[], from: number, last: boolean): number | undefined {
  for (let i = from; i < text.length && text[i] !== SEPARATOR; i++) {
    const after = matchChunk(chunk, text, i + 1);
    if (after !== undefined && !(last && after < text.length)) return after;
  }
  return undefined;
}

/** Go checks the rest of the pattern's syntax before it answers false. */
function checkSyntax(pattern: string): void {
  let rest = pattern;
  while (rest.length > 0) {
    const next = scanChunk(rest);
    rest = next.rest;
    matchChunk([...next.chunk], [], 0);
  }
}

function match(pattern: string, name: string): boolean {
  const text = [...name];
  let t = 0;
  let rest = pattern;
  while (rest.length > 0) {
    const scanned = scanChunk(rest);
    rest = scanned.rest;
    const chunk = [...scanned.chunk];
    if (scanned.star && chunk.length === 0) return !text.slice(t).includes(SEPARATOR);
    const here = matchChunk(chunk, text, t);
    const next = here !== undefined && (here === text.length || rest.length > 0) ? here : scanned.star ? matchAfterStar(chunk, text, t, rest.length === 0) : undefined;
    if (next === undefined) {
      checkSyntax(rest);
      return false;
    }
    t = next;
  }
  return t === text.length;
}

/** filepath.Match(pattern, name) on Linux; a malformed pattern is no match. */
export function pathMatch(pattern: string, name: string): boolean {
  try {
    return match(pattern, name);
  } catch (error) {
    if (error instanceof BadPattern) return false;
    throw error;
  }
}
