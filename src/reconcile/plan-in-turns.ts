// The plan of a full pass over many namespaces, made a slice of namespaces at a time with a turn of
// the event loop between slices. Rendering 10,000 copies takes the better part of a second; made at
// once, and by several passes one after another (every template changed together), it held webhook
// calls and watch events for seconds: long enough for the API server to give up on the namespace
// webhook, which then admits the namespace without generating its copies. Each slice is planned as
// a pass within those namespaces is (planDistribution's `within`): together they give the whole
// plan. The pass writes each slice while it plans the next, and plans no further ahead than its
// writes need (see mapBoundedBatches): its first writes need not wait for the whole plan, and the
// copies it renders are short-lived instead of made for every namespace at once.
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { planDistribution } from '../domain/plan.js';
import type { Steps } from '../domain/steps.js';
import { forbiddenFor, listedTargets } from '../domain/targets.js';
import type { Action, NamespaceInfo, ResolvedDistribution, Resource } from '../domain/types.js';
import { loopSlices } from '../loop-slices.js';

export interface FullPlanInput {
  distribution: ResolvedDistribution;
  namespaces: readonly NamespaceInfo[];
  existing: ReadonlyMap<string, Resource>;
  forbidden: readonly string[];
  now: Date;
}

/** Every namespace the plan decides for: those given, and the listed ones that do not exist. */
function everyName(input: FullPlanInput): string[] {
  const names = input.namespaces.map((ns) => ns.name);
  const known = new Set(names);
  for (const name of listedTargets(input.distribution.spec.targets, forbiddenFor(input.distribution, input.forbidden))) if (!known.has(name)) names.push(name);
  return names;
}

/**
 * planDistribution's actions, `sliceSize` namespaces at a time, each slice as soon as it is made:
 * the pass writes one while it plans the next. writePolicy strict plans at once: one conflict
 * anywhere holds back every write, which no slice can tell alone.
 */
export async function* planSlices(input: FullPlanInput, sliceSize: number): AsyncGenerator<Action[]> {
  const size = Math.max(1, sliceSize);
  if (input.distribution.spec.writePolicy === 'strict' || input.namespaces.length <= size) {
    yield planDistribution(input);
    return;
  }
  const infos = new Map(input.namespaces.map((ns) => [ns.name, ns]));
  const names = everyName(input);
  for (let start = 0; start < names.length; start += size) {
    if (start > 0) await nextTurn();
    const slice = names.slice(start, start + size);
    const namespaces = slice.flatMap((name) => infos.get(name) ?? []);
    const existing = new Map(slice.flatMap((name) => {
      const object = input.existing.get(name);
      return object === undefined ? [] : [[name, object] as const];
    }));
    yield planDistribution({ ...input, namespaces, existing, within: new Set(slice) });
  }
}


/** How long a pass's steps may hold the event loop before they give it a turn. */
const PASS_SLICE_MS = 2;

/**
 * Steps run in slices, with a turn of the event loop between two slices (the other passes, the
 * webhooks and the watches go on meanwhile); work that fits one slice takes no turn.
 */
export async function inTurns<T>(steps: Steps<T>): Promise<T> {
  return loopSlices(PASS_SLICE_MS, () => performance.now()).run(steps);
}
