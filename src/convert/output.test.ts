import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { note, unconverted } from './findings.js';
import { formatConversion } from './output.js';

const distribution = (name: string): { origins: string[]; object: { apiVersion: string; kind: string; metadata: { name: string }; spec: Record<string, unknown> } } => ({
  origins: [`mittwald replicator: Secret a/${name}`, `emberstack reflector: Secret b/${name}`],
  object: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ResourceDistribution', metadata: { name }, spec: { targets: { allNamespaces: true } } },
});

describe('the converter output', () => {
  it('is the distributions as YAML documents, each under what it replaces, the findings on top', () => {
    const text = formatConversion({ distributions: [distribution('x'), distribution('y')], findings: [unconverted('Secret a/x', 'why'), note('Secret c/x', 'how')] });
    expect(text.startsWith('# not converted: Secret a/x: why\n# note: Secret c/x: how\n# replaces mittwald replicator: Secret a/x\n# replaces emberstack reflector: Secret b/x\n')).toBe(true);
    expect(parseAllDocuments(text).map((document) => document.toJS() as unknown)).toEqual([distribution('x').object, distribution('y').object]);
  });

  it('says when there is no distribution', () => {
    expect(formatConversion({ distributions: [], findings: [unconverted('Secret a/x', 'why')] })).toBe('# not converted: Secret a/x: why\n# no distribution\n');
  });
});
