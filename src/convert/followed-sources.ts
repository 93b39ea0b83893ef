// Distributions that follow an existing object (`spec.source`): what replicator and reflector do.
// Everything one input says about one source (pushes, pulls, both tools) becomes one distribution,
// since two distributions of the same source would compete for the same copies.
import { API_VERSION, KIND, type SourceRef } from '../domain/types.js';
import { type Finding, note, unconverted } from './findings.js';
import { type Manifest } from './manifests.js';
import { isEmptySet, type NamespaceSet, targetsOf, union } from './namespace-set.js';

export interface ConvertedDistribution {
  /** What it replaces, as a comment above it: `mittwald replicator: Secret default/x`. */
  origins: string[];
  object: { apiVersion: string; kind: string; metadata: { name: string }; spec: Record<string, unknown> };
}

interface FollowedSource {
  source: SourceRef;
  set: NamespaceSet;
  origins: string[];
  stripLabels?: boolean;
  /** Whether an origin is replicator or reflector, whose annotations the source carries. */
  toolAnnotations: boolean;
}

/**
 * The old tools' own annotations stay off the copies: on a copy they would make a tool still
 * running treat it as a source of its own, and they mean nothing once it is gone.
 */
export const TOOL_ANNOTATIONS = ['replicator.v1.mittwald.de/*', 'reflector.v1.k8s.emberstack.com/*'];

/** The kinds whose copies are written from the source as is; RoleBinding is copied from an inline template only. */
const SOURCE_KINDS_BY_DEFAULT = ['Secret', 'ConfigMap'];

export function sourceRefOf(object: Manifest): SourceRef | undefined {
  const { apiVersion, kind, metadata } = object;
  if (apiVersion === undefined || kind === undefined || metadata?.name === undefined || metadata.namespace === undefined) return undefined;
  return { apiVersion, kind, namespace: metadata.namespace, name: metadata.name };
}

function keyOf(source: SourceRef): string {
  return `${source.apiVersion}/${source.kind}/${source.namespace}/${source.name}`;
}

/** The distribution's name: the source's namespace and name, as a DNS subdomain. */
export function distributionName(...parts: string[]): string {
  return parts.join('-').toLowerCase().replace(/[^a-z0-9.-]/g, '-').slice(0, 253).replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
}

function copyMetadataOf(stripLabels: boolean, toolAnnotations: boolean): { copyMetadata?: Record<string, unknown> } {
  if (!stripLabels && !toolAnnotations) return {};
  return { copyMetadata: { ...(stripLabels ? { labels: { exclude: ['*'] } } : {}), ...(toolAnnotations ? { annotations: { exclude: TOOL_ANNOTATIONS } } : {}) } };
}

export class FollowedSources {
  private readonly bySource = new Map<string, FollowedSource>();

  constructor(private readonly findings: Finding[]) {}

  /** The namespaces `origin` copies `source` into, added to what other origins said of it. */
  add(source: SourceRef, set: NamespaceSet, origin: string, toolAnnotations = true): void {
    const subject = `${source.kind} ${source.namespace}/${source.name}`;
    if (isEmptySet(set)) return;
    if (source.kind === 'RoleBinding') {
      this.findings.push(unconverted(subject, 'a RoleBinding is distributed from an inline template only (spec.resource), not followed: whoever may edit it would grant its role everywhere'));
      return;
    }
    const key = keyOf(source);
    const before = this.bySource.get(key);
    if (before === undefined) {
      this.bySource.set(key, { source, set, origins: [origin], toolAnnotations });
      if (!SOURCE_KINDS_BY_DEFAULT.includes(source.kind)) this.findings.push(note(subject, `${source.kind} is copied only where RD_ALLOWED_KINDS allows it`));
      return;
    }
    const merged = union(before.set, set);
    if (merged === undefined) {
      this.findings.push(unconverted(subject, `the namespaces of ${origin} cannot join those of ${before.origins.join(', ')} in one distribution (two label selectors, or exclusions): they are left out`));
      return;
    }
    before.set = merged;
    before.toolAnnotations ||= toolAnnotations;
    if (!before.origins.includes(origin)) before.origins.push(origin);
  }

  /** Labels of the source kept off the copies (replicator's strip-labels). */
  stripLabels(source: SourceRef): void {
    const followed = this.bySource.get(keyOf(source));
    if (followed !== undefined) followed.stripLabels = true;
  }

  distributions(): ConvertedDistribution[] {
    return [...this.bySource.values()].map(({ source, set, origins, stripLabels, toolAnnotations }) => ({
      origins,
      object: {
        apiVersion: API_VERSION,
        kind: KIND,
        metadata: { name: distributionName(source.namespace, source.name) },
        spec: {
          source,
          targets: targetsOf(set),
          ...copyMetadataOf(stripLabels === true, toolAnnotations),
        },
      },
    }));
  }
}
