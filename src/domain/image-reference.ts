// Container image references as the kubelet reads them before looking up registry credentials:
// the repository without tag or digest, with Docker Hub's defaults filled in (`nginx` is
// `docker.io/library/nginx`, `index.docker.io/x` is `docker.io/x`). Pure.

const DEFAULT_DOMAIN = 'docker.io';
const LEGACY_DEFAULT_DOMAIN = 'index.docker.io';
const OFFICIAL_PREFIX = 'library/';

/** One path component of a repository name (lower case, separators inside). */
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** A registry host: DNS-ish labels or an IP (v6 in brackets), an optional port. */
const DOMAIN = /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::[0-9]+)?$/;
const TAG = /^[\w][\w.-]{0,127}$/;

/** Docker's rule: the first component names a registry if it has a dot or a colon, is `localhost`, or has upper case. */
function splitDomain(name: string): [string, string] {
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  if (slash < 0 || (!/[.:]/.test(first) && first !== 'localhost' && first.toLowerCase() === first)) {
    return [DEFAULT_DOMAIN, name];
  }
  return [first, name.slice(slash + 1)];
}

/** Drops `@digest` and `:tag`; undefined when either is malformed. */
function withoutTagAndDigest(image: string): string | undefined {
  const at = image.indexOf('@');
  const named = at < 0 ? image : image.slice(0, at);
  if (at >= 0 && !/^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,}$/.test(image.slice(at + 1))) return undefined;
  const colon = named.lastIndexOf(':');
  if (colon <= named.lastIndexOf('/')) return named;
  return TAG.test(named.slice(colon + 1)) ? named.slice(0, colon) : undefined;
}

/**
 * `registry.example.com:5000/team/app:1.2@sha256:...` -> `registry.example.com:5000/team/app`;
 * undefined for what the kubelet could not parse either (it would not pull it).
 */
export function normalizeImage(image: string): string | undefined {
  if (image === '' || image.length > 4096 || /\s/.test(image)) return undefined;
  const name = withoutTagAndDigest(image);
  if (name === undefined || name === '') return undefined;
  const [found, path] = splitDomain(name);
  const domain = found === LEGACY_DEFAULT_DOMAIN ? DEFAULT_DOMAIN : found;
  const repository = domain === DEFAULT_DOMAIN && !path.includes('/') ? `${OFFICIAL_PREFIX}${path}` : path;
  if (!DOMAIN.test(domain) || !repository.split('/').every((component) => PATH_COMPONENT.test(component))) return undefined;
  return `${domain}/${repository}`;
}
