// Relative links and anchors of Markdown files, resolved as GitHub renders them: what a reader
// clicks in README.md or docs/ must land on a file that exists and, after `#`, on a heading there.
// Pure: the caller reads the files.

/** A link target, where it was written. */
export interface Link {
  line: number;
  target: string;
}

const FENCE = /^\s{0,3}(`{3,}|~{3,})/;

/** The lines of a Markdown text outside fenced code blocks and HTML comments, others blanked. */
function proseLines(text: string): string[] {
  const lines = text.split('\n');
  let fence: string | null = null;
  let inComment = false;
  return lines.map((line) => {
    const opener = FENCE.exec(line)?.[1];
    if (fence !== null) {
      if (opener !== undefined && opener[0] === fence[0] && opener.length >= fence.length) fence = null;
      return '';
    }
    if (opener !== undefined && !inComment) {
      fence = opener;
      return '';
    }
    let prose = line;
    if (inComment) {
      const end = prose.indexOf('-->');
      if (end < 0) return '';
      prose = prose.slice(end + 3);
      inComment = false;
    }
    prose = prose.replace(/<!--.*?-->/g, '');
    const start = prose.indexOf('<!--');
    if (start >= 0) {
      prose = prose.slice(0, start);
      inComment = true;
    }
    return prose;
  });
}

/** A line with its inline code spans emptied (a link written inside backticks is not a link). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)(?:(?!\1).)*?\1/g, '``');
}

/** GitHub's anchor for a heading's text (github-slugger): lowercase, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/<[^>]+>/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a Markdown text offers: its headings' (repeats numbered -1, -2, as GitHub does) and explicit `<a id>`/`<a name>`. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading !== null) {
      const slug = githubSlug(heading[1]!);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      found.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const html of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(html[1]!);
  }
  return found;
}

/** Every link target of a Markdown text: inline links and images, and reference definitions. */
export function links(text: string): Link[] {
  const found: Link[] = [];
  proseLines(text).forEach((raw, index) => {
    const line = withoutCodeSpans(raw);
    for (const inline of line.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) found.push({ line: index + 1, target: inline[1]! });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition !== null) found.push({ line: index + 1, target: definition[1]! });
  });
  return found;
}

/** Whether a target leaves the repository (a URL, a mail address): not ours to resolve. */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

/** What a repository offers a link: whether a path exists, and the anchors of a Markdown file. */
export interface Repository {
  exists(path: string): boolean;
  anchorsOf(path: string): Set<string> | undefined;
}

/** Posix path normalisation within the repository; null when it climbs out of it. */
export function joinPath(fromFile: string, target: string): string | null {
  const parts = fromFile.split('/').slice(0, -1);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join('/');
}

/** Why a link of `file` does not resolve, or null when it does. */
export function brokenLink(repository: Repository, file: string, target: string): string | null {
  if (isExternal(target)) return null;
  const hash = target.indexOf('#');
  const pathPart = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const path = pathPart === '' ? file : joinPath(file, decodeURIComponent(pathPart));
  if (path === null) return `${target}: leaves the repository`;
  if (path !== '' && !repository.exists(path)) return `${target}: no file ${path}`;
  if (anchor === null || anchor === '') return null;
  const offered = repository.anchorsOf(path);
  if (offered === undefined) return `${target}: ${path} is not a Markdown file, it has no anchors`;
  return offered.has(anchor) ? null : `${target}: no heading in ${path} has the anchor #${anchor}`;
}
