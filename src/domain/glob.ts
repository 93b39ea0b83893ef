// Anchored globs: `*` stands for any characters (none included), everything else for itself, and
// the whole string must match (`team-*` matches `team-a`, not `my-team-a`).

export type GlobMatcher = (value: string) => boolean;

const cache = new Map<string, GlobMatcher>();
const MAX_CACHED = 10_000;

export function globMatcher(glob: string): GlobMatcher {
  let matcher = cache.get(glob);
  if (matcher === undefined) {
    const pattern = new RegExp(`^${glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&')).join('.*')}$`, 's');
    matcher = (value) => pattern.test(value);
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(glob, matcher);
  }
  return matcher;
}
