// Admission of a distribution written in v1beta1 is that of the same distribution in v1alpha1:
// the same verdicts, the same access reviews, the same warnings; only the words differ, each
// naming the field as the author's version spells it.
import { describe, expect, it } from 'vitest';
import type { ResourceDistribution } from '../../../src/domain/types.js';
import { distribution } from '../builders.js';
import { admit, review, testApp } from './review-builder.js';

interface Case {
  name: string;
  rd: () => ResourceDistribution;
  /** Granted to the author, cluster-wide. */
  grants: string[];
  v1alpha1: { allowed: boolean; message?: string; warnings?: string[] };
  v1beta1: { allowed: boolean; message?: string; warnings?: string[] };
}

const CASES: Case[] = [
  {
    name: 'an invalid operator in the selector',
    rd: () => distribution('bad-op').configMap('cfg', { a: 'b' }).expression('env', 'Near' as 'In', ['x']).build(),
    grants: ['create', 'update'],
    v1alpha1: { allowed: false, message: 'spec.targets.namespaceLabelSelector.matchExpressions[0].operator' },
    v1beta1: { allowed: false, message: 'spec.targets.namespaceSelector.matchExpressions[0].operator' },
  },
  {
    name: 'an invalid label key in the selector',
    rd: () => distribution('bad-key').configMap('cfg', { a: 'b' }).matchLabels({ 'not a key!': 'x' }).build(),
    grants: ['create', 'update'],
    v1alpha1: { allowed: false, message: 'spec.targets.namespaceLabelSelector.matchLabels["not a key!"]' },
    v1beta1: { allowed: false, message: 'spec.targets.namespaceSelector.matchLabels["not a key!"]' },
  },
  {
    name: 'an author who may not write everywhere the selector reaches',
    rd: () => distribution('sel').secret('s', { k: 'v' }).matchLabels({ env: 'prod' }).build(),
    grants: [],
    v1alpha1: { allowed: false, message: 'spec.targets: user "erin" may not create, update secrets in every namespace (required by allNamespaces or namespaceLabelSelector)' },
    v1beta1: { allowed: false, message: 'spec.targets: user "erin" may not create, update secrets in every namespace (required by allNamespaces or namespaceSelector)' },
  },
  {
    name: 'targets that select no namespace',
    rd: () => distribution('none').configMap('cfg', { a: 'b' }).build(),
    grants: ['create', 'update'],
    v1alpha1: { allowed: true, warnings: ['spec.targets selects no namespace: set allNamespaces, includedNamespaces or namespaceLabelSelector'] },
    v1beta1: { allowed: true, warnings: ['spec.targets selects no namespace: set allNamespaces, includedNamespaces or namespaceSelector'] },
  },
  {
    name: 'a valid selector, allowed',
    rd: () => distribution('ok').secret('s', { k: 'v' }).matchLabels({ env: 'prod' }).writePolicy('strict').build(),
    grants: ['create', 'update'],
    v1alpha1: { allowed: true },
    v1beta1: { allowed: true },
  },
];

describe('admission in both served versions', () => {
  it.each(CASES.flatMap((c) => (['v1alpha1', 'v1beta1'] as const).map((version) => ({ ...c, version, expected: c[version] }))))(
    '$name ($version)',
    async ({ rd, grants, version, expected }) => {
      const { app, reviewer } = testApp();
      if (grants.length > 0) reviewer.grant('erin', grants, 'secrets').grant('erin', grants, 'configmaps');
      const response = await admit(app, 'distributions', review().distribution(rd()).user('erin').inVersion(version));
      expect(response.allowed).toBe(expected.allowed);
      if (expected.message !== undefined) expect(response.status?.message).toContain(expected.message);
      expect(response.warnings ?? []).toEqual(expect.arrayContaining(expected.warnings ?? []));
      if (version === 'v1beta1') expect(JSON.stringify(response)).not.toContain('namespaceLabelSelector');
    },
  );

  it.each(CASES)('$name: the same access reviews in both versions', async ({ rd, grants }) => {
    const checksIn = async (version: string): Promise<unknown[]> => {
      const { app, reviewer } = testApp();
      if (grants.length > 0) reviewer.grant('erin', grants, 'secrets').grant('erin', grants, 'configmaps');
      await admit(app, 'distributions', review().distribution(rd()).user('erin').inVersion(version));
      return reviewer.checks;
    };
    expect(await checksIn('v1beta1')).toEqual(await checksIn('v1alpha1'));
  });

  it('an UPDATE in v1beta1 that only changes the selector is reviewed for the namespaces it stops targeting', async () => {
    const { app, reviewer } = testApp();
    reviewer.grant('erin', ['create', 'update'], 'configmaps');
    const before = distribution('upd').configMap('cfg', { a: 'b' }).matchLabels({ env: 'prod' }).build();
    const after = distribution('upd').configMap('cfg', { a: 'b' }).matchLabels({ env: 'dev' }).build();
    const response = await admit(app, 'distributions', review().distribution(after).oldObject(before).operation('UPDATE').user('erin').inVersion('v1beta1'));
    expect(response.allowed).toBe(false);
    expect(response.status?.message).toContain('delete');
    expect(response.status?.message).not.toContain('namespaceLabelSelector');
  });
});
