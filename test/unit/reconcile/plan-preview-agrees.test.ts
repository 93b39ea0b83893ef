// The plan preview admission gives, held against what the reconciler then does and reports: a
// preview made after a pass (an edited distribution applied again) must say what the status says.
import { afterEach, describe, expect, it } from 'vitest';
import { describeTally, type PlanTally } from '../../../src/domain/plan-preview.js';
import { reportedConflict } from '../../../src/domain/status.js';
import { runSteps } from '../../../src/domain/steps.js';
import type { ResourceDistribution } from '../../../src/domain/types.js';
import { validateTargets } from '../../../src/domain/validate-targets.js';
import { createPlanPreviewer } from '../../../src/reconcile/plan-previewer.js';
import { distribution, foreign, T0, type DistributionBuilder } from '../builders.js';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
afterEach(() => h?.caches.stop());

function said(rd: ResourceDistribution): string[] {
  const tally = runSteps(createPlanPreviewer({ caches: h.caches, clock: () => T0, forbiddenNamespaces: [] })(rd));
  const warnings: string[] = [];
  validateTargets(rd.spec.targets, warnings, (name) => h.caches.namespaces.get(name) !== undefined);
  const policy = rd.spec.writePolicy;
  return [...warnings, ...(tally === undefined ? ['(no preview)'] : describeTally(tally, { sameNamedUnknown: true, ...(policy === undefined ? {} : { writePolicy: policy }) }))];
}

function targetsOf(tally: PlanTally | undefined): number {
  return Object.entries(tally ?? {}).reduce((sum, [type, counted]) => (type === 'delete' ? sum : sum + counted.count), 0);
}

const settings = (): DistributionBuilder => distribution('settings').configMap('settings', { a: 'b' });

describe('the plan preview agrees with the status', () => {
  it.each<{ case: string; rd: DistributionBuilder; foreignIn?: string; before: string[]; after: string[]; conflicts: string[]; succeeded: number }>([
    {
      case: 'a conflict the status reports is previewed as a conflict, not as a copy to create',
      rd: settings().included('ns-a', 'ns-b'),
      foreignIn: 'ns-b',
      before: ['plan: 2 copies to create: ns-a, ns-b'],
      after: ['plan: 1 conflict left alone: ns-b', 'plan: 1 copy is already up to date'],
      conflicts: ['ns-b'],
      succeeded: 1,
    },
    {
      case: 'an included name that an exclusion pattern removes is warned about (it targets nothing)',
      rd: settings().included('ns-a').patterns([], ['ns-*']),
      before: ['namespace "ns-a" is included but an excludedNamespaces pattern removes it: never a target'],
      after: ['namespace "ns-a" is included but an excludedNamespaces pattern removes it: never a target'],
      conflicts: [],
      succeeded: 0,
    },
    {
      case: 'writePolicy overwrite: the sentence says what meeting an object does, and it is done',
      rd: settings().included('ns-a', 'ns-b').writePolicy('overwrite'),
      foreignIn: 'ns-b',
      before: ['plan: 2 copies to create: ns-a, ns-b', 'plan: a same-named object someone else made where a copy is created is taken over (writePolicy overwrite)'],
      after: ['plan: 2 copies are already up to date'],
      conflicts: [],
      succeeded: 2,
    },
    {
      case: 'the default policy: creates say nothing more (the sentence would be the same for every distribution)',
      rd: settings().included('ns-a'),
      before: ['plan: 1 copy to create: ns-a'],
      after: ['plan: 1 copy is already up to date'],
      conflicts: [],
      succeeded: 1,
    },
  ])('$case', async ({ rd, foreignIn, before, after, conflicts, succeeded }) => {
    h = await startHarness();
    for (const ns of ['ns-a', 'ns-b']) h.cluster.putNamespace(ns);
    if (foreignIn !== undefined) h.cluster.putObject(foreign('ConfigMap', 'settings', foreignIn).data({ mine: 'x' }).build());
    const admitted = rd.build();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(said(admitted)).toEqual(before);

    h.cluster.putDistribution(admitted);
    expect(await h.reconciler.reconcile('settings')).toBe('done');
    const stored = h.cluster.distributions.get('settings')!;
    expect(said(stored)).toEqual(after);
    // What the status says, the preview made after the pass says too.
    expect([...(reportedConflict(stored.status)?.failedNamespace ?? [])]).toEqual(conflicts);
    expect(stored.status).toMatchObject({ succeeded });
    const tally = runSteps(createPlanPreviewer({ caches: h.caches, clock: () => T0, forbiddenNamespaces: [] })(stored));
    expect(tally?.conflict?.first ?? []).toEqual(conflicts);
    expect(targetsOf(tally)).toBe(stored.status?.desired);
  });
});
