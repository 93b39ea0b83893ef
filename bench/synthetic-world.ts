// The generated cluster of the simulation: namespaces, distributions of three shapes (all
// namespaces, a label selector, a list of names) and every copy they make, all in sync, as pure
// functions of an index. Nothing is kept: each list generates its objects afresh, as a real API
// server's answer is parsed into objects of their own, so the product's caches hold the only
// long-lived copies. Copies and statuses come from the product's own rendering and status code.
import { hashResource } from '../src/domain/hash.js';
import { renderCopy } from '../src/domain/render.js';
import { computeStatus } from '../src/domain/status.js';
import type { NamespaceObject } from '../src/k8s/cluster-api.js';
import type { Outcome, ResolvedDistribution, Resource, ResourceDistribution } from '../src/domain/types.js';

export interface WorldShape {
  namespaces: number;
  /** Namespaces carry `team: t<i % teams>`; each selector distribution selects one team. */
  teams: number;
  allNamespaces: number;
  selectors: number;
  lists: number;
  /** Names over all list distributions (spread evenly). */
  listedNames: number;
}

export type DistributionShape = 'all-namespaces' | 'selector' | 'list';

const WRITTEN_AT = new Date('2026-11-01T00:00:00Z');

export function namespaceName(index: number): string {
  return `ns-${String(index).padStart(6, '0')}`;
}

function teamOf(shape: WorldShape, index: number): string {
  return `t${index % shape.teams}`;
}

export function namespaceAt(shape: WorldShape, index: number): NamespaceObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespaceName(index), uid: `ns-uid-${index}`, resourceVersion: '1', labels: { team: teamOf(shape, index), 'kubernetes.io/metadata.name': namespaceName(index) } },
    status: { phase: 'Active' },
  };
}

export function distributionCount(shape: WorldShape): number {
  return shape.allNamespaces + shape.selectors + shape.lists;
}

function shapeOf(shape: WorldShape, index: number): DistributionShape {
  if (index < shape.allNamespaces) return 'all-namespaces';
  return index < shape.allNamespaces + shape.selectors ? 'selector' : 'list';
}

/** The namespaces the `i`-th list distribution names: a run of consecutive indexes, spread over the cluster. */
function listedRange(shape: WorldShape, listIndex: number): { first: number; count: number } {
  const start = Math.floor((listIndex * shape.listedNames) / shape.lists);
  const end = Math.floor(((listIndex + 1) * shape.listedNames) / shape.lists);
  return { first: (listIndex * 7919) % shape.namespaces, count: end - start };
}

/** Which namespaces distribution `index` targets (the world's own knowledge; the product works it out with its planner). */
export function targetsOf(shape: WorldShape, index: number): number[] {
  switch (shapeOf(shape, index)) {
    case 'all-namespaces':
      return Array.from({ length: shape.namespaces }, (_, i) => i);
    case 'selector': {
      const team = (index - shape.allNamespaces) % shape.teams;
      return Array.from({ length: Math.ceil((shape.namespaces - team) / shape.teams) }, (_, k) => team + k * shape.teams);
    }
    case 'list': {
      const { first, count } = listedRange(shape, index - shape.allNamespaces - shape.selectors);
      return Array.from({ length: count }, (_, k) => (first + k) % shape.namespaces);
    }
  }
}

function targetsSpec(shape: WorldShape, index: number): ResourceDistribution['spec']['targets'] {
  switch (shapeOf(shape, index)) {
    case 'all-namespaces':
      return { allNamespaces: true };
    case 'selector':
      return { namespaceLabelSelector: { matchLabels: { team: `t${(index - shape.allNamespaces) % shape.teams}` } } };
    case 'list':
      return { includedNamespaces: { list: targetsOf(shape, index).map((i) => ({ name: namespaceName(i) })) } };
  }
}

export function distributionName(index: number): string {
  return `rd-${String(index).padStart(5, '0')}`;
}

export function copiedName(index: number): string {
  return `copied-${String(index).padStart(5, '0')}`;
}

/** The first selector distribution of each team distributes that team's registry credential, named in its pods by injection. */
export function injects(shape: WorldShape, index: number): boolean {
  return shapeOf(shape, index) === 'selector' && index - shape.allNamespaces < shape.teams;
}

export function registryOf(team: number): string {
  return `registry-${team}.example.com`;
}

/** Secrets for selector distributions (pods reference them), ConfigMaps for the others. */
function template(shape: WorldShape, index: number): Resource {
  const name = copiedName(index);
  if (injects(shape, index)) {
    const auths = { [registryOf((index - shape.allNamespaces) % shape.teams)]: { auth: Buffer.from(`puller:${index}`).toString('base64') } };
    return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths })).toString('base64') } };
  }
  if (shapeOf(shape, index) === 'selector') {
    return { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data: { token: Buffer.from(`secret-${index}`).toString('base64') } };
  }
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { 'settings.yaml': `replicas: ${index % 5}\nowner: team-${index % 97}\n` } };
}

/** The distribution without its status. */
function specOnly(shape: WorldShape, index: number): ResolvedDistribution {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ResourceDistribution',
    metadata: { name: distributionName(index), uid: `rd-uid-${index}`, resourceVersion: '1', generation: 1 },
    spec: { resource: template(shape, index), targets: targetsSpec(shape, index), ...(injects(shape, index) ? { imagePullSecretInjection: 'MatchingImages' as const } : {}) },
  };
}

/** Distribution `index` with the status a settled pass writes (every target in sync). */
export function distributionAt(shape: WorldShape, index: number): ResourceDistribution {
  const rd = specOnly(shape, index);
  const outcomes: Outcome[] = targetsOf(shape, index).map((ns) => ({ action: { type: 'in-sync', namespace: namespaceName(ns) }, ok: true }));
  return { ...rd, status: computeStatus({ distribution: rd, outcomes, now: WRITTEN_AT }) };
}

/** Every copy of every distribution of that kind, in sync, each object its own (as parsed from a list). */
export function* copiesOfKind(shape: WorldShape, kind: string): Generator<Resource> {
  for (let index = 0; index < distributionCount(shape); index++) {
    const rd = specOnly(shape, index);
    if (rd.spec.resource.kind !== kind) continue;
    const hash = hashResource(rd.spec.resource);
    const base = renderCopy(rd, '', WRITTEN_AT, hash);
    for (const ns of targetsOf(shape, index)) {
      const copy = structuredClone(base);
      copy.metadata = { ...copy.metadata, namespace: namespaceName(ns), uid: `copy-uid-${index}-${ns}`, resourceVersion: '1' };
      yield copy;
    }
  }
}

export function copyCount(shape: WorldShape): number {
  let total = 0;
  for (let index = 0; index < distributionCount(shape); index++) total += targetsOf(shape, index).length;
  return total;
}
