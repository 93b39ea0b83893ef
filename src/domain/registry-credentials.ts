// Which images an image-pull Secret's credentials are for, by the kubelet's own rules
// (pkg/credentialprovider: keyring.go). A credential key loses its scheme and a leading /v1/ or
// /v2/; it matches an image (normalised, see image-reference.ts) when the hosts have as many
// dot-separated parts, each part matching as a glob, the ports are equal and the key's path is a
// prefix of the image's path; a key for index.docker.io also matches Docker Hub images. Only keys
// are ever read here: credentials are neither kept nor returned. Pure; malformed input is skipped.

import { pathMatch } from './path-match.js';

/** A credential key as the kubelet indexes it. */
export interface RegistryKey {
  hostParts: string[];
  port: string;
  path: string;
}

const DOCKER_HUB_KEY = 'index.docker.io';
const MAX_KEYS = 256;
/**
 * A registry's host and port: a DNS name is at most 253 characters. A longer one names no
 * registry the kubelet could pull from, so nothing is matched against it: each match costs at most
 * a key's part times the image's.
 */
const MAX_HOST_LENGTH = 253 + ':65535'.length;
/** A key longer than that host, a scheme and a long path matches no image that can be pulled: it is not read. */
const MAX_LOCATION_LENGTH = 4096;

interface SplitUrl {
  host: string;
  path: string;
}

/** `https://h:p/path?q` or `h:p/path`, as Go's url.Parse sees the parts the keyring uses. */
function splitUrl(value: string): SplitUrl | undefined {
  const schemeless = value.replace(/^https?:\/\//, '');
  const end = schemeless.search(/[?#]/);
  const trimmed = end < 0 ? schemeless : schemeless.slice(0, end);
  const slash = trimmed.indexOf('/');
  const host = slash < 0 ? trimmed : trimmed.slice(0, slash);
  const path = slash < 0 ? '' : trimmed.slice(slash);
  if (host === '' || /[\s@\\]/.test(host)) return undefined;
  return { host, path };
}

function splitHost(host: string): { hostParts: string[]; port: string } {
  const bracket = host.startsWith('[') ? host.indexOf(']') : -1;
  const colon = host.lastIndexOf(':');
  if (colon > bracket && colon > 0) return { hostParts: host.slice(0, colon).split('.'), port: host.slice(colon + 1) };
  return { hostParts: host.split('.'), port: '' };
}

/** A key of a dockercfg as the keyring stores it: scheme gone, /v1/ or /v2/ gone, "/" alone gone. */
export function parseKey(location: string): RegistryKey | undefined {
  const url = splitUrl(location);
  if (url === undefined) return undefined;
  let path = url.path;
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  if (path === '/') path = '';
  return { ...splitHost(url.host), path };
}

function decode(base64: string | undefined): unknown {
  if (typeof base64 !== 'string') return undefined;
  try {
    return JSON.parse(Buffer.from(base64, 'base64').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function objectKeys(value: unknown): string[] {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
}

/**
 * The credential keys of a registry Secret's data: `.dockerconfigjson` ({"auths": {...}}) or the
 * legacy `.dockercfg` ({...}). Anything malformed yields no key.
 */
export function registryKeys(type: string | undefined, data: Record<string, string> | undefined): RegistryKey[] {
  let locations: string[] = [];
  if (type === 'kubernetes.io/dockerconfigjson') locations = objectKeys((decode(data?.['.dockerconfigjson']) as { auths?: unknown } | undefined)?.auths);
  else if (type === 'kubernetes.io/dockercfg') locations = objectKeys(decode(data?.['.dockercfg']));
  return locations
    .slice(0, MAX_KEYS)
    .filter((location) => location.length <= MAX_LOCATION_LENGTH)
    .flatMap((location) => parseKey(location) ?? []);
}

function keyMatches(key: RegistryKey, image: SplitUrl): boolean {
  if (image.host.length > MAX_HOST_LENGTH) return false;
  const target = splitHost(image.host);
  if (key.port !== target.port || key.hostParts.length !== target.hostParts.length || !image.path.startsWith(key.path)) return false;
  return key.hostParts.every((part, i) => pathMatch(part, target.hostParts[i] ?? ''));
}

/** Docker Hub images: a registry-less first component (as normalised, `docker.io/...`). */
function isDockerHub(repository: string): boolean {
  const [first = '', rest] = repository.split(/\/(.*)/s);
  if (first === '') return false;
  if (rest === undefined || first === 'docker.io' || first === 'index.docker.io') return true;
  return !/[.:]/.test(first);
}

/** Whether the kubelet would use one of these credentials to pull `repository` (a normalised image). */
export function credentialsMatch(keys: readonly RegistryKey[], repository: string): boolean {
  const image = splitUrl(repository);
  if (image === undefined) return false;
  if (keys.some((key) => keyMatches(key, image))) return true;
  return isDockerHub(repository) && keys.some((key) => key.port === '' && key.path === '' && key.hostParts.join('.') === DOCKER_HUB_KEY);
}
