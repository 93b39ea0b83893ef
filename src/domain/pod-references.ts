// The Secrets and ConfigMaps a pod needs before it can start: image-pull Secrets (the
// ServiceAccount's are merged in before webhooks run), volumes (projected sources too), and env /
// envFrom of init, regular and ephemeral containers. Pure; tolerant of any shape (a review is input).

export interface PodReferences {
  secrets: Set<string>;
  configMaps: Set<string>;
}

export type Unknown = Record<string, unknown>;

/** An object of a review's pod, or undefined for anything else. */
export function record(value: unknown): Unknown | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Unknown) : undefined;
}

/** The objects of a list of a review's pod (anything else skipped). */
export function list(value: unknown): Unknown[] {
  if (!Array.isArray(value)) return [];
  const items: Unknown[] = [];
  for (const item of value as unknown[]) {
    const found = record(item);
    if (found !== undefined) items.push(found);
  }
  return items;
}

function add(into: Set<string>, name: unknown): void {
  if (typeof name === 'string' && name !== '') into.add(name);
}

function fromVolumes(spec: Unknown, refs: PodReferences): void {
  for (const volume of list(spec.volumes)) {
    add(refs.secrets, record(volume.secret)?.secretName);
    add(refs.configMaps, record(volume.configMap)?.name);
    for (const source of list(record(volume.projected)?.sources)) {
      add(refs.secrets, record(source.secret)?.name);
      add(refs.configMaps, record(source.configMap)?.name);
    }
  }
}

function fromContainers(containers: unknown, refs: PodReferences): void {
  for (const container of list(containers)) {
    for (const env of list(container.env)) {
      const from = record(env.valueFrom);
      add(refs.secrets, record(from?.secretKeyRef)?.name);
      add(refs.configMaps, record(from?.configMapKeyRef)?.name);
    }
    for (const envFrom of list(container.envFrom)) {
      add(refs.secrets, record(envFrom.secretRef)?.name);
      add(refs.configMaps, record(envFrom.configMapRef)?.name);
    }
  }
}

export function podReferences(pod: unknown): PodReferences {
  const refs: PodReferences = { secrets: new Set(), configMaps: new Set() };
  const spec = record(record(pod)?.spec);
  if (spec === undefined) return refs;
  for (const secret of list(spec.imagePullSecrets)) add(refs.secrets, secret.name);
  fromVolumes(spec, refs);
  for (const field of ['initContainers', 'containers', 'ephemeralContainers']) fromContainers(spec[field], refs);
  return refs;
}
