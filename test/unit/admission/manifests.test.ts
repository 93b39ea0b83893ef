import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { conversionServiceName } from '../../../src/tls/certificates.js';
import { mutatingWebhookConfigurations, webhookConfigurations } from '../../../src/k8s/webhook-config.js';
import { admissionRules, CONTROLLER_RULES, ownNamespaceRules } from '../../rbac-rules.js';

const DIR = 'webhook-config';

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
}

/** Opt-in kustomize components (their own kustomization of kind Component) are not part of the base. */
function isComponent(dir: string): boolean {
  const file = join(DIR, dir, 'kustomization.yaml');
  return existsSync(file) && (parse(readFileSync(file, 'utf8')) as { kind?: string }).kind === 'Component';
}

function yamlFiles(dir: string): string[] {
  return readdirSync(join(DIR, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) return isComponent(path) ? [] : yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) && entry.name !== 'kustomization.yaml' ? [path] : [];
  });
}

function load(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(join(DIR, path), 'utf8')).map((doc) => {
    expect(doc.errors, path).toEqual([]);
    return doc.toJS() as Manifest;
  });
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface Container {
  ports: { name: string; containerPort: number }[];
  securityContext: unknown;
  readinessProbe: { httpGet: unknown };
  livenessProbe: { httpGet: unknown };
  resources: { requests?: unknown; limits?: unknown };
  env: { name: string; value?: string; valueFrom?: unknown }[];
}

const files = yamlFiles('');
const manifests = files.flatMap(load);
const byKind = (kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);
const one = (kind: string): Manifest => {
  const found = byKind(kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};

describe('webhook-config/', () => {
  it('lists every manifest in kustomization.yaml, and nothing else', () => {
    const kustomization = load('kustomization.yaml')[0] as unknown as { resources: string[] };
    expect([...kustomization.resources].sort()).toEqual([...files].sort());
  });

  it('gives every manifest a kind, an apiVersion and a name; namespaced ones live in our namespace', () => {
    const clusterScoped = ['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'CustomResourceDefinition'];
    for (const m of manifests) {
      expect(m.apiVersion, JSON.stringify(m.metadata)).toBeTruthy();
      expect(m.metadata.name).toMatch(/^[a-z0-9][-a-z0-9.]*$/);
      if (!clusterScoped.includes(m.kind)) expect(m.metadata.namespace, `${m.kind}/${m.metadata.name}`).toBe('resource-distributor');
    }
  });

  it('opens only the HTTPS port of the pods, and offers a component that narrows its sources', () => {
    const [policy] = load('network-policy.yaml') as unknown as {
      metadata: { namespace: string };
      spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[]; ingress: { from?: unknown[]; ports: { port: string }[] }[] };
    }[];
    const deployment = one('Deployment') as unknown as { spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } } } };
    expect(policy?.metadata.namespace).toBe('resource-distributor');
    expect(deployment.spec.template.metadata.labels).toMatchObject(policy?.spec.podSelector.matchLabels ?? { missing: true });
    expect(policy?.spec.policyTypes).toEqual(['Ingress']);
    const portNames = deployment.spec.template.spec.containers[0]!.ports.map((port) => port.name);
    expect(policy?.spec.ingress).toEqual([{ ports: [{ port: 'https', protocol: 'TCP' }] }]);
    expect(portNames).toContain('https');

    const component = load('network-policy/kustomization.yaml')[0] as unknown as { kind: string; patches: { path: string; target: object }[] };
    expect(component).toMatchObject({ kind: 'Component', patches: [{ path: 'restrict-sources.yaml', target: { kind: 'NetworkPolicy', name: 'resource-distributor' } }] });
    const [patch] = load('network-policy/restrict-sources.yaml') as unknown as { op: string; path: string; value: { from: unknown[]; ports: { port: string }[] }[] }[][];
    expect(patch?.[0]).toMatchObject({ op: 'replace', path: '/spec/ingress' });
    for (const rule of patch?.[0]?.value ?? []) {
      expect(rule.from.length).toBeGreaterThan(0);
      expect(rule.ports.map((port) => port.port)).toEqual(['https']);
    }
  });

  it('runs two hardened replicas probed over HTTPS', () => {
    const deployment = one('Deployment') as unknown as {
      spec: { replicas: number; template: { spec: { serviceAccountName: string; securityContext: Record<string, unknown>; containers: Container[] } } };
    };
    expect(deployment.spec.replicas).toBe(2);
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).toBe('resource-distributor');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    const container = pod.containers[0]!;
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', scheme: 'HTTPS' });
    expect(container.livenessProbe.httpGet).toMatchObject({ path: '/healthz', scheme: 'HTTPS' });
    expect(container.resources.requests).toBeDefined();
    expect(container.resources.limits).toBeDefined();
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.POD_NAME).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env.RD_MODE).toBe('cluster');
    expect(one('PodDisruptionBudget')).toMatchObject({ spec: { minAvailable: 1 } });
  });

  it('grants exactly the verbs the code calls, by name where Kubernetes allows it', () => {
    const config = loadConfig({});
    const webhookNames = [config.webhookNames.distributions, config.webhookNames.namespaces];
    expect((one('ClusterRole') as unknown as { rules: Rule[] }).rules).toEqual([...CONTROLLER_RULES, ...admissionRules(webhookNames, [config.webhookNames.pods ?? ''])]);
    expect((one('Role') as unknown as { rules: Rule[] }).rules).toEqual(ownNamespaceRules(config.leaseName, config.tlsSecret));
  });

  it('sets the container up with the defaults of src/config.ts and the names the other manifests use', () => {
    const deployment = one('Deployment') as unknown as {
      metadata: { namespace: string };
      spec: { template: { spec: { terminationGracePeriodSeconds: number; containers: Container[] } } };
    };
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0]!;
    const literal = Object.fromEntries(container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
    expect(container.env.find((e) => e.name === 'RD_NAMESPACE')?.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    const config = loadConfig({ ...literal, RD_NAMESPACE: deployment.metadata.namespace, POD_NAME: 'pod' });
    expect(config).toEqual(loadConfig({ POD_NAME: 'pod' }));

    expect(container.ports).toEqual([{ name: 'https', containerPort: config.port, protocol: 'TCP' }]);
    const [admission, conversion] = byKind('Service').sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    expect(admission).toMatchObject({ metadata: { name: config.serviceName }, spec: { ports: [{ port: 443, targetPort: 'https' }] } });
    // The CRD's conversion reaches pods that are not ready yet (see src/tls/certificates.ts).
    expect(conversion).toMatchObject({ metadata: { name: conversionServiceName(config.serviceName) }, spec: { publishNotReadyAddresses: true, ports: [{ port: 443, targetPort: 'https' }] } });
    const roleNames = (one('Role') as unknown as { rules: Rule[] }).rules.flatMap((r) => r.resourceNames ?? []);
    expect(roleNames).toEqual(expect.arrayContaining([config.leaseName, config.tlsSecret]));
    expect(byKind('ValidatingWebhookConfiguration').map((w) => w.metadata.name).sort()).toEqual(
      [config.webhookNames.distributions, config.webhookNames.namespaces].sort(),
    );
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.shutdownDelayMs + config.shutdownTimeoutMs);
  });

  it('grants webhook configuration access only to our two, by name', () => {
    const role = one('ClusterRole') as unknown as { rules: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[] };
    const webhookRule = role.rules.find((r) => r.resources.includes('validatingwebhookconfigurations'));
    expect(webhookRule?.resourceNames?.sort()).toEqual(byKind('ValidatingWebhookConfiguration').map((w) => w.metadata.name).sort());
    expect(role.rules.flatMap((r) => r.verbs)).not.toContain('*');
    expect(role.rules.flatMap((r) => r.resources)).not.toContain('*');
  });

  it('declares the same webhooks as the code registers in local mode (apart from how they are reached)', () => {
    const fromCode = webhookConfigurations({
      names: { distributions: 'resource-distributor-distributions', namespaces: 'resource-distributor-namespaces' },
      ownNamespace: 'resource-distributor',
      clientConfig: () => ({}),
    });
    const strip = (m: unknown): unknown => {
      const copy = structuredClone(m) as { webhooks: { clientConfig: unknown }[] };
      for (const w of copy.webhooks) w.clientConfig = {};
      return copy;
    };
    const fromYaml = byKind('ValidatingWebhookConfiguration').sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    expect(fromYaml.map(strip)).toEqual(fromCode.map(strip));
    const mutating = mutatingWebhookConfigurations({ names: { distributions: '', namespaces: '', pods: 'resource-distributor-pods' }, ownNamespace: 'resource-distributor', clientConfig: () => ({}) });
    expect(byKind('MutatingWebhookConfiguration').map(strip)).toEqual(mutating.map(strip));
  });

  it('points the webhooks at our Service', () => {
    for (const config of byKind('ValidatingWebhookConfiguration') as unknown as { webhooks: { clientConfig: { service: Record<string, unknown> } }[] }[]) {
      for (const webhook of config.webhooks) {
        expect(webhook.clientConfig.service).toMatchObject({ name: 'resource-distributor', namespace: 'resource-distributor', port: 443 });
      }
    }
  });
});

describe('the CRDs, as kubectl shows them', () => {
  interface SchemaNode {
    description?: string;
    properties?: Record<string, SchemaNode>;
    items?: SchemaNode;
  }
  interface Crd {
    metadata: { name: string };
    spec: { versions: { schema: { openAPIV3Schema: SchemaNode }; additionalPrinterColumns?: { name: string; priority?: number; jsonPath: string }[] }[] };
  }
  const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition') as unknown as Crd[];

  /** Every field path without a description (what `kubectl explain` would show bare). */
  function undescribed(node: SchemaNode, path: string): string[] {
    const own = path !== '' && !['apiVersion', 'kind', 'metadata'].includes(path) && node.description === undefined ? [path] : [];
    const children = Object.entries(node.properties ?? {}).flatMap(([key, child]) => undescribed(child, path === '' ? key : `${path}.${key}`));
    return [...own, ...children, ...(node.items ? undescribed({ ...node.items, description: 'an item' }, `${path}[]`) : [])];
  }

  it.each(crds.map((crd) => [crd.metadata.name, crd] as const))('%s describes every field', (_name, crd) => {
    expect(undescribed(crd.spec.versions[0]!.schema.openAPIV3Schema, '')).toEqual([]);
  });

  it('shows what a distribution copies, and whether it is Ready, with -o wide', () => {
    const rd = crds.find((crd) => crd.metadata.name === 'resourcedistributions.apps.kruise.io')!;
    const wide = (rd.spec.versions[0]!.additionalPrinterColumns ?? []).filter((column) => column.priority === 1).map((column) => column.jsonPath);
    expect(wide).toEqual(['.spec.resource.kind', '.spec.resource.metadata.name', '.spec.source.kind', '.spec.source.namespace', '.spec.source.name', '.status.conditions[?(@.type=="Ready")].status']);
  });

  it.each(crds.map((crd) => [crd.metadata.name, crd] as const))('%s: no printer column is titled as kubectl titles the object (NAME, NAMESPACE)', (_name, crd) => {
    const titles = (crd.spec.versions[0]!.additionalPrinterColumns ?? []).map((column) => column.name.toUpperCase());
    expect(titles.filter((title) => title === 'NAME' || title === 'NAMESPACE')).toEqual([]);
  });
});
