import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatResourceList, parseResourceList } from './resource-list.js';

// What kustomize writes for a generator: the config as the one item (marked local-config) and as functionConfig.
const FROM_KUSTOMIZE = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps.kruise.io/v1alpha1
  kind: ResourceDistributionGenerator
  metadata:
    annotations:
      config.kubernetes.io/local-config: 'true'
      internal.config.kubernetes.io/id: '1'
    name: rdname
  replicas: 3
functionConfig:
  apiVersion: apps.kruise.io/v1alpha1
  kind: ResourceDistributionGenerator
  metadata:
    name: rdname
  resource:
    resourceOptions:
      annotations:
        dashboard: 1.0
        hex: 0x1F
        quoted: "1"
  targets:
    allNamespaces: true
`;

describe('the ResourceList kustomize passes', () => {
  it('gives the config, numbers kept as written (as Go reads them into strings), and the items as they are', () => {
    const list = parseResourceList(FROM_KUSTOMIZE);
    expect(list.functionConfig).toMatchObject({
      resource: { resourceOptions: { annotations: { dashboard: '1.0', hex: '0x1F', quoted: '1' } } },
      targets: { allNamespaces: true },
    });
    expect(list.items).toEqual([expect.objectContaining({ kind: 'ResourceDistributionGenerator', replicas: 3 })]);
  });

  it.each([
    ['not YAML', 'items: [', 'stdin is not a YAML ResourceList'],
    ['nothing (run by hand)', '', 'stdin holds no ResourceList with a functionConfig'],
    ['no functionConfig', 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n', 'stdin holds no ResourceList with a functionConfig'],
    ['another kind', 'kind: List\nfunctionConfig: {}\n', 'stdin holds no ResourceList'],
  ])('refuses %s, saying how the program is run', (_what, text, message) => {
    expect(() => parseResourceList(text)).toThrow(message);
    expect(() => parseResourceList(text)).toThrow('kustomize build --enable-alpha-plugins --enable-exec');
  });

  it('writes a ResourceList that YAML reads back, every string a string', () => {
    const items = [{ kind: 'ResourceDistribution', metadata: { name: 'rd', annotations: { a: '1', b: 'true', c: 'yes', d: '0777' } }, data: { x: 'line\n' } }];
    const text = formatResourceList(items);
    expect(parse(text)).toEqual({ apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList', items });
    expect(parse(text, { version: '1.1' })).toEqual({ apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList', items });
  });
});
