import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiextensionsV1Api, KubernetesObjectApi, loadYaml, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { describeApiError, isAlreadyExists, isConflict, isNotFound } from '../../src/k8s/errors.js';

interface Manifest {
  object: KubernetesObject;
  source: string;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/;
// Folders such as webhook-config/ hold a kustomization next to the manifests; it is not an object.
const NOT_MANIFESTS = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);

async function manifestFiles(path: string): Promise<string[]> {
  if (!(await stat(path)).isDirectory()) return [path];
  const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = join(path, entry.name);
      if (entry.isDirectory()) return manifestFiles(full);
      return Promise.resolve(MANIFEST_FILE.test(entry.name) && !NOT_MANIFESTS.has(entry.name) ? [full] : []);
    }),
  );
  return nested.flat();
}

function isObject(value: unknown): value is KubernetesObject & Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/*
 * KubernetesObjectApi serializes known kinds through the client's typed models, which read model
 * property names (`x_kubernetes_preserve_unknown_fields`, `_enum`), not wire names: a plain object
 * parsed from YAML silently loses every `x-kubernetes-*` and `enum` of a CRD schema. loadYaml maps
 * wire names to model names (JSON is YAML), so the round trip keeps them.
 */
function toClientModel(object: KubernetesObject): KubernetesObject {
  return loadYaml<KubernetesObject>(JSON.stringify(object));
}

/**
 * Every object of a (multi-document) YAML or JSON file, in wire format (as `kubectl` would send
 * it); `kind: List` is expanded.
 */
export async function readManifests(file: string): Promise<KubernetesObject[]> {
  const documents = parseAllDocuments(await readFile(file, 'utf8'));
  const objects: KubernetesObject[] = [];
  for (const document of documents) {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((e) => e.message).join('; ')}`);
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (!isObject(value) || !value.apiVersion || !value.kind) throw new Error(`${file}: a document is not a Kubernetes object`);
    if (value.kind === 'List' && Array.isArray(value.items)) objects.push(...(value.items as KubernetesObject[]));
    else objects.push(value);
  }
  return objects;
}

function describe(manifest: Manifest): string {
  const { kind, metadata } = manifest.object;
  const name = metadata?.namespace ? `${metadata.namespace}/${metadata.name ?? ''}` : (metadata?.name ?? '');
  return `${kind ?? '?'} ${name} (${basename(manifest.source)})`;
}

async function createOrReplace(client: KubernetesObjectApi, manifest: Manifest): Promise<void> {
  const { object } = manifest;
  try {
    await client.create(object);
    return;
  } catch (error) {
    if (!isAlreadyExists(error)) throw new Error(`cannot create ${describe(manifest)}: ${describeApiError(error).message}`, { cause: error });
  }
  for (let attempt = 1; ; attempt++) {
    try {
      const current = await client.read({ apiVersion: object.apiVersion!, kind: object.kind!, metadata: { name: object.metadata!.name!, namespace: object.metadata?.namespace } });
      await client.replace({ ...object, metadata: { ...object.metadata, resourceVersion: current.metadata?.resourceVersion } });
      return;
    } catch (error) {
      // Someone else (a controller) wrote it between our read and our replace.
      if (!isConflict(error) || attempt >= 5) throw new Error(`cannot replace ${describe(manifest)}: ${describeApiError(error).message}`, { cause: error });
    }
  }
}

const isCrd = (manifest: Manifest): boolean => manifest.object.kind === 'CustomResourceDefinition';
const isNamespace = (manifest: Manifest): boolean => manifest.object.kind === 'Namespace' && manifest.object.apiVersion === 'v1';

/**
 * Creates or replaces every object found in `paths` (files, or folders read recursively in name
 * order). CustomResourceDefinitions go first and are waited for until Established, then
 * Namespaces, then everything else in file order.
 */
export async function applyManifestFiles(kc: KubeConfig, paths: string[]): Promise<void> {
  const files = (await Promise.all(paths.map(manifestFiles))).flat();
  const manifests: Manifest[] = [];
  for (const source of files) for (const object of await readManifests(source)) manifests.push({ object: toClientModel(object), source });

  const crds = manifests.filter(isCrd);
  for (const crd of crds) await createOrReplace(KubernetesObjectApi.makeApiClient(kc), crd);
  await Promise.all(crds.map((crd) => waitForCrdEstablished(kc, crd.object.metadata?.name ?? '')));

  // A fresh client: the first one may have cached discovery from before the CRDs existed.
  const client = KubernetesObjectApi.makeApiClient(kc);
  for (const namespace of manifests.filter(isNamespace)) await createOrReplace(client, namespace);
  for (const other of manifests.filter((m) => !isCrd(m) && !isNamespace(m))) await createOrReplace(client, other);
}

/** Resolves once the CRD `name` (e.g. `resourcedistributions.apps.kruise.io`) is Established. */
export async function waitForCrdEstablished(kc: KubeConfig, name: string, timeoutMs = 60_000): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const deadline = Date.now() + timeoutMs;
  let last = 'not found';
  for (;;) {
    try {
      const crd = await api.readCustomResourceDefinition({ name });
      const established = crd.status?.conditions?.find((c) => c.type === 'Established');
      if (established?.status === 'True') return;
      last = established ? `Established=${established.status}: ${established.message ?? ''}` : 'no Established condition yet';
    } catch (error) {
      if (!isNotFound(error)) last = describeApiError(error).message;
    }
    if (Date.now() > deadline) throw new Error(`CustomResourceDefinition ${name} not Established within ${timeoutMs / 1000} s (${last})`);
    await sleep(100);
  }
}
