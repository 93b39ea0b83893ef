import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { computeTargets } from '../../src/domain/targets.js';
import { hashResource } from '../../src/domain/hash.js';
import { compileSpecValidator } from '../../src/domain/schema.js';
import type { ResolvedDistribution } from '../../src/domain/types.js';
import { validateDistribution } from '../../src/domain/validate.js';
import { loadCrdSchema } from '../../src/k8s/crd-schema.js';
import { namespace } from './builders.js';

const policiesDir = fileURLToPath(new URL('../../policies/', import.meta.url));
const schema = compileSpecValidator(loadCrdSchema());

/** The examples carry their template inline. */
function load(file: string): ResolvedDistribution {
  return parse(readFileSync(`${policiesDir}${file}`, 'utf8')) as ResolvedDistribution;
}

describe('example policies', () => {
  const files = readdirSync(policiesDir).filter((file) => file.endsWith('.yaml'));

  it('ships the four examples', () => {
    expect(files.sort()).toEqual(['game-demo.yaml', 'image-pull-secret.yaml', 'shared-settings.yaml', 'wildcard-tls.yaml']);
  });

  it.each(files)('%s passes admission validation with the real CRD schema', (file) => {
    const result = validateDistribution({ object: load(file), schema, namespaceExists: () => true });
    expect(result).toEqual({ problems: [], warnings: [] });
  });

  it('game-demo is the documented example: same name, same hash as OpenKruise wrote', () => {
    const rd = load('game-demo.yaml');
    expect(rd.metadata.name).toBe('sample');
    expect(hashResource(rd.spec.resource)).toBe('0821a13321b2c76b5bd63341a0d97fb46bfdbb2f914e2ad6b613d10632fa4b63');
  });

  it('image-pull-secret targets labelled namespaces except the sandbox', () => {
    const rd = load('image-pull-secret.yaml');
    const label = { 'registry.example.com/pull-secret': 'true' };
    const namespaces = [namespace('team-a', label), namespace('sandbox', label), namespace('team-b')];
    expect(computeTargets(rd.spec.targets, namespaces)).toEqual({ targeted: ['team-a'], missing: [] });
    const config = Buffer.from(rd.spec.resource.data?.['.dockerconfigjson'] ?? '', 'base64').toString('utf8');
    expect(JSON.parse(config)).toHaveProperty(['auths', 'registry.example.com', 'auth']);
  });

  it('shared-settings targets every namespace except the excluded and system ones', () => {
    const rd = load('shared-settings.yaml');
    const namespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease', 'resource-distributor', 'shop'].map((n) => namespace(n));
    expect(computeTargets(rd.spec.targets, namespaces)).toEqual({ targeted: ['default', 'shop'], missing: [] });
  });
});
